"""Checkpoint packs: `forgelab release --checkpoint NN` writes the committed reference modules of stages
01..NN (and nothing else) reproducibly; in an unzipped learner bundle, `forgelab restore NN --from FILE`
lays in the modules of the stages before NN — after a backup — and refuses a pack that holds anything
else, is damaged, or was made for another course version.

Every pack and bundle here is built from a temporary git clone of the course (``git_workbook``).
"""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from pathlib import Path

import pytest

from conftest import WorkbookCopy
from git_workbook import git, git_workbook
from released import released_zip

from forgelab.core.checkpoint import FIXED_TIMESTAMP, MANIFEST, sha256
from forgelab.authoring.release.bundle import BUNDLE_NAME

EARLY = ["forge/instructions.py", "forge/context_selection.py", "forge/fewshot.py", "forge/task_spec.py",
         "forge/output_repair.py"]


# The repository, the checkpoint packs and the bundle are module fixtures: made once per run only if the module keeps
# to one xdist worker (make test runs --dist loadgroup).
pytestmark = pytest.mark.xdist_group("checkpoint")


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> WorkbookCopy:
    return git_workbook(tmp_path_factory.mktemp("checkpoint-repo") / "course")


@pytest.fixture(scope="module")
def packs(repo: WorkbookCopy, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("packs")
    for number in ("05", "07"):
        result = repo.run("release", "--checkpoint", number, "--out", str(out))
        assert result.returncode == 0, result.output
    return out


@pytest.fixture(scope="module")
def bundle_zip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return released_zip(tmp_path_factory)


@pytest.fixture
def bundle(bundle_zip: Path, tmp_path: Path) -> WorkbookCopy:
    """A fresh, unzipped learner bundle: no solutions/, pristine starters under course/starters/."""
    with zipfile.ZipFile(bundle_zip) as archive:
        archive.extractall(tmp_path)
    root = tmp_path / BUNDLE_NAME
    assert not (root / "solutions").exists()
    return WorkbookCopy(root)


def entries(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def rezip(source: Path, destination: Path, change) -> Path:  # type: ignore[no-untyped-def]
    """A copy of a pack with ``change(files)`` applied to its {name: bytes} mapping (a well-formed zip)."""
    files = entries(source)
    change(files)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in sorted(files.items()):
            archive.writestr(name, data)
    destination.write_bytes(buffer.getvalue())
    return destination


# ---------------------------------------------------------------- writing a pack


def test_a_pack_holds_the_reference_modules_up_to_nn_and_a_manifest_only(repo: WorkbookCopy, packs: Path) -> None:
    files = entries(packs / "forge-workbook-checkpoint-05.zip")
    folder = "forge-workbook-checkpoint-05/"
    assert sorted(files) == sorted([folder + MANIFEST] + [folder + module for module in EARLY])
    for module in EARLY:
        assert files[folder + module] == (repo.root / "solutions" / module).read_bytes()
    manifest = json.loads(files[folder + MANIFEST])
    assert manifest["checkpoint"] == "05" and manifest["course"] == "forge-workbook"
    assert manifest["commit"] == git(repo.root, "rev-parse", "HEAD").strip()
    assert [(m["stage"], m["path"]) for m in manifest["modules"]] == [(f"{i:02d}", m) for i, m in enumerate(EARLY, 1)]
    assert all(m["sha256"] == sha256(files[folder + m["path"]]) for m in manifest["modules"])
    seven = entries(packs / "forge-workbook-checkpoint-07.zip")
    assert len(seven) == 8 and not any("test" in name or "answer" in name or "transfer" in name for name in seven)


def test_a_pack_is_reproducible_byte_for_byte(repo: WorkbookCopy, packs: Path, tmp_path: Path) -> None:
    first = (packs / "forge-workbook-checkpoint-05.zip").read_bytes()
    assert repo.run("release", "--checkpoint", "5", "--out", str(tmp_path / "again")).returncode == 0
    assert (tmp_path / "again" / "forge-workbook-checkpoint-05.zip").read_bytes() == first
    other = tmp_path / "other"
    git(repo.root.parent, "clone", "--quiet", str(repo.root), str(other))
    assert WorkbookCopy(other).run("release", "--checkpoint", "05", "--out", str(tmp_path / "o")).returncode == 0
    assert (tmp_path / "o" / "forge-workbook-checkpoint-05.zip").read_bytes() == first
    with zipfile.ZipFile(packs / "forge-workbook-checkpoint-05.zip") as archive:
        assert {info.date_time for info in archive.infolist()} == {FIXED_TIMESTAMP}


def test_release_says_what_the_pack_holds_and_how_learners_use_it(repo: WorkbookCopy, tmp_path: Path) -> None:
    result = repo.run("release", "--checkpoint", "03", "--out", str(tmp_path))
    assert result.returncode == 0, result.output
    assert "3 reference modules" in result.stdout and "no tests, no transfer tests, no answers" in result.stdout
    assert "forgelab restore NN --from forge-workbook-checkpoint-03.zip" in result.stdout


def test_a_pack_for_an_unknown_stage_or_without_solutions_is_refused(repo: WorkbookCopy, bundle: WorkbookCopy,
                                                                    tmp_path: Path) -> None:
    out = tmp_path / "out"
    unknown = repo.run("release", "--checkpoint", "42", "--out", str(out))
    assert unknown.returncode == 2 and "unknown stage '42'" in unknown.stderr
    in_bundle = bundle.run("release", "--checkpoint", "03", "--out", str(out))
    assert in_bundle.returncode == 2 and "tool of the course repository" in in_bundle.stderr  # not offered there at all
    assert not out.exists()


# ---------------------------------------------------------------- restoring from a pack in the bundle


def test_a_checkpoint_pack_restores_in_an_unzipped_bundle(bundle: WorkbookCopy, packs: Path, repo: WorkbookCopy) -> None:
    bundle.write("forge/fewshot.py", "# my own attempt\n")
    done = bundle.run("restore", "06", "--from", str(packs / "forge-workbook-checkpoint-05.zip"), "--yes")
    assert done.returncode == 0, done.output
    assert "from forge-workbook-checkpoint-05.zip (checkpoint 05)" in done.stdout
    assert "forge/fewshot.py: holds your own work" in done.stdout
    assert "forge/instructions.py: still the untouched starter" in done.stdout
    for module in EARLY:
        assert (bundle.root / module).read_bytes() == (repo.root / "solutions" / module).read_bytes()
    name = next(line.split()[-1] for line in done.stdout.splitlines() if "backup of your forge/ saved as" in line)
    check = bundle.run("check", "05", timeout=300)
    assert "required tests: 27/27 passed" in check.stdout, check.output
    undo = bundle.run("backup", "restore", name, "--yes")
    assert undo.returncode == 0 and (bundle.root / "forge/fewshot.py").read_text() == "# my own attempt\n"


def test_only_the_stages_before_nn_are_laid_in(bundle: WorkbookCopy, packs: Path) -> None:
    done = bundle.run("restore", "03", "--from", str(packs / "forge-workbook-checkpoint-07.zip"), "--yes")
    assert done.returncode == 0, done.output
    laid = [line.split()[-1] for line in done.stdout.splitlines() if line.strip().startswith("laid reference")]
    assert laid == ["forge/instructions.py", "forge/context_selection.py"]
    for module in ("forge/fewshot.py", "forge/task_spec.py", "forge/prompt_regression.py"):
        assert (bundle.root / module).read_bytes() == (bundle.root / "course" / "starters" / module).read_bytes()


def test_without_a_pack_the_bundle_says_to_ask_for_one(bundle: WorkbookCopy) -> None:
    done = bundle.run("restore", "04", "--yes")
    assert done.returncode == 2
    assert "forge-workbook-checkpoint-03.zip or later" in done.stderr and "forgelab restore 04 --from FILE" in done.stderr


def test_without_a_terminal_and_without_yes_nothing_changes(bundle: WorkbookCopy, packs: Path) -> None:
    pack = str(packs / "forge-workbook-checkpoint-05.zip")
    done = bundle.run("restore", "03", "--from", pack)
    assert done.returncode == 2 and f"forgelab restore 03 --from {pack} --yes" in done.stderr
    assert (bundle.root / EARLY[0]).read_bytes() == (bundle.root / "course" / "starters" / EARLY[0]).read_bytes()


def test_a_pack_that_stops_too_early_is_refused(bundle: WorkbookCopy, packs: Path) -> None:
    done = bundle.run("restore", "08", "--from", str(packs / "forge-workbook-checkpoint-05.zip"), "--yes")
    assert done.returncode == 2
    assert "holds the modules of stages 01–05, but `forgelab restore 08` lays in 01–07" in done.stderr
    assert "forge-workbook-checkpoint-07.zip or later" in done.stderr


def _bump_version(files: dict[str, bytes]) -> None:
    name = "forge-workbook-checkpoint-05/manifest.json"
    manifest = json.loads(files[name])
    manifest["course_version"] = "9.9.9"
    files[name] = json.dumps(manifest).encode()


def _add_test_file(files: dict[str, bytes]) -> None:
    files["forge-workbook-checkpoint-05/tests/stages/test_05_bounded_output_repair.py"] = b"def test(): pass\n"


def _edit_module(files: dict[str, bytes]) -> None:
    files["forge-workbook-checkpoint-05/forge/fewshot.py"] += b"\n# changed\n"


def _drop_manifest(files: dict[str, bytes]) -> None:
    del files["forge-workbook-checkpoint-05/manifest.json"]


def _add_a_module(files: dict[str, bytes]) -> None:
    files["forge-workbook-checkpoint-05/forge/injection.py"] = b"x = 1\n"


@pytest.mark.parametrize(("change", "fragment"), [
    (_bump_version, "it was made for forge-workbook prompt-context-output version 9.9.9, and this workbook is "
                    "forge-workbook prompt-context-output version"),
    (_add_test_file, "it holds files a checkpoint pack never holds: tests/stages/test_05_bounded_output_repair.py"),
    (_add_a_module, "it holds files a checkpoint pack never holds: forge/injection.py"),
    (_edit_module, "forge/fewshot.py was changed or damaged (its SHA-256 differs from manifest.json)"),
    (_drop_manifest, "no manifest.json inside forge-workbook-checkpoint-05/"),
])
def test_a_pack_with_anything_else_changed_or_for_another_version_is_refused(
        bundle: WorkbookCopy, packs: Path, tmp_path: Path, change, fragment: str) -> None:  # type: ignore[no-untyped-def]
    bad = rezip(packs / "forge-workbook-checkpoint-05.zip", tmp_path / "forge-workbook-checkpoint-05.zip", change)
    before = {p.name: p.read_bytes() for p in (bundle.root / "forge").glob("*.py")}
    done = bundle.run("restore", "06", "--from", str(bad), "--yes")
    assert done.returncode == 2
    assert "cannot restore from this checkpoint pack: forge-workbook-checkpoint-05.zip: " in done.stderr
    assert fragment in done.stderr, done.stderr
    assert "Traceback" not in done.output
    assert {p.name: p.read_bytes() for p in (bundle.root / "forge").glob("*.py")} == before
    assert not (bundle.root / ".forgelab" / "backups").exists()


def test_a_damaged_or_foreign_file_is_refused(bundle: WorkbookCopy, packs: Path, tmp_path: Path) -> None:
    good = (packs / "forge-workbook-checkpoint-05.zip").read_bytes()
    with zipfile.ZipFile(io.BytesIO(good)) as archive:
        info = archive.getinfo("forge-workbook-checkpoint-05/forge/fewshot.py")
    corrupt = bytearray(good)
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    corrupt[start + 10] ^= 0xFF  # one byte of the compressed module
    cases = {"damaged.zip": (bytes(corrupt), "damaged"), "text.zip": (b"not a zip at all", "not a readable zip file"),
             "truncated.zip": (good[: len(good) // 2], "not a readable zip file")}
    for name, (data, fragment) in cases.items():
        (tmp_path / name).write_bytes(data)
        done = bundle.run("restore", "06", "--from", str(tmp_path / name), "--yes")
        assert done.returncode == 2 and fragment in done.stderr, (name, done.stderr)
    missing = bundle.run("restore", "06", "--from", str(tmp_path / "nowhere.zip"), "--yes")
    assert missing.returncode == 2 and "cannot read" in missing.stderr


def test_the_course_repository_can_restore_from_a_pack_too(repo: WorkbookCopy, packs: Path, tmp_path: Path) -> None:
    copy = tmp_path / "course"
    shutil.copytree(repo.root, copy, ignore=shutil.ignore_patterns(".forgelab"))
    done = WorkbookCopy(copy).run("restore", "03", "--from", str(packs / "forge-workbook-checkpoint-05.zip"), "--yes")
    assert done.returncode == 0, done.output
    assert (copy / EARLY[1]).read_bytes() == (copy / "solutions" / EARLY[1]).read_bytes()
