"""`forgelab release`: the bundle is built from the committed course, is reproducible, complete, runs,
ships pristine starters, and reveals no reference solution — and its guard can fail.

Every bundle here is built from a temporary git clone of the course (``git_workbook``), never from
/work/main itself.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from conftest import CliResult, bundle_env, copy_workbook, run_cli
from git_workbook import commit_all, git, git_workbook
from released import released_course, released_report, released_zip

from forgelab.core.registry import Stage, load_course
from forgelab.authoring.release.bundle import BUNDLE_NAME, build_bundle

PREFIX = f"{BUNDLE_NAME}/"


def _read_zip(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {info.filename.removeprefix(PREFIX): archive.read(info) for info in archive.infolist()}


def _committed(root: Path) -> dict[str, bytes]:
    """Every file at the clone's HEAD (path -> bytes)."""
    files = {}
    for path in git(root, "ls-files", "-z").split("\0"):
        if path:
            files[path] = subprocess.run(["git", "show", f"HEAD:{path}"], cwd=root, capture_output=True,
                                         check=True, timeout=60).stdout
    return files


# The repository, the bundle and its zh twin are module fixtures: made once per run only if the module keeps to one
# xdist worker (make test runs --dist loadgroup).
pytestmark = pytest.mark.xdist_group("release")


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return released_course(tmp_path_factory)  # the clone the shared bundles come from (only read here)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return released_zip(tmp_path_factory)  # build_bundle on the working tree under test, shared with other modules


@pytest.fixture(scope="module")
def contents(bundle: Path) -> dict[str, bytes]:
    return _read_zip(bundle)


