"""`make lab` opens a JupyterLab that asks nothing at start: no "official Jupyter news" pop-up.

The Makefile copies ``forgelab/data/jupyterlab-overrides.json`` into the venv's
``share/jupyter/lab/settings/overrides.d/`` — defaults for this JupyterLab only, never the learner's
own settings. These tests prove the file names a real setting of the installed JupyterLab with a valid
value, and that the JupyterLab `make lab` starts serves it as the default.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OVERRIDES = ROOT / "forgelab" / "data" / "jupyterlab-overrides.json"
NOTIFICATION = "@jupyterlab/apputils-extension:notification"


def _schema(setting_id: str) -> dict:
    package, plugin = setting_id.split(":")
    path = Path(sys.prefix) / "share" / "jupyter" / "lab" / "schemas" / package / f"{plugin}.json"
    assert path.is_file(), f"the installed JupyterLab has no setting {setting_id} ({path})"
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_overrides_name_real_settings_with_valid_values() -> None:
    import jsonschema

    overrides = json.loads(OVERRIDES.read_text(encoding="utf-8"))
    assert overrides[NOTIFICATION]["fetchNews"] == "false"  # "Never": no question, no request
    for setting_id, values in overrides.items():
        schema = _schema(setting_id)
        for key, value in values.items():
            assert key in schema["properties"], f"{setting_id} has no field {key}"
            jsonschema.validate(value, schema["properties"][key])


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.slow
def test_make_lab_serves_news_off_as_the_default(tmp_path: Path) -> None:
    if not (ROOT / ".venv" / "bin" / "jupyter").is_file():
        pytest.skip("needs the workbook's .venv (make install)")
    port = _free_port()
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "FORGELAB_"))},
           "JUPYTER_CONFIG_DIR": str(tmp_path / "config"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
           "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "user-settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"), "BROWSER": "true"}
    # -o: never reinstall here, even if pyproject.toml is newer than the install stamp
    command = ["make", "--no-print-directory", "-o", ".venv/.forge-workbook-installed", "lab", f"PORT={port}"]
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, start_new_session=True)
    try:
        assert process.stdout is not None
        url, seen, deadline = None, [], time.monotonic() + 120
        while url is None and time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            seen.append(line)
            found = re.search(rf"http://127\.0\.0\.1:{port}/lab/tree/notebooks/00-opening\.ipynb\?token=(\w+)", line)
            url = found and found.group(1)
        assert url, "make lab printed no URL:\n" + "".join(seen[-20:])
        api = f"http://127.0.0.1:{port}/lab/api/settings/{NOTIFICATION}?token={url}"
        setting = None
        while setting is None:
            try:
                with urllib.request.urlopen(api, timeout=30) as response:
                    setting = json.loads(response.read())
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.5)
        assert setting["schema"]["properties"]["fetchNews"]["default"] == "false"
        assert setting["schema"]["properties"]["checkForUpdates"]["default"] is False
        assert setting["raw"] in ("{}", "")  # nothing was written into the user's own settings
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
    assert not (tmp_path / "user-settings" / "@jupyterlab").exists()
