"""`make lab` started the way a learner starts it, for the tests that drive the JupyterLab it serves.

:func:`running_make_lab` runs ``make lab`` with Jupyter's folders under ``home`` (nothing of the machine's own
Jupyter settings is read or written), reads its output on a thread (no read blocks past the deadline, and the
server never stalls on a full pipe), asks for port 0 and takes the port from the URL it prints (JupyterLab picks
its own port: nothing is guessed free in advance, see tests/course/ports.py), waits for the server to
answer, and stops the whole process group afterwards.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conftest import OutputLines, wait_for_http, wait_until

START_S = 300  # make lab on two busy cores: the URL and the first answer


@dataclass(frozen=True)
class RunningLab:
    base: str  # http://127.0.0.1:PORT/
    start_path: str  # what make lab opens, e.g. lab/tree/notebooks/00-opening.ipynb
    token: str
    output: OutputLines | None = field(default=None, compare=False, repr=False)  # what make lab printed so far

    def said(self, count: int = 40) -> str:
        """The last ``count`` lines make lab and its JupyterLab printed (for a failing assertion's message)."""
        return self.output.tail(count) if self.output is not None else "(not recorded)"

    def url(self, path: str) -> str:
        return f"{self.base}{path}?token={self.token}"

    def api(self, path: str) -> Any:
        with urllib.request.urlopen(self.url(f"api/{path}"), timeout=30) as response:
            return json.loads(response.read())

    def kernel(self, notebook: str) -> dict[str, Any] | None:
        """The kernel the server runs for ``notebook``'s session (None: no session yet)."""
        for session in self.api("sessions"):
            if session.get("path") == notebook and session.get("kernel"):
                return dict(session["kernel"])
        return None

    def wait_kernel_idle(self, notebook: str, timeout: float) -> None:
        """Until the kernel of ``notebook`` has started, the page is connected to it and it is idle — the server's
        word (its REST API), not a widget's: the notebook's indicator shows "idle" before any kernel exists."""
        seen: list[Any] = []

        def ready() -> bool:
            kernel = self.kernel(notebook)
            seen[:] = [kernel]
            return kernel is not None and kernel["execution_state"] == "idle" and kernel["connections"] >= 1

        try:
            wait_until(ready, timeout=timeout, what=f"the kernel of {notebook} to be idle", every=1.0)
        except AssertionError as error:
            raise AssertionError(f"{error}; the server's last word on it: {seen[0] if seen else None}; "
                                 f"its sessions: {self.api('sessions')}") from None


@contextmanager
def running_make_lab(cwd: Path, home: Path, make_args: Sequence[str] = ()) -> Iterator[RunningLab]:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "FORGELAB_"))},
           "JUPYTER_CONFIG_DIR": str(home / "config"), "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
           "JUPYTERLAB_SETTINGS_DIR": str(home / "user-settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"), "BROWSER": "true"}
    command = ["make", "--no-print-directory", *make_args, "lab", "PORT=0"]  # JupyterLab picks its port and prints it
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, start_new_session=True)
    assert process.stdout is not None
    output = OutputLines(process.stdout)
    try:
        found = output.wait_for(r"(http://127\.0\.0\.1:\d+/)(\S*)\?token=(\w+)", timeout=START_S)
        lab = RunningLab(found.group(1), found.group(2), found.group(3), output)
        wait_for_http(lab.url("api/status"), timeout=START_S, process=process)
        yield lab
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
        output.close()