@pytest.fixture(scope="module")
def unzipped(bundle: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("unzipped")
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(target)
    return target / BUNDLE_NAME


# ---------------------------------------------------------------- the zip itself


def test_the_bundle_is_reproducible(repo: Path, bundle: Path, tmp_path: Path) -> None:
    """The same commit in another clone, released again (another run, another folder, other file dates), gives the
    same bytes as the shared bundle `forgelab release` wrote."""
    other = tmp_path / "other"
    git(repo.parent, "clone", "--quiet", str(repo), str(other))
    assert build_bundle(other, tmp_path / "other-out").path.read_bytes() == bundle.read_bytes()


def test_entries_are_sorted_in_one_folder_dated_by_the_commit_with_fixed_modes(repo: Path, bundle: Path) -> None:
    from forgelab.authoring.release.bundle import zip_date

    with zipfile.ZipFile(bundle) as archive:
        infos = archive.infolist()
    names = [info.filename for info in infos]
    assert names == sorted(names)
    assert all(name.startswith(PREFIX) for name in names)
    committed_at = int(subprocess.run(["git", "show", "-s", "--format=%ct", "HEAD"], cwd=repo, capture_output=True,
                                      text=True, check=True).stdout)
    assert {info.date_time for info in infos} == {zip_date(committed_at)}  # when the course was committed
    assert zip_date(committed_at)[0] >= 2020 and zip_date(0) == (1980, 1, 1, 0, 0, 0)
    assert {info.external_attr >> 16 for info in infos} == {0o100644}


def test_it_holds_what_a_learner_needs(repo: Path, contents: dict[str, bytes]) -> None:
    course = load_course(repo)
    needed = {"forge/__init__.py", "course/course.toml", "pyproject.toml", ".gitignore", "forgelab/cli/main.py",
              "forgelab/data/verification.schema.json", "forgelab/site/assets/verify.js", "forgelab/core/starters.py"}
    needed |= {name for name in ("Makefile", "README.md") if (repo / name).is_file()}
    for stage in course.stages:
        needed |= {stage.module, stage.test_file, stage.transfer_file, f"course/stages/{stage.key}/stage.toml",
                   stage.sealed_lab, stage.seal_probes}  # the lab's module ships only sealed, with its probes
        needed |= {p.relative_to(repo).as_posix() for p in (repo / stage.failure_lab).rglob("*")
                   if p.is_file() and p != repo / stage.fault_variant}
    needed |= {p.relative_to(repo).as_posix() for p in (repo / "notebooks").glob("*.ipynb")}
    assert needed - set(contents) == set()
    assert not any("__pycache__" in name or name.endswith(".pyc") for name in contents)


def test_pristine_starters_are_shipped_as_course_data(repo: Path, contents: dict[str, bytes]) -> None:
    committed = _committed(repo)
    for folder in ("forge", "transfer"):
        expected = {f"course/starters/{path}": data for path, data in committed.items() if path.startswith(folder + "/")}
        shipped = {path: data for path, data in contents.items() if path.startswith(f"course/starters/{folder}/")}
        assert shipped == expected, folder
    assert "course/starters/forge/__init__.py" in contents
    assert any(path.startswith("course/starters/forge/project/") for path in contents)
    for stage in load_course(repo).stages:
        assert contents[f"course/starters/{stage.module}"] == contents[stage.module]
        assert contents[f"course/starters/{stage.transfer_file}"] == contents[stage.transfer_file]


def test_notebook_outputs_are_cleared(repo: Path, contents: dict[str, bytes]) -> None:
    """Every output is cleared except a worked demonstration's reference output (test_reference_outputs.py)."""
    from forgelab.authoring.release.contents import keeps_reference_output

    notebooks = [name for name in contents if name.endswith(".ipynb")]
    committed = [path for path in (repo / "notebooks").rglob("*.ipynb") if ".ipynb_checkpoints" not in path.parts]
    assert len(notebooks) == len(committed) == 24  # both editions: the opening and eleven stages each
    for name in notebooks:
        notebook = json.loads(contents[name])
        for cell in notebook["cells"]:
            if cell["cell_type"] == "code" and not keeps_reference_output(cell):
                assert cell["outputs"] == [] and cell["execution_count"] is None, name
        assert "kernelspec" in notebook["metadata"]  # JupyterLab still opens it without asking


# ---------------------------------------------------------------- no reference solution (an independent check)


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


def _secret_bodies(repo: Path) -> list[tuple[str, str, str, str]]:
    """(solution file, function, body dump, normalized body text) the learner must write themselves."""
    secrets = []
    for path in sorted((repo / "solutions").rglob("*.py")):
        relative = path.relative_to(repo / "solutions")
        if relative.parts[0] == "regression":  # each lab's example regression test is a shipped stage test, by design
            continue
        starter = repo / relative
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


def test_no_file_of_solutions_is_inside(repo: Path, contents: dict[str, bytes]) -> None:
    assert [name for name in contents if name.startswith("solutions/") or "/solutions/" in name] == []
    assert [name for name in contents if name.endswith("mutants.toml")] == []
    solution_files = {p.read_bytes() for p in (repo / "solutions").rglob("*") if p.is_file()}
    assert [name for name, data in contents.items() if data in solution_files] == []


def test_no_reference_function_body_is_inside(repo: Path, contents: dict[str, bytes]) -> None:
    secrets = _secret_bodies(repo)
    assert secrets, "no reference function found: is solutions/ empty?"
    assert any(module.startswith("transfer/") for module, *_ in secrets)
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
        for module, function, dump, text in secrets:  # a fault lab's module too: it ships only sealed
            if dump in dumps or (len(text) >= 20 and text in flat):
                leaks.append(f"{module}:{function}() in {name}")
    assert leaks == []


def test_no_reference_design_answer_is_inside(repo: Path, contents: dict[str, bytes]) -> None:
    texts = {name: " ".join(data.decode("utf-8", errors="replace").split()) for name, data in contents.items()}
    answers = sorted((repo / "solutions" / "answers").glob("*.md"))
    assert answers
    for answer in answers:
        for paragraph in answer.read_text(encoding="utf-8").split("\n\n"):
            flat = " ".join(paragraph.split())
            if len(flat) >= 60:
                assert not [name for name, text in texts.items() if flat in text], answer.name


# ---------------------------------------------------------------- built from HEAD, never from the working tree


@pytest.fixture
def clone(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A fresh git workbook to change and commit in (a test of its own may break it)."""
    return git_workbook(tmp_path / "course")


def _reference_function(root: Path, name: str, module: str = "instructions.py") -> ast.FunctionDef:
    source = (root / "solutions" / "forge" / module).read_text(encoding="utf-8")
    return next(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef) and n.name == name)


def _reference_source(root: Path, name: str, module: str = "instructions.py") -> str:
    source = (root / "solutions" / "forge" / module).read_text(encoding="utf-8")
    return ast.get_source_segment(source, _reference_function(root, name, module)) or ""


@pytest.fixture(scope="module")
def changed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A clone changed two ways and released once: a committed notebook whose output prints a reference body, and —
    after that commit — ``forgelab restore 03`` (the references in forge/), a finished transfer test and a new file,
    none of them committed. The two tests below read the one release (each change is its own part of the bundle)."""
    folder = tmp_path_factory.mktemp("changed")
    clone = git_workbook(folder / "course")
    root = clone.root
    body = _reference_source(root, "explain")
    notebook = {"cells": [{"cell_type": "code", "execution_count": 3, "metadata": {}, "source": ["print(solution)"],
                           "outputs": [{"name": "stdout", "output_type": "stream", "text": [body]}]}],
                "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
                "nbformat": 4, "nbformat_minor": 5}
    clone.write("notebooks/99-extra.ipynb", json.dumps(notebook))
    commit_all(root, "extra notebook")
    head = _committed(root)
    restored = clone.run("restore", "03", "--yes")
    assert restored.returncode == 0, restored.output
    for module in ("forge/instructions.py", "forge/context_selection.py"):
        assert (root / module).read_bytes() == (root / "solutions" / module).read_bytes()  # the references are in forge/
    solved = root / "transfer" / "test_01_instruction_hierarchy.py"
    shutil.copyfile(root / "solutions" / "transfer" / solved.name, solved)  # and a finished transfer test
    (root / "forge" / "scratch.py").write_text("print('not committed')\n", encoding="utf-8")
    done = clone.run("release", "--out", str(folder / "out"))
    assert done.returncode == 0, done.output
    return {"head": head, "done": done, "shipped": _read_zip(folder / "out" / f"{BUNDLE_NAME}.zip")}


def test_release_after_restore_still_ships_the_committed_starters(changed: dict[str, Any]) -> None:
    head, done, shipped = changed["head"], changed["done"], changed["shipped"]
    for path in [p for p in head if p.startswith(("forge/", "transfer/"))]:
        assert shipped[path] == head[path], path  # the starters as committed, not the restored references
        assert shipped[f"course/starters/{path}"] == head[path], path
    assert "forge/scratch.py" not in shipped and "course/starters/forge/scratch.py" not in shipped
    assert "forge/instructions.py (modified)" in done.stdout and "forge/scratch.py (untracked)" in done.stdout
    assert "built from: commit" in done.stdout


def _replace_function(source: str, name: str, replacement: str) -> str:
    node = next(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef) and n.name == name)
    lines = source.splitlines(keepends=True)
    return "".join(lines[:node.lineno - 1]) + replacement + "\n" + "".join(lines[node.end_lineno:])


def _refused(clone, tmp_path: Path) -> str:  # type: ignore[no-untyped-def]
    done = clone.run("release", "--out", str(tmp_path / "out"))
    assert done.returncode == 2, done.output
    assert "would reveal a reference solution" in done.stderr
    assert not (tmp_path / "out" / f"{BUNDLE_NAME}.zip").exists()
    return done.stderr


def test_a_reference_body_committed_into_its_starter_is_refused(clone, tmp_path: Path) -> None:  # noqa: ANN001
    starter = clone.root / "forge" / "instructions.py"
    leaked = _replace_function(starter.read_text(encoding="utf-8"), "explain", _reference_source(clone.root, "explain"))
    starter.write_text(leaked, encoding="utf-8")
    commit_all(clone.root, "oops: the reference explain() in the starter")
    stderr = _refused(clone, tmp_path)
    assert "solutions/forge/instructions.py: body of explain() appears in" in stderr
    assert re.search(r"appears in [^;]*\bforge/instructions\.py", stderr)
    assert "its starter body was `raise NotImplementedError` at" in stderr  # why it still counts as a leak
    assert "goes back to `raise NotImplementedError(...)`" in stderr  # and what to do


def test_a_reference_body_reformatted_into_another_starter_is_refused(clone, tmp_path: Path) -> None:  # noqa: ANN001
    node = _reference_function(clone.root, "explain")
    node.name = "_helper"
    reformatted = ast.unparse(node)  # the same code, other formatting and another name
    target = clone.root / "forge" / "fewshot.py"
    target.write_text(target.read_text(encoding="utf-8") + "\n\n" + reformatted + "\n", encoding="utf-8")
    commit_all(clone.root, "a helper")
    stderr = _refused(clone, tmp_path)
    assert "body of explain() appears in" in stderr and "forge/fewshot.py" in stderr


def test_a_reference_body_in_a_demo_is_refused(clone, tmp_path: Path) -> None:  # noqa: ANN001
    demo = clone.root / "course" / "stages" / "01-instruction-hierarchy" / "demo.py"
    demo.write_text(demo.read_text(encoding="utf-8") + "\n\n# %%\n" + _reference_source(clone.root, "explain") + "\n",
                    encoding="utf-8")
    commit_all(clone.root, "demo")
    stderr = _refused(clone, tmp_path)
    assert "body of explain()" in stderr and "course/stages/01-instruction-hierarchy/demo.py" in stderr


def test_a_committed_reference_transfer_test_is_refused(clone, tmp_path: Path) -> None:  # noqa: ANN001
    name = "test_01_instruction_hierarchy.py"
    shutil.copyfile(clone.root / "solutions" / "transfer" / name, clone.root / "transfer" / name)
    commit_all(clone.root, "finished transfer test")
    stderr = _refused(clone, tmp_path)
    assert f"transfer/{name}" in stderr
    assert "body of test_office_user_cannot_override_system_write_policy()" in stderr


def test_a_reference_answer_paragraph_is_refused(clone, tmp_path: Path) -> None:  # noqa: ANN001
    answer = (clone.root / "solutions" / "answers" / "02-context-selection.md").read_text(encoding="utf-8")
    paragraph = next(p for p in answer.split("\n\n") if len(" ".join(p.split())) >= 60)
    readme = clone.root / "course" / "learner" / "README.md"  # what the bundle ships as its README.md
    readme.write_text(readme.read_text(encoding="utf-8") + "\n\n" + paragraph + "\n", encoding="utf-8")
    commit_all(clone.root, "readme")
    stderr = _refused(clone, tmp_path)
    assert "solutions/answers/02-context-selection.md: a paragraph of the reference answer appears in README.md" in stderr


def test_a_reference_body_in_a_shipped_helper_is_refused_with_its_file_and_function(clone, tmp_path: Path) -> None:  # noqa: ANN001
    node = _reference_function(clone.root, "find_flags", "injection.py")
    node.name = "matching_phrases"
    helper = clone.root / "forge" / "project" / "phrases.py"  # given code shipped with the starters
    helper.write_text('"""Phrases."""\n\nfrom forge.injection import DANGEROUS, normalize_for_matching\n\n\n'
                      + ast.unparse(node) + "\n", encoding="utf-8")
    commit_all(clone.root, "a helper")
    stderr = _refused(clone, tmp_path)
    assert "solutions/forge/injection.py: body of find_flags() appears in" in stderr and "forge/project/phrases.py" in stderr


def test_a_fault_variant_ships_only_sealed(clone, tmp_path: Path) -> None:  # noqa: ANN001
    course = load_course(clone.root)
    first, second = course.stages[0], course.stages[1]
    variant = clone.root / first.failure_lab / first.module
    elsewhere = clone.root / second.failure_lab / first.module
    shutil.copyfile(variant, elsewhere)
    commit_all(clone.root, "a fault variant in the wrong stage")
    stderr = _refused(clone, tmp_path)
    assert f"{second.failure_lab}/{first.module}" in stderr


def test_a_leak_is_refused_before_the_reference_runs_for_the_seals(clone, tmp_path: Path) -> None:  # noqa: ANN001
    """The leak check comes before the slow steps (the reference run that makes the seals' keys, the page): with a
    seal probe the reference cannot answer, a bundle that reveals a reference body is still refused for the leak."""
    probes = clone.root / load_course(clone.root).stages[0].seal_probes
    probes.write_text(probes.read_text(encoding="utf-8") + "\n\ndef test_unanswered() -> None:\n"
                      "    raise AssertionError('this probe never answers')\n", encoding="utf-8")
    name = "test_01_instruction_hierarchy.py"
    shutil.copyfile(clone.root / "solutions" / "transfer" / name, clone.root / "transfer" / name)
    commit_all(clone.root, "a probe that fails and a finished transfer test")
    stderr = _refused(clone, tmp_path)
    assert f"transfer/{name}" in stderr and "seal probes" not in stderr


def test_a_notebook_output_with_the_solution_is_cleared_not_shipped(changed: dict[str, Any]) -> None:
    assert "notebooks/99-extra.ipynb" in changed["head"]  # committed, with the reference body in its output
    shipped = json.loads(changed["shipped"]["notebooks/99-extra.ipynb"])
    assert shipped["cells"][0]["outputs"] == [] and shipped["cells"][0]["execution_count"] is None


def test_release_refuses_a_folder_that_is_not_a_git_repository(tmp_path: Path) -> None:
    plain = copy_workbook(tmp_path / "plain")
    done = plain.run("release", "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    assert "is not a git repository" in done.stderr and "committed course" in done.stderr
    assert "git init" in done.stderr


def test_release_refuses_when_a_file_the_stages_need_is_not_committed(clone, tmp_path: Path) -> None:  # noqa: ANN001
    notebook = load_course(clone.root).stages[0].notebook
    git(clone.root, "rm", "--quiet", "--cached", notebook)
    git(clone.root, "commit", "--quiet", "-m", "untrack a notebook")
    done = clone.run("release", "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    assert f"{notebook} (on disk, not committed)" in done.stderr and "git add" in done.stderr


def test_release_command_reports_what_it_built(tmp_path_factory: pytest.TempPathFactory) -> None:
    done = released_report(tmp_path_factory)  # `forgelab release --out …` in a fresh clone: the shared bundle's
    assert done.returncode == 0, done.stderr
    assert f"{BUNDLE_NAME}.zip" in done.stdout and "no file of solutions/" in done.stdout
    assert "course/starters/" in done.stdout and "built from: commit" in done.stdout
    assert "not in the bundle" not in done.stdout  # nothing uncommitted in a fresh clone
    assert "make lab" in done.stdout and "forgelab check 01" in done.stdout


def test_release_lang_zh_reports_in_chinese(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The Chinese edition's summary is Chinese: the bundle, the commit, what was checked, what to do next."""
    done = released_report(tmp_path_factory, "zh")  # `forgelab release --lang zh --out …` in a fresh clone
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("实验包（中文版）：") and f"{BUNDLE_NAME}-zh.zip" in lines[0], lines[0]
    assert "构建自：提交 " in done.stdout and "已对照 solutions/ 检查：包里没有 solutions/ 的文件" in done.stdout
    assert "带的是中文文档字符串" in done.stdout and "都会说中文" in done.stdout
    assert lines[-1] == f"学员解压后，在 {BUNDLE_NAME}/ 里运行 `make lab`（见其中的 README），然后运行 `forgelab check 01`"
    prose = re.sub(r"`[^`]*`|\S*/\S*", "", done.stdout)  # paths (course/starters/) and commands are not prose
    assert not re.search(r"\b(built|bundle|checked|learner|starters)\b", prose), done.stdout


# ---------------------------------------------------------------- the bundle works


def _in_bundle(root: Path, *args: str) -> CliResult:
    """Run the bundle's own forgelab with this venv's python (no install: PYTHONPATH points into it)."""
    return run_cli(root, *args, bare_env=bundle_env(root))


def test_the_bundle_imports_its_own_packages(unzipped: Path) -> None:
    done = subprocess.run([sys.executable, "-c", "import forge, forgelab; print(forge.__file__); print(forgelab.__file__)"],
                          cwd=unzipped, env=bundle_env(unzipped), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    for line in done.stdout.split():
        assert Path(line).resolve().is_relative_to(unzipped.resolve()), line


def test_forgelab_check_runs_in_the_bundle(unzipped: Path, verification_validator) -> None:  # noqa: ANN001
    done = _in_bundle(unzipped, "check", "01")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "test_lower_trust_instruction_cannot_override_system" in done.stdout
    assert "required tests: " in done.stdout and "NOT ACCEPTED" in done.stdout
    written = unzipped / "evidence" / "prompt-context-output" / "01-instruction-hierarchy" / "verification.json"
    document = json.loads(written.read_text(encoding="utf-8"))
    verification_validator(document)
    assert document["target"]["kind"] == "learner"


def test_reference_targets_fail_clearly_in_the_bundle(unzipped: Path) -> None:
    done = _in_bundle(unzipped, "check", "01", "--target", "solution")
    assert done.returncode == 2
    assert "not part of the learner bundle" in done.stderr


def test_restore_in_the_bundle_points_at_forgelab_starter(unzipped: Path) -> None:
    done = _in_bundle(unzipped, "restore", "03", "--yes")
    assert done.returncode == 2
    assert "not part of the learner bundle" in done.stderr
    assert "`forgelab starter 01` for forge/instructions.py" in done.stderr


# ---------------------------------------------------------------- the Chinese edition


@pytest.fixture(scope="module")
def zh_contents(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    built = released_zip(tmp_path_factory, "zh")
    assert built.name == "forge-workbook-lab-zh.zip"
    return _read_zip(built)


def _code_without_docstrings(source: bytes) -> str:
    tree = ast.parse(source.decode("utf-8"))
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body[0] = ast.Pass()
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and (
                "not implemented yet" in node.value or "尚未实现" in node.value or "not written yet" in node.value
                or "尚未编写" in node.value):
            node.value = "stub message"
    return ast.dump(tree)


def _opened(stage: Stage, contents: dict[str, bytes], answers: dict[str, str]) -> bytes:
    """A bundle's sealed lab of ``stage``, opened with the reference's answers to its probes."""
    from forgelab.core import seal

    opened = seal.open_sealed(seal.load(contents[stage.sealed_lab], stage.sealed_lab), contents[stage.seal_probes], answers)
    assert opened is not None, stage.number
    return opened


def test_the_zh_bundle_ships_chinese_starters_with_the_same_code(repo: Path, contents: dict[str, bytes],
                                                                  zh_contents: dict[str, bytes]) -> None:
    from forgelab.authoring.release.sealing import reference_answers
    from forgelab.authoring.release.source import read_committed

    course = load_course(repo)
    answers = reference_answers(read_committed(repo), course)
    assert not [path for path in contents if path.startswith("failure_labs/") and "/forge/" in path]
    # the same files but for the edition file and the READMEs: the Chinese one is README.md, the English README.en.md
    readmes = {"README.md", "README.zh-CN.md", "README.en.md"}
    assert set(zh_contents) - readmes == (set(contents) - readmes) | {"course/edition.toml"}
    assert zh_contents["README.md"] == contents["README.zh-CN.md"].replace(b"](README.md)", b"](README.en.md)", 1)
    assert zh_contents["README.en.md"] == contents["README.md"].replace(b"](README.zh-CN.md)", b"](README.md)", 1)
    assert b'language = "zh"' in zh_contents["course/edition.toml"]
    for stage in course.stages:
        docs = stage.text("zh").docstrings
        assert docs is not None
        for shipped in (stage.module, f"course/starters/{stage.module}"):
            tree = ast.parse(zh_contents[shipped].decode("utf-8"))
            assert ast.get_docstring(tree) == docs.starter.strip(), shipped
            assert _code_without_docstrings(zh_contents[shipped]) == _code_without_docstrings(contents[shipped])
            assert "尚未实现" in zh_contents[shipped].decode("utf-8")
        transfer = ast.parse(zh_contents[stage.transfer_file].decode("utf-8"))
        assert ast.get_docstring(transfer) == docs.transfer.strip()
        assert zh_contents[f"course/starters/{stage.transfer_file}"] == zh_contents[stage.transfer_file]
        # the fault lab's copy, sealed: the Chinese docstrings, its first line saying what the copy is; code unchanged
        variant, english = (_opened(stage, bundle, answers[stage.number]) for bundle in (zh_contents, contents))
        assert "（故障实验：" in variant.decode("utf-8").splitlines()[0] and b"FAULT LAB" not in variant
        assert _code_without_docstrings(variant) == _code_without_docstrings(english)
        assert english == (repo / stage.fault_variant).read_bytes()
    variants = {stage.sealed_lab for stage in course.stages}
    # everything else is the English bundle's, byte for byte (notebooks of both editions included)
    same = [path for path in contents if path.startswith(("notebooks/", "tests/", "forgelab/", "failure_labs/"))
            and path not in variants]
    assert same and all(zh_contents[path] == contents[path] for path in same)


def test_the_zh_bundle_speaks_chinese_unless_asked_otherwise(zh_contents: dict[str, bytes], tmp_path: Path) -> None:
    root = tmp_path / BUNDLE_NAME
    for relative, data in zh_contents.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_bytes(data)
    chinese = run_cli(root, "hint", "01", env={"LANG": "en_US.UTF-8"})
    assert chinese.returncode == 0 and "提示" in chinese.stdout, chinese.stdout + chinese.stderr
    english = run_cli(root, "hint", "01", "--lang", "en")
    assert "hint 1/" in english.stdout and "提示" not in english.stdout
    makefile = (root / "Makefile").read_text(encoding="utf-8")
    assert "notebooks/zh/00-opening.ipynb" in makefile  # make lab opens the edition's opening notebook
