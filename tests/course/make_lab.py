"""`make lab` started the way a learner starts it, for the tests that drive the JupyterLab it serves.

:func:`running_make_lab` runs ``make lab`` on a free port with Jupyter's folders under ``home`` (nothing
of the machine's own Jupyter settings is read or written), waits for the URL it prints and for the
server to answer, and stops the whole process group afterwards.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

START_S = 120  # make lab on two busy cores: the URL and the first answer


@dataclass(frozen=True)
class RunningLab:
    base: str  # http://127.0.0.1:PORT/
    start_path: str  # what make lab opens, e.g. lab/tree/notebooks/00-opening.ipynb
    token: str

    def url(self, path: str) -> str:
        return f"{self.base}{path}?token={self.token}"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def running_make_lab(cwd: Path, home: Path, make_args: Sequence[str] = ()) -> Iterator[RunningLab]:
    port = free_port()
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "FORGELAB_"))},
           "JUPYTER_CONFIG_DIR": str(home / "config"), "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
           "JUPYTERLAB_SETTINGS_DIR": str(home / "user-settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"), "BROWSER": "true"}
    command = ["make", "--no-print-directory", *make_args, "lab", f"PORT={port}"]
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, start_new_session=True)
    try:
        assert process.stdout is not None
        found, seen, deadline = None, [], time.monotonic() + START_S
        while found is None and time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            seen.append(line)
            found = re.search(rf"(http://127\.0\.0\.1:{port}/)(\S*)\?token=(\w+)", line)
        assert found, "make lab printed no URL:\n" + "".join(seen[-20:])
        lab = RunningLab(found.group(1), found.group(2), found.group(3))
        while True:
            try:
                urllib.request.urlopen(lab.url("api/status"), timeout=10).close()
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.5)
        yield lab
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
