"""The learner bundle shows the worked demonstrations working before the learner codes: the demo cells
keep the reference outputs (marked as such in the notebook), everything else is cleared, and no
reference function body can ride along in an output."""

from __future__ import annotations

import ast
import io
import json
import zipfile
from pathlib import Path

import pytest

from git_workbook import commit_all, git_workbook
from released import released_course, released_zip

from forgelab.authoring.build import GRADED, REFERENCE_OUTPUT_NOTE, WIDGET
from forgelab.core.registry import load_course
from forgelab.authoring.release.bundle import BUNDLE_NAME

ROOT = Path(__file__).resolve().parents[2]


def _zip(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {name.removeprefix(f"{BUNDLE_NAME}/"): archive.read(name) for name in archive.namelist()}


# The repository and its bundle are the run's shared ones (released.py), made once whichever worker asks first.


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, bytes]]:
    """The clone the shared bundle was released from (only read here) and that bundle's files (released.py)."""
    return released_course(tmp_path_factory), _zip(released_zip(tmp_path_factory))


def _is_demo(cell: dict) -> bool:  # type: ignore[type-arg]
    source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
    return cell["cell_type"] == "code" and GRADED in cell["metadata"].get("tags", []) and not source.startswith("lab.")


def test_every_stage_notebook_in_the_bundle_keeps_its_demo_outputs(shipped: tuple[Path, dict[str, bytes]]) -> None:
    repo, contents = shipped
    for stage in load_course(repo).stages:
        committed = json.loads((repo / stage.notebook).read_text(encoding="utf-8"))
        bundled = json.loads(contents[stage.notebook])
        assert len(committed["cells"]) == len(bundled["cells"])
        demos = 0
        for before, after in zip(committed["cells"], bundled["cells"]):
            if after["cell_type"] != "code":
                continue
            if _is_demo(after):
                demos += 1
                assert after["outputs"] and after["outputs"] == before["outputs"], \
                    f"{stage.notebook}: a demo cell lost its reference output"
            else:
                assert after["outputs"] == [] and after["execution_count"] is None, \
                    f"{stage.notebook}: `{''.join(after['source'])[:40]}` keeps an output"
        assert demos >= 2, f"{stage.notebook}: the worked demonstration has too few cells"
        part5 = next("".join(c["source"]) for c in bundled["cells"] if "".join(c["source"]).startswith("## 5 ·"))
        assert REFERENCE_OUTPUT_NOTE.format(module=stage.module) in part5


def test_tool_and_widget_cells_are_cleared_in_the_bundle(shipped: tuple[Path, dict[str, bytes]]) -> None:
    _, contents = shipped
    for name, data in contents.items():
        if not name.endswith(".ipynb"):
            continue
        for cell in json.loads(data)["cells"]:
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            if cell["cell_type"] == "code" and (source.startswith("lab.") or WIDGET in cell["metadata"].get("tags", [])):
                assert cell["outputs"] == [], f"{name}: `{source[:30]}` ships an output"


def test_a_reference_body_in_a_demo_output_is_refused(tmp_path: Path) -> None:
    clone = git_workbook(tmp_path / "course")
    source = (clone.root / "solutions/forge/instructions.py").read_text(encoding="utf-8")
    function = next(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef) and n.name == "explain")
    body = ast.get_source_segment(source, function) or ""
    notebook = {"cells": [{"cell_type": "code", "execution_count": 3, "metadata": {"tags": [GRADED]},
                           "source": ["print(inspect.getsource(explain))"],
                           "outputs": [{"name": "stdout", "output_type": "stream", "text": [body]}]}],
                "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
                "nbformat": 4, "nbformat_minor": 5}
    clone.write("notebooks/99-extra.ipynb", json.dumps(notebook))
    commit_all(clone.root, "a demo output that shows a reference body")
    done = clone.run("release", "--out", str(tmp_path / "out"))
    assert done.returncode != 0
    assert "notebooks/99-extra.ipynb" in done.output and "explain" in done.output
    assert not (tmp_path / "out" / f"{BUNDLE_NAME}.zip").exists()


def test_the_unzipped_bundle_shows_reference_output_in_jupyter_terms(shipped: tuple[Path, dict[str, bytes]]) -> None:
    import nbformat

    _, contents = shipped
    notebook = nbformat.read(io.StringIO(contents["notebooks/01-instruction-hierarchy.ipynb"].decode("utf-8")), as_version=4)
    nbformat.validate(notebook)
    printed = "".join(o.get("text", "") for c in notebook.cells if c.cell_type == "code" for o in c.outputs)
    assert "accepted: {'write': 'deny'" in printed


def test_the_bundle_ships_every_image_its_notebooks_show(shipped: tuple[Path, dict[str, bytes]]) -> None:
    import posixpath
    import re

    _, contents = shipped
    shown = 0
    for name, data in contents.items():
        if not name.endswith(".ipynb"):
            continue
        for cell in json.loads(data)["cells"]:
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            for target in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", source) if cell["cell_type"] == "markdown" else []:
                shown += 1
                path = posixpath.normpath(posixpath.join(posixpath.dirname(name), target))
                assert path in contents, f"{name} shows {target}, which the bundle does not ship"
                assert contents[path].lstrip().startswith(b"<svg")
    assert shown >= 3  # the plots of stages 02, 07 and 10
