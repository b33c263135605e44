"""`forgelab release`: the learner bundle is reproducible, complete, runs, and reveals no reference solution."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from browser import ROOT

from forgelab.registry import load_course
from forgelab.site.release import BUNDLE_NAME, build_bundle

PREFIX = f"{BUNDLE_NAME}/"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_bundle(ROOT, tmp_path_factory.mktemp("release")).path


@pytest.fixture(scope="module")
def contents(bundle: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(bundle) as archive:
        return {info.filename.removeprefix(PREFIX): archive.read(info) for info in archive.infolist()}


@pytest.fixture(scope="module")
def unzipped(bundle: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("unzipped")
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(target)
    return target / BUNDLE_NAME


# ---------------------------------------------------------------- the zip itself


def test_the_bundle_is_reproducible(bundle: Path, tmp_path: Path) -> None:
    assert build_bundle(ROOT, tmp_path).path.read_bytes() == bundle.read_bytes()


def test_entries_are_sorted_in_one_folder_with_fixed_times_and_modes(bundle: Path) -> None:
    with zipfile.ZipFile(bundle) as archive:
        infos = archive.infolist()
    names = [info.filename for info in infos]
    assert names == sorted(names)
    assert all(name.startswith(PREFIX) for name in names)
    assert {info.date_time for info in infos} == {(1980, 1, 1, 0, 0, 0)}
    assert {info.external_attr >> 16 for info in infos} == {0o100644}


def test_it_holds_what_a_learner_needs(contents: dict[str, bytes]) -> None:
    course = load_course(ROOT)
    needed = {"forge/__init__.py", "course/course.toml", "pyproject.toml", ".gitignore", "forgelab/cli.py",
              "forgelab/data/verification.schema.json", "forgelab/site/assets/verify.js"}
    needed |= {name for name in ("Makefile", "README.md") if (ROOT / name).is_file()}
    for stage in course.stages:
        needed |= {stage.module, stage.test_file, stage.transfer_file, f"course/stages/{stage.key}/stage.toml"}
        needed |= {p.relative_to(ROOT).as_posix() for p in (ROOT / stage.failure_lab).rglob("*") if p.is_file()}
    needed |= {p.relative_to(ROOT).as_posix() for p in (ROOT / "notebooks").glob("*.ipynb")}
    assert needed - set(contents) == set()
    assert not any("__pycache__" in name or name.endswith(".pyc") for name in contents)


def test_notebook_outputs_are_cleared(contents: dict[str, bytes]) -> None:
    notebooks = [name for name in contents if name.endswith(".ipynb")]
    assert len(notebooks) == len(list((ROOT / "notebooks").glob("*.ipynb")))
    for name in notebooks:
        notebook = json.loads(contents[name])
        for cell in notebook["cells"]:
            if cell["cell_type"] == "code":
                assert cell["outputs"] == [] and cell["execution_count"] is None, name
        assert "kernelspec" in notebook["metadata"]  # JupyterLab still opens it without asking


# ---------------------------------------------------------------- no reference solution


def _bodies(source: str) -> dict[str, str]:
    """Function name → ast.dump of its body without the docstring (formatting-independent)."""
    found: dict[str, str] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
                body = body[1:]
            found[node.name] = ast.dump(ast.Module(body=body, type_ignores=[]))
    return found


def _code_of(name: str, data: bytes) -> list[str]:
    """Python sources inside one bundle file (a module, or a notebook's code cells)."""
    text = data.decode("utf-8", errors="replace")
    if name.endswith(".py"):
        return [text]
    if name.endswith(".ipynb"):
        cells = json.loads(text)["cells"]
        sources = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in cells]
        return ["\n".join(line for line in s.splitlines() if not line.lstrip().startswith(("%", "!"))) for s in sources]
    return [text]


def _secret_bodies() -> list[tuple[str, str, str, str]]:
    """(solution file, function, body dump, normalized body text) the learner must write themselves."""
    secrets = []
    for path in sorted((ROOT / "solutions").rglob("*.py")):
        relative = path.relative_to(ROOT / "solutions")
        starter = ROOT / relative
        given = _bodies(starter.read_text(encoding="utf-8")) if starter.is_file() else {}
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                dump = _bodies(ast.get_source_segment(source, node) or "")[node.name]
                if given.get(node.name) == dump:
                    continue  # given to the learner in the starter
                body = node.body[1:] if isinstance(node.body[0], ast.Expr) and len(node.body) > 1 else node.body
                text = " ".join(" ".join(ast.get_source_segment(source, s) or "" for s in body).split())
                secrets.append((relative.as_posix(), node.name, dump, text))
    return secrets


def _fault_lab_of(module: str, bundle_path: str) -> bool:
    """A fault lab is the reference module with one planted defect: it ships the functions it leaves intact."""
    return bool(re.fullmatch(r"failure_labs/[^/]+/" + re.escape(module), bundle_path))


def test_no_file_of_solutions_is_inside(contents: dict[str, bytes]) -> None:
    assert [name for name in contents if name.startswith("solutions/") or "/solutions/" in name] == []
    assert [name for name in contents if name.endswith("mutants.toml")] == []
    solution_files = {p.read_bytes() for p in (ROOT / "solutions").rglob("*") if p.is_file()}
    assert [name for name, data in contents.items() if data in solution_files] == []


