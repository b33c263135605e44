"""The JupyterHub configuration of a class on one machine (``make hub``, ``forgelab hub``).

``forgelab hub`` writes :class:`HubPlan` to ``STATE/hub-plan.json`` and a two-line ``jupyterhub_config.py`` that
calls :func:`configure` with it, then starts ``jupyterhub``. What it sets up:

* the hub on ``127.0.0.1`` (its public port, the proxy's API port and the hub's own port chosen by the plan), SQLite
  (``STATE/jupyterhub.sqlite``), the configurable-http-proxy of the plan (installed from npm by ``make hub``);
* accounts: NativeAuthenticator (learners sign up; an instructor approves each at ``/hub/authorize``) or, for tests,
  DummyAuthenticator; the instructors are admins and the hub group ``instructors``;
* each learner's own workbook, made from the released bundle on their first sign-in (a ``pre_spawn_hook``: the
  bundle is unpacked into a temporary folder in their home and renamed into place, so a half-made copy never counts),
  opened in JupyterLab on the opening notebook of the course's edition (a zh course: ``notebooks/zh/…`` and
  JupyterLab in Chinese);
* the course service (:mod:`forgelab.hub.service`), managed by the hub (restarted if it dies), reached by learners'
  servers at its own address and by browsers through the proxy; roles give every user and every server's token the
  scope ``access:services!service=forge-course`` and nothing more.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

SERVICE = "forge-course"
WORKBOOK = "forge-workbook"
PLAN = "hub-plan.json"


class HubPlan(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    state: str  # the hub's folder: its database, the course service's data, the learners' homes
    bundle: str  # the released bundle (forge-workbook-lab.zip or -zh.zip)
    language: str  # "en" | "zh": the edition
    port: int  # the public port (the proxy), on 127.0.0.1
    hub_port: int
    proxy_api_port: int
    service_port: int
    authenticator: str  # "native" | "dummy"
    instructors: list[str]
    proxy: str  # the configurable-http-proxy command
    python: str  # the venv's python (the service and the learners' servers run with it)
    admin_token: str = ""  # a token with admin rights for automation (tests); empty: none
    max_upload: int = 0  # the service's cap on one upload in bytes; 0: grading's (forgelab.core.submission)
    course: str = ""  # the course repository the instructors' page grades in ("": that page cannot grade)


def homes(plan: HubPlan) -> Path:
    return Path(plan.state) / "homes"


def workbook_of(plan: HubPlan, user: str) -> Path:
    return homes(plan) / user / WORKBOOK


def give_workbook(bundle: Path, home: Path) -> Path:
    """The learner's own workbook in ``home``: unpacked from the bundle the first time, left alone afterwards."""
    target = home / WORKBOOK
    if target.is_dir():
        return target
    home.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".workbook-", dir=home))
    try:
        with zipfile.ZipFile(bundle) as archive:
            archive.extractall(scratch)
        tops = [entry for entry in scratch.iterdir()]
        made = tops[0] if len(tops) == 1 and tops[0].is_dir() and not (scratch / "forge").is_dir() else scratch
        os.replace(made, target)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return target


def opening_notebook(plan: HubPlan) -> str:
    return "notebooks/zh/00-opening.ipynb" if plan.language == "zh" else "notebooks/00-opening.ipynb"


