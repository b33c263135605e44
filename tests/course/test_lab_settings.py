"""`make lab` opens a JupyterLab that asks nothing at start: no "official Jupyter news" pop-up.

The Makefile copies ``forgelab/data/jupyterlab-overrides.json`` into the venv's
``share/jupyter/lab/settings/overrides.d/`` — defaults for this JupyterLab only, never the learner's
own settings. These tests prove the file names a real setting of the installed JupyterLab with a valid
value, and that the JupyterLab `make lab` starts serves it as the default.
"""

from __future__ import annotations

import json
import sys
import urllib.request
from pathlib import Path

import pytest
from make_lab import running_make_lab

ROOT = Path(__file__).resolve().parents[2]
OVERRIDES = ROOT / "forgelab" / "data" / "jupyterlab-overrides.json"
NOTIFICATION = "@jupyterlab/apputils-extension:notification"
# `make lab` with the course's venv rewrites that venv's overrides.d (an English lab removes the Chinese locale
# default): one such JupyterLab at a time, in the xdist group of the other modules that start one on this venv
pytestmark = pytest.mark.xdist_group("make-lab")


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


@pytest.mark.slow
def test_make_lab_serves_news_off_as_the_default(tmp_path: Path) -> None:
    if not (ROOT / ".venv" / "bin" / "jupyter").is_file():
        pytest.skip("needs the workbook's .venv (make install)")
    # -o: never reinstall here, even if pyproject.toml is newer than the install stamp
    with running_make_lab(ROOT, tmp_path, ["-o", ".venv/.forge-workbook-installed"]) as lab:
        assert lab.start_path == "lab/tree/notebooks/00-opening.ipynb"
        with urllib.request.urlopen(lab.url(f"lab/api/settings/{NOTIFICATION}"), timeout=30) as response:
            setting = json.loads(response.read())
        assert setting["schema"]["properties"]["fetchNews"]["default"] == "false"
        assert setting["schema"]["properties"]["checkForUpdates"]["default"] is False
        assert setting["raw"] in ("{}", "")  # nothing was written into the user's own settings
    assert not (tmp_path / "user-settings" / "@jupyterlab").exists()


@pytest.mark.slow
def test_each_workbook_keeps_its_own_jupyterlab_workspace(tmp_path: Path) -> None:
    """The tabs JupyterLab reopens are saved inside the workbook's own venv, not in ~/.jupyter: the English and
    the Chinese bundle (two folders, two venvs) never reopen each other's notebooks."""
    import uuid

    if not (ROOT / ".venv" / "bin" / "jupyter").is_file():
        pytest.skip("needs the workbook's .venv (make install)")
    name = f"forge-workbook-test-{uuid.uuid4().hex[:8]}"
    saved = ROOT / ".venv" / "share" / "jupyter" / "lab" / "workspaces"
    try:
        with running_make_lab(ROOT, tmp_path, ["-o", ".venv/.forge-workbook-installed"]) as lab:
            body = json.dumps({"data": {"layout-restorer:data": {}}, "metadata": {"id": name}}).encode()
            request = urllib.request.Request(lab.url(f"lab/api/workspaces/{name}"), data=body, method="PUT",
                                             headers={"Content-Type": "application/json"})
            urllib.request.urlopen(request, timeout=30).close()
        written = [path.name for path in saved.glob("*.jupyterlab-workspace") if name in path.read_text(encoding="utf-8")]
        assert written, f"no workspace saved in {saved}"
        elsewhere = tmp_path / "workspaces"  # what JUPYTERLAB_WORKSPACES_DIR names: the machine's usual place
        assert not elsewhere.is_dir() or not list(elsewhere.iterdir())
    finally:
        for path in saved.glob("*.jupyterlab-workspace"):
            if name in path.read_text(encoding="utf-8"):
                path.unlink()