def test_no_reference_function_body_is_inside(contents: dict[str, bytes]) -> None:
    secrets = _secret_bodies()
    assert secrets, "no reference function found: is solutions/ empty?"
    leaks = []
    for name, data in sorted(contents.items()):
        if not name.endswith((".py", ".ipynb", ".md", ".toml", ".txt", ".json", ".cfg", ".ini")):
            continue
        dumps: set[str] = set()
        for code in _code_of(name, data):
            try:
                dumps |= set(_bodies(code).values())
            except SyntaxError:
                pass
        flat = " ".join(data.decode("utf-8", errors="replace").split())
        if name.endswith(".ipynb"):
            flat = " ".join(" ".join(_code_of(name, data)).split()) + " " + flat
        for module, function, dump, text in secrets:
            if _fault_lab_of(module, name):
                continue
            if dump in dumps or (len(text) >= 20 and text in flat):
                leaks.append(f"{module}:{function}() in {name}")
    assert leaks == []


def test_no_reference_design_answer_is_inside(contents: dict[str, bytes]) -> None:
    texts = {name: " ".join(data.decode("utf-8", errors="replace").split()) for name, data in contents.items()}
    for answer in sorted((ROOT / "solutions" / "answers").glob("*.md")):
        for paragraph in answer.read_text(encoding="utf-8").split("\n\n"):
            flat = " ".join(paragraph.split())
            if len(flat) >= 60:
                assert not [name for name, text in texts.items() if flat in text], answer.name


# ---------------------------------------------------------------- the guard in `forgelab release`


def _reference_function(name: str) -> str:
    source = (ROOT / "solutions" / "forge" / "instructions.py").read_text(encoding="utf-8")
    node = next(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef) and n.name == name)
    return ast.get_source_segment(source, node) or ""


def test_release_refuses_to_ship_a_reference_body(workbook, tmp_path: Path) -> None:  # noqa: ANN001
    demo = workbook.root / "course" / "stages" / "01-instruction-hierarchy" / "demo.py"
    demo.write_text(demo.read_text(encoding="utf-8") + "\n\n# %%\n" + _reference_function("explain") + "\n",
                    encoding="utf-8")
    done = workbook.run("release", "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    assert "would reveal a reference solution" in done.stderr
    assert "body of explain()" in done.stderr and "course/stages/01-instruction-hierarchy/demo.py" in done.stderr
    assert not (tmp_path / "out" / f"{BUNDLE_NAME}.zip").exists()


def test_a_notebook_output_with_the_solution_is_cleared_not_shipped(workbook, tmp_path: Path) -> None:  # noqa: ANN001
    body = _reference_function("explain")
    notebook = {"cells": [{"cell_type": "code", "execution_count": 3, "metadata": {}, "source": ["print(solution)"],
                           "outputs": [{"name": "stdout", "output_type": "stream", "text": [body]}]}],
                "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
                "nbformat": 4, "nbformat_minor": 5}
    workbook.write("notebooks/99-extra.ipynb", json.dumps(notebook))
    done = workbook.run("release", "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    with zipfile.ZipFile(tmp_path / "out" / f"{BUNDLE_NAME}.zip") as archive:
        shipped = json.loads(archive.read(f"{PREFIX}notebooks/99-extra.ipynb"))
    assert shipped["cells"][0]["outputs"] == [] and shipped["cells"][0]["execution_count"] is None


def test_release_command_reports_what_it_built(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FORGELAB_")}
    env["FORGELAB_ROOT"] = str(ROOT)
    done = subprocess.run([sys.executable, "-m", "forgelab.cli", "release", "--out", str(tmp_path)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert f"{BUNDLE_NAME}.zip" in done.stdout and "no file of solutions/" in done.stdout
    assert "make lab" in done.stdout and "forgelab check 01" in done.stdout


# ---------------------------------------------------------------- the bundle works


def _in_bundle(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the bundle's own forgelab with this venv's python (no install: PYTHONPATH points into it)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FORGELAB_", "PYTEST_", "PYTHON"))}
    env.update(PYTHONPATH=str(root), FORGELAB_ROOT=str(root), FORGELAB_WIDTH="200")
    return subprocess.run([sys.executable, *args], cwd=root, env=env, capture_output=True, text=True, timeout=120)


def test_the_bundle_imports_its_own_packages(unzipped: Path) -> None:
    done = _in_bundle(unzipped, "-c", "import forge, forgelab; print(forge.__file__); print(forgelab.__file__)")
    assert done.returncode == 0, done.stderr
    for line in done.stdout.split():
        assert Path(line).resolve().is_relative_to(unzipped.resolve()), line


def test_forgelab_check_runs_in_the_bundle(unzipped: Path, verification_validator) -> None:  # noqa: ANN001
    done = _in_bundle(unzipped, "-m", "forgelab.cli", "check", "01")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "test_lower_trust_instruction_cannot_override_system" in done.stdout
    assert "required tests: " in done.stdout and "NOT ACCEPTED" in done.stdout
    written = unzipped / "evidence" / "prompt-context-output" / "01-instruction-hierarchy" / "verification.json"
    document = json.loads(written.read_text(encoding="utf-8"))
    verification_validator(document)
    assert document["target"]["kind"] == "learner"


def test_reference_targets_fail_clearly_in_the_bundle(unzipped: Path) -> None:
    done = _in_bundle(unzipped, "-m", "forgelab.cli", "check", "01", "--target", "solution")
    assert done.returncode == 2
    assert "not part of the learner bundle" in done.stderr
