"""A real JupyterHub on 127.0.0.1 for the hub tests: configurable-http-proxy, DummyAuthenticator, the course service.

:class:`RunningHub` starts ``forgelab hub`` (through ``conftest.start_cli``) on ports chosen free by the test, with
an admin token for the test (to make users and their tokens), and knows where the course service keeps its data.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import ROOT, OutputLines, start_cli, wait_for_http, wait_until
from ports import config_ports

PROXY = ROOT / "node_modules" / ".bin" / "configurable-http-proxy"
SERVICE = "forge-course"


def need_hub() -> None:
    try:
        import jupyterhub  # noqa: F401
    except ImportError:
        pytest.skip("jupyterhub is not installed (pip install -e '.[dev]')")
    if not PROXY.exists():
        pytest.skip("configurable-http-proxy is not installed: npm install (in the repository)")


def workbook_zip(text: str = "VALUE = 1\n", extra: dict[str, bytes] | None = None) -> bytes:
    """A small submission as `forgelab submit` packs it: forge/, transfer/, evidence/."""
    buffer = io.BytesIO()
    entries = {"forge/__init__.py": b"", "forge/instructions.py": text.encode(),
               "transfer/test_transfer_01.py": b"def test_x():\n    assert True\n", "evidence/README.md": b"evidence\n",
               **(extra or {})}
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in entries.items():
            archive.writestr(zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0)), data)  # the same bytes each time
    return buffer.getvalue()


@dataclass
class RunningHub:
    state: Path
    port: int
    hub_port: int
    service_port: int
    admin_token: str
    process: subprocess.Popen[str]
    output: OutputLines
    tokens: dict[str, str] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    @property
    def service_url(self) -> str:  # the address learners' servers use (FORGELAB_COURSE_URL)
        return f"http://127.0.0.1:{self.service_port}/services/{SERVICE}/"

    @property
    def data(self) -> Path:
        return self.state / "course"

    def api(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        response = httpx.request(method, f"http://127.0.0.1:{self.hub_port}/hub/api/{path}",
                                 headers={"Authorization": f"token {self.admin_token}"}, timeout=60, **kwargs)
        response.raise_for_status()
        return response

    def token(self, user: str, scopes: list[str] | None = None) -> str:
        """A new API token of ``user`` (the user is made if needed); ``scopes`` None: the user's own permissions."""
        if user not in self.tokens or scopes is not None:
            exists = httpx.get(f"http://127.0.0.1:{self.hub_port}/hub/api/users/{user}",
                               headers={"Authorization": f"token {self.admin_token}"}, timeout=60)
            if exists.status_code == 404:
                self.api("POST", f"users/{user}")
            body: dict[str, Any] = {"note": "forgelab hub test"}
            if scopes is not None:
                body["scopes"] = scopes
            made = self.api("POST", f"users/{user}/tokens", json=body).json()["token"]
            if scopes is not None:
                return str(made)
            self.tokens[user] = made
        return self.tokens[user]

    def as_user(self, user: str) -> httpx.Client:
        return httpx.Client(base_url=self.service_url, headers={"Authorization": f"token {self.token(user)}"},
                            timeout=60)

    def service_pid(self) -> int:
        return int((self.data / "service.pid").read_text())

    def wait_for_service(self, not_pid: int | None = None) -> None:
        def up() -> bool:
            if not_pid is not None and self.service_pid() == not_pid:
                return False
            return httpx.get(self.service_url + "api/health", timeout=5).status_code == 200

        wait_until(up, timeout=120, what="the course service", gave_up=lambda: None if self.process.poll() is None
                   else f"the hub exited:\n{self.output.tail()}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self.output.close()
        for pidfile in ("proxy.pid",):  # a proxy left behind by a hub that was killed
            path = self.state / pidfile
            if path.exists():
                try:
                    os.kill(int(path.read_text()), signal.SIGTERM)
                except (OSError, ValueError):
                    pass


def start_hub(state: Path, bundle: Path, *, instructors: tuple[str, ...] = ("teacher",), max_upload: int = 0,
              ports: list[int] | None = None, language: str = "en") -> RunningHub:
    """The class hub, answering on its public URL; its four ports from :func:`ports.config_ports` unless given (the
    hub, its proxy and its service cannot pick their own: see ports.py). A failure to start shows the hub's output."""
    need_hub()
    port, hub_port, proxy_port, service_port = ports or config_ports(4)
    token_file = state.parent / f"{state.name}-admin-token"
    args = ["hub", "--state", str(state), "--bundle", str(bundle), "--port", str(port), "--hub-port", str(hub_port),
            "--proxy-api-port", str(proxy_port), "--service-port", str(service_port), "--auth", "dummy",
            "--proxy", str(PROXY), "--admin-token-file", str(token_file)]
    for name in instructors:
        args += ["--instructor", name]
    if max_upload:
        args += ["--max-upload", str(max_upload)]
    process = start_cli(ROOT, *args, env={"FORGE_LANG": language}, stderr=subprocess.STDOUT)
    assert process.stdout is not None
    output = OutputLines(process.stdout)
    hub = RunningHub(state, port, hub_port, service_port, "", process, output)
    try:
        wait_until(lambda: token_file.exists() and token_file.read_text(), timeout=60, what="the hub's admin token",
                   gave_up=lambda: None if process.poll() is None else output.tail())
        hub.admin_token = token_file.read_text()
        wait_for_http(f"http://127.0.0.1:{hub_port}/hub/api/", timeout=120, process=process)
        hub.wait_for_service()
        # the hub answers on its own port before it has given the proxy its routes: a browser sent to the public URL
        # then gets the proxy's 404 page ("JupyterHub is now running" comes after the routes)
        wait_for_http(f"{hub.url}hub/api/", timeout=120, process=process)
    except AssertionError as failed:
        hub.stop()
        raise AssertionError(f"{failed}\nthe hub's last output:\n{output.tail()}") from None
    except BaseException:
        hub.stop()
        raise
    return hub


def receipts_of(hub: RunningHub, user: str) -> list[dict[str, Any]]:
    with hub.as_user(user) as client:
        response = client.get("api/submissions")
        response.raise_for_status()
        return list(json.loads(response.content)["submissions"])