def configure(c: Any, plan: HubPlan) -> None:
    """Fill JupyterHub's configuration object ``c`` from the plan."""
    state = Path(plan.state)
    c.JupyterHub.ip = "127.0.0.1"
    c.JupyterHub.port = plan.port
    c.JupyterHub.hub_ip = "127.0.0.1"
    c.JupyterHub.hub_port = plan.hub_port
    c.JupyterHub.db_url = f"sqlite:///{state / 'jupyterhub.sqlite'}"
    c.JupyterHub.cookie_secret_file = str(state / "jupyterhub_cookie_secret")
    c.JupyterHub.pid_file = str(state / "jupyterhub.pid")
    c.ConfigurableHTTPProxy.command = [plan.proxy]
    c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{plan.proxy_api_port}"
    c.ConfigurableHTTPProxy.pid_file = str(state / "proxy.pid")
    c.ConfigurableHTTPProxy.auth_token = _secret(state / "proxy-token")

    if plan.authenticator == "dummy":
        c.JupyterHub.authenticator_class = "dummy"
    else:
        c.JupyterHub.authenticator_class = "native"
        c.NativeAuthenticator.open_signup = False  # an instructor approves each sign-up at /hub/authorize
        c.NativeAuthenticator.minimum_password_length = 8
    c.Authenticator.allow_all = True  # every account the authenticator accepts (Native: approved ones)
    c.Authenticator.admin_users = set(plan.instructors)
    c.JupyterHub.load_groups = {"instructors": {"users": list(plan.instructors)}}

    access = f"access:services!service={SERVICE}"
    c.JupyterHub.load_roles = [
        {"name": "user", "scopes": ["self", access]},
        {"name": "server", "scopes": ["users:activity!user", "access:servers!server", access]},
    ]
    service_url = f"http://127.0.0.1:{plan.service_port}"
    environment = {"FORGELAB_COURSE_DATA": str(state / "course"), "FORGE_LANG": plan.language}
    if plan.max_upload:
        environment["FORGELAB_COURSE_MAX_UPLOAD"] = str(plan.max_upload)
    if plan.course:
        environment["FORGELAB_COURSE_REPO"] = plan.course
    services: list[dict[str, object]] = [{
        "name": SERVICE, "url": service_url, "command": [plan.python, "-m", "forgelab.hub.service"],
        "environment": environment, "oauth_no_confirm": True, "display": True,
        "oauth_client_allowed_scopes": [access],
    }]
    if plan.admin_token:
        services.append({"name": "forgelab-admin", "api_token": plan.admin_token})
        c.JupyterHub.load_roles.append({"name": "forgelab-admin", "scopes": ["admin:users", "admin:servers", "tokens",
                                                                             "admin:groups"],
                                        "services": ["forgelab-admin"]})
    c.JupyterHub.services = services

    c.JupyterHub.spawner_class = "simple"  # SimpleLocalProcessSpawner: one machine, one Unix user, a home each
    c.SimpleLocalProcessSpawner.home_dir_template = str(homes(plan) / "{username}")
    c.Spawner.cmd = [str(Path(plan.python).parent / "jupyterhub-singleuser")]
    c.Spawner.notebook_dir = str(homes(plan) / "{username}" / WORKBOOK)
    c.Spawner.default_url = f"/lab/tree/{opening_notebook(plan)}"
    # a terminal's bash is not a login shell: /etc/profile would put back a PATH without the course's tools
    c.Spawner.args = ["--ServerApp.terminado_settings=shell_command=/bin/bash",
                      *(["--allow-root"] if os.geteuid() == 0 else [])]
    c.Spawner.environment = {
        "FORGELAB_COURSE_URL": f"{service_url}/services/{SERVICE}/", "FORGE_LANG": plan.language,
        "PATH": f"{Path(plan.python).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        # `forgelab submit` (and every forgelab command) works on the learner's workbook from any folder
        "FORGELAB_ROOT": lambda spawner: str(workbook_of(plan, spawner.user.name)),
    }
    c.Spawner.http_timeout = 120
    c.Spawner.start_timeout = 120

    def pre_spawn_hook(spawner: Any) -> None:
        give_workbook(Path(plan.bundle), homes(plan) / spawner.user.name)

    c.Spawner.pre_spawn_hook = pre_spawn_hook


def _secret(path: Path) -> str:
    if not path.exists():
        path.write_text(os.urandom(32).hex(), encoding="utf-8")
        path.chmod(0o600)
    return path.read_text(encoding="utf-8").strip()


def config_text(plan_path: Path) -> str:
    """The ``jupyterhub_config.py`` that reads the plan."""
    return ("# written by `forgelab hub`: the configuration is forgelab.hub.hubconfig.configure with the plan beside it\n"
            "from pathlib import Path\n"
            "from forgelab.hub.hubconfig import HubPlan, configure\n\n"
            f"configure(c, HubPlan.model_validate_json(Path({str(plan_path)!r}).read_text()))  # noqa: F821\n")


def current_python() -> str:
    return sys.executable
