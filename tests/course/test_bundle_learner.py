"""The learner's bundle as a complete product (issue 20, items 1–4): the self-check page inside it, built without
git and working from file:// with the network blocked; a README and a `--help` for learners only; the fault
lab's last diagnosis step nowhere in clear; the first `status` runs nothing.

Every bundle is released from a temporary git clone (``git_workbook``) and unzipped into a fresh folder, with
no git in it; its own ``forgelab`` runs it (``PYTHONPATH`` into the bundle), as `make lab` would.
"""

from __future__ import annotations

import json
import re
import shutil
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import pytest

from browser import chromium, open_tab  # noqa: F401  (fixtures are used by name)
from conftest import CliResult, bundle_env, run_cli
from released import released_course, released_zip

from forgelab.cli.main import INSTRUCTOR_COMMANDS
from forgelab.core.registry import load_course
from forgelab.authoring.release.bundle import BUNDLE_NAME

# the two bundles are built once per run: the module keeps to one xdist worker (--dist loadgroup)
pytestmark = pytest.mark.xdist_group("learner-bundle")

KEY = "01-instruction-hierarchy"
# what belongs to the course repository, never to a learner's README or --help
INSTRUCTOR_WORDS = ("forgelab grade", "forgelab release", "verify-course", "new-stage", "forgelab build", "nbval",
                    "make bench", "make mutation", "mutmut", "gradebook", "instructor/", "solutions/", "forgelab i18n",
                    "site serve", "make typecheck")


def _unzip(zip_path: Path, into: Path) -> Path:
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(into)
    return into / BUNDLE_NAME


def _zip_contents(zip_path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(zip_path) as archive:
        return {info.filename.removeprefix(f"{BUNDLE_NAME}/"): archive.read(info) for info in archive.infolist()}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return released_course(tmp_path_factory)  # only read here


@pytest.fixture(scope="module")
def zips(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return {language: released_zip(tmp_path_factory, language) for language in ("en", "zh")}


@pytest.fixture
def bundle(zips: dict[str, Path], tmp_path: Path) -> Path:
    """A fresh unzipped English bundle for each test (they write into it)."""
    return _unzip(zips["en"], tmp_path / "fresh")


def run(root: Path, *args: str, env: dict[str, str] | None = None, timeout: int = 300) -> CliResult:
    """The bundle's own forgelab, with this venv's python and no display (so no browser is started)."""
    return run_cli(root, *args, bare_env=bundle_env(root, env), timeout=timeout, input="")


# ---------------------------------------------------------------- item 1: the page in the bundle


def test_the_bundle_carries_the_built_page_in_both_editions(repo: Path, zips: dict[str, Path]) -> None:
    course = load_course(repo)
    for language, zip_path in zips.items():
        contents = _zip_contents(zip_path)
        for folder in ("page", "page/zh"):
            assert {f"{folder}/index.html", f"{folder}/assets/verify.js", f"{folder}/assets/page.js",
                    f"{folder}/assets/course-data.js"} <= set(contents), (language, folder)
            for stage in course.stages:
                assert f"{folder}/{stage.key}.html" in contents
        data = contents["page/assets/course-data.js"].decode("utf-8")
        assert '"in_bundle": true' in data
        index = contents["page/index.html"].decode("utf-8")
        assert "This page came with your workbook" in index and "data-bundle" not in index  # nothing to download


def test_the_page_is_built_in_the_bundle_without_git_as_shipped(bundle: Path, zips: dict[str, Path]) -> None:
    assert not (bundle / ".git").exists() and shutil.which("git")  # git exists on this machine, just not here
    shipped = {path: data for path, data in _zip_contents(zips["en"]).items() if path.startswith("page/")}
    shutil.rmtree(bundle / "page")
    done = run(bundle, "page", "01", "--print")
    assert done.returncode == 0, done.stderr
    assert "built the course page in page/" in done.stdout
    rebuilt = {f"page/{p.relative_to(bundle / 'page').as_posix()}": p.read_bytes()
               for p in (bundle / "page").rglob("*") if p.is_file()}
    assert rebuilt == shipped  # the same files, byte for byte


def test_forgelab_page_prints_where_the_page_is_without_a_browser(bundle: Path, zips: dict[str, Path],
                                                                  tmp_path: Path) -> None:
    done = run(bundle, "page", "01")
    assert done.returncode == 0, done.stderr
    page = bundle / "page" / f"{KEY}.html"
    assert f"course page: page/{KEY}.html" in done.stdout and page.as_uri() in done.stdout
    assert "open that address in your web browser" in done.stdout
    chinese = _unzip(zips["zh"], tmp_path / "zh")
    zh = run(chinese, "page", "01")
    assert zh.returncode == 0 and f"page/zh/{KEY}.html" in zh.stdout and "课程页面" in zh.stdout


def test_check_ends_by_naming_the_page(bundle: Path) -> None:
    done = run(bundle, "check", "01")
    assert done.returncode == 1
    assert f"self-check page: page/{KEY}.html (`forgelab page 01` opens it" in " ".join(done.stdout.split())


def test_the_notebooks_last_cell_opens_the_page(repo: Path) -> None:
    for language, folder in (("en", "notebooks"), ("zh", "notebooks/zh")):
        cells = json.loads((repo / folder / f"{KEY}.ipynb").read_text(encoding="utf-8"))["cells"]
        last, before = "".join(cells[-1]["source"]), "".join(cells[-2]["source"])
        assert last == "lab.page()", language
        assert f"page/{'' if language == 'en' else 'zh/'}{KEY}.html" in before and "forgelab page 01" in before


# ---------------------------------------------------------------- item 2: a bundle that speaks to learners


@pytest.mark.parametrize("edition, readmes", [("en", (("README.md", "en", "README.zh-CN.md"),
                                                        ("README.zh-CN.md", "zh", "README.md"))),
                                              ("zh", (("README.md", "zh", "README.en.md"),
                                                      ("README.en.md", "en", "README.md")))])
def test_the_bundle_readme_is_the_learners(repo: Path, zips: dict[str, Path], edition: str,
                                           readmes: tuple[tuple[str, str, str], ...]) -> None:
    course = load_course(repo)
    contents = _zip_contents(zips[edition])
    assert "course/learner/README.md" not in contents
    assert sorted(name for name in contents if name.startswith("README")) == sorted(name for name, _, _ in readmes)
    for name, language, other in readmes:
        text = contents[name].decode("utf-8")
        source = "course/learner/README.md" if language == "en" else "course/learner/README.zh-CN.md"
        assert text.splitlines()[1:] != (repo / source).read_text(encoding="utf-8").splitlines()[1:]  # table filled
        assert text.split("\n", 1)[1].startswith((repo / source).read_text(encoding="utf-8").split("\n", 1)[1][:200])
        assert f"]({other})" in text.splitlines()[0], (name, "its first line links the other edition")
        assert not [word for word in INSTRUCTOR_WORDS if word in text], (name, [w for w in INSTRUCTOR_WORDS if w in text])
        for stage in course.stages:
            assert stage.text(language).title in text and stage.module in text
        for command in ("make lab", "forgelab check", "forgelab status", "forgelab fault diagnose", "forgelab page",
                        "forgelab backup restore"):
            assert command in text, (name, command)
        assert "page/" in text and "<!--" not in text
    for guide in ("docs/learner.md", "docs/learner.zh-CN.md"):  # the learner guide ships; no other document does
        assert contents[guide] == (repo / guide).read_bytes()
        text = contents[guide].decode("utf-8")
        assert not [word for word in INSTRUCTOR_WORDS if word in text], (guide, [w for w in INSTRUCTOR_WORDS if w in text])
    assert sorted(name for name in contents if name.startswith("docs/")) == ["docs/learner.md", "docs/learner.zh-CN.md"]


def test_help_lists_learner_commands_only_and_instructor_tools_are_named(bundle: Path) -> None:
    shown = run(bundle, "--help")
    assert shown.returncode == 0
    listed = set(re.findall(r"^    ([a-z][a-z-]+)\s", shown.stdout, re.M))
    assert {"check", "status", "hint", "fault", "page", "answer", "starter", "restore", "backup"} <= listed
    assert listed.isdisjoint(INSTRUCTOR_COMMANDS), listed & set(INSTRUCTOR_COMMANDS)
    for command in ("grade", "release", "build", "verify-course", "new-stage"):
        refused = run(bundle, command, "--check") if command == "build" else run(bundle, command)
        assert refused.returncode == 2, (command, refused.stdout)
        assert "tool of the course repository" in refused.stderr and "Traceback" not in refused.stderr
        assert "out of date" not in refused.stdout + refused.stderr


# ---------------------------------------------------------------- item 3: the last diagnosis step is sealed


def test_no_file_of_the_bundle_holds_the_last_diagnosis_step(repo: Path, zips: dict[str, Path]) -> None:
    course = load_course(repo)
    steps = []
    for stage in course.stages:
        confirm = tomllib.loads((stage.source_dir / "fault.toml").read_text(encoding="utf-8"))["diagnosis"]["confirm"]
        steps += [(stage, " ".join(text.split())[:50]) for text in confirm.values()]
    for language, zip_path in zips.items():
        contents = _zip_contents(zip_path)
        texts = {path: " ".join(data.decode("utf-8", "replace").split()) for path, data in contents.items()}
        for stage, step in steps:
            failure = texts[stage.fault_contract_file]
            assert step not in failure, (language, stage.number)
            found = [path for path, text in texts.items() if step in text]
            assert found == [], (language, stage.number, found)
        assert all(f"{stage.failure_lab}/fixtures/diagnosis.json" in contents for stage in course.stages)


# ---------------------------------------------------------------- item 4: the first status runs nothing


def test_the_first_status_on_a_fresh_bundle_runs_no_stage(bundle: Path) -> None:
    done = run(bundle, "status")
    assert done.returncode == 0, done.stderr
    assert "nothing needed running" in done.stdout
    assert "not started" in done.stdout
    assert not (bundle / ".forgelab" / "cache").exists()  # the judge never started


# ---------------------------------------------------------------- the page self-checks, offline, from file://


def _accept_stage_01(bundle: Path, repo: Path) -> dict[str, Any]:
    """Stage 01 done the way a learner does it, in the bundle: module, lab (diagnosed, fixed), transfer, answer."""
    from forgelab.verdicts.diagnosis import reference_answers

    stage = load_course(repo).stage("01")
    shutil.copyfile(repo / stage.solution_module, bundle / stage.module)
    shutil.copyfile(repo / stage.reference_transfer, bundle / stage.transfer_file)
    assert run(bundle, "fault", "start", "01").returncode == 0
    test, function, defect = reference_answers(repo, stage)
    diagnosed = run(bundle, "fault", "diagnose", "01", "--test", test, "--function", function, "--defect", defect,
                    "--because", "explain decides each key by arrival order and records no rejection at all")
    assert diagnosed.returncode == 0, diagnosed.stdout + diagnosed.stderr
    shutil.copyfile(repo / stage.solution_module, bundle / stage.lab_module)
    assert run(bundle, "fault", "check", "01").returncode == 0
    answer = bundle / "answer.md"
    shutil.copyfile(repo / stage.reference_answer, answer)
    assert run(bundle, "answer", "01", "--file", str(answer)).returncode == 0
    checked = run(bundle, "check", "01")
    assert checked.returncode == 0, checked.stdout
    return json.loads((bundle / stage.evidence_file).read_text(encoding="utf-8"))


@pytest.mark.browser
def test_the_unzipped_bundle_self_checks_from_file_with_the_network_blocked(bundle: Path, repo: Path,
                                                                           chromium: Any) -> None:  # noqa: F811
    document = _accept_stage_01(bundle, repo)
    assert document["accepted"] and document["fault_lab"]["diagnosis"]["status"] == "right"
    context, tab = open_tab(chromium, (bundle / "page").as_uri() + "/")
    try:
        context.set_offline(True)  # no network at all; and open_tab aborts anything that is not local
        tab.open_stage(KEY)
        tab.page.wait_for_selector("#local-check")
        tab.pick((bundle / f"evidence/prompt-context-output/{KEY}/verification.json").read_bytes())
        tab.wait_state("self-check-passed")
        status, text = tab.check("diagnosis")
        assert status == "pass" and "explain decides each key by arrival order" in text
        assert tab.check("fault-lab")[0] == "pass"
        lab_step = tab.page.locator('#check-steps li[data-step="lab-downloaded"] .step-status').inner_text()
        assert lab_step != "" and "not downloaded" not in lab_step  # the page came with the lab
        tab.screenshot("bundle-self-check-passed")
        assert tab.foreign_requests() == [] and tab.errors == []
        assert all(url.startswith("file://") for url in tab.requests)
    finally:
        context.close()


# ---------------------------------------------------------------- item 10: timings that name the machine state


def test_measured_timings_live_in_results_with_the_machine_state(repo: Path) -> None:
    results = (repo / "benchmarks" / "RESULTS.md").read_text(encoding="utf-8")
    make_lab = results[results.index("## The first `make lab`"):]
    assert "benchmarks/bench_make_lab.py" in make_lab and "load" in make_lab.split("\n## ")[0]
    assert "**13 s**" not in results  # the earlier figure that was not reproduced
    for name in ("README.md", "README.zh-CN.md", "docs/learner.md", "docs/learner.zh-CN.md",
                 "course/learner/README.md", "course/learner/README.zh-CN.md"):
        text = (repo / name).read_text(encoding="utf-8")
        assert "load average" not in text and "负载平均值" not in text, name  # a figure without its run is no figure
    assert (repo / "benchmarks" / "bench_make_lab.py").is_file()


# ---------------------------------------------------------------- issue 30: no reference before the stage passes

# a line of the reference module of stage 06 that the fault lab keeps (its defect is elsewhere)
REFERENCE_LINE = b'invisible = {ord(char): None for char in set(folded) if unicodedata.category(char) == "Cf"}'
REFUSED_06 = {"en": re.compile(r"stage 06: (\d+) of 20 required tests pass on your forge/ — the fault lab opens when "
                               r"all pass: run `forgelab check 06`"),
              "zh": re.compile(r"阶段 06：20 个必需测试中有 (\d+) 个在你的 forge/ 上通过——全部通过后故障实验才会打开：运行 "
                               r"`forgelab check 06`")}


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_fault_lab_opens_only_when_the_learners_own_stage_passes(language: str, repo: Path, zips: dict[str, Path],
                                                                    tmp_path: Path) -> None:
    bundle = _unzip(zips[language], tmp_path / "fresh")
    stage = load_course(repo).stage("06")
    assert REFERENCE_LINE in (repo / stage.solution_module).read_bytes()
    assert [path for path in bundle.rglob("*") if path.is_file() and REFERENCE_LINE in path.read_bytes()] == []
    assert list((bundle / "failure_labs").glob("*/forge/*")) == [] and (bundle / stage.sealed_lab).is_file()

    refused = run(bundle, "fault", "start", "06")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.output
    found = REFUSED_06[language].search(refused.stderr)
    assert found is not None and int(found.group(1)) < 20, refused.stderr
    assert not (bundle / stage.fault_variant).exists() and not (bundle / stage.lab_module).exists()

    # an honest learner whose stage 06 (and the stage 01 it builds on) passes: here, the reference stands in
    for number in ("01", "06"):
        done = load_course(repo).stage(number)
        shutil.copyfile(repo / done.solution_module, bundle / done.module)
    opened = run(bundle, "fault", "start", "06")
    assert opened.returncode == 0, opened.output
    variant = (bundle / stage.fault_variant).read_bytes()
    assert REFERENCE_LINE in variant and (bundle / stage.lab_module).read_bytes() == variant
    checked = run(bundle, "fault", "check", "06")
    assert checked.returncode == 1 and "test_retrieved_operational_instruction_is_data_not_authority" in checked.stdout
    assert "('trusted', True, [])" in checked.stdout, checked.stdout  # the contract's symptom


def test_every_stages_solution_opens_its_sealed_lab_in_the_bundle(repo: Path, bundle: Path) -> None:
    """With the course's solution in ``forge/``, `fault start NN` judges each stage and opens every sealed lab, and
    what it opens is the course's broken module: the probes each stage ships (``course/stages/NN-slug/seal.py``) are
    in step with its solution, its tests and its seal (independently written honest solutions:
    test_seal_probes.py)."""
    course = load_course(repo)
    for module in sorted((repo / "solutions" / "forge").glob("*.py")):
        shutil.copyfile(module, bundle / "forge" / module.name)
    refused = []
    for stage in course.stages:
        assert not (bundle / stage.fault_variant).exists() and (bundle / stage.sealed_lab).is_file(), stage.number
        opened = run(bundle, "fault", "start", stage.number)
        if opened.returncode != 0 or "Traceback" in opened.output:
            refused.append(f"{stage.number}: {opened.output[-600:]}")
        elif (bundle / stage.fault_variant).read_bytes() != (repo / stage.fault_variant).read_bytes():
            refused.append(f"{stage.number}: opened, but not to the course's broken module")
    assert refused == [], "\n".join(refused)


def test_a_sealed_lab_that_does_not_open_says_why_without_a_traceback(repo: Path, bundle: Path) -> None:
    course = load_course(repo)
    stage = course.stage("01")
    shutil.copyfile(repo / stage.solution_module, bundle / stage.module)
    sealed = json.loads((bundle / stage.sealed_lab).read_text(encoding="utf-8"))
    ciphertext = sealed["ciphertext"]
    sealed["ciphertext"] = ("B" if ciphertext[0] != "B" else "C") + ciphertext[1:]  # another key would read the same
    (bundle / stage.sealed_lab).write_text(json.dumps(sealed), encoding="utf-8")
    wrong = run(bundle, "fault", "start", "01")
    assert wrong.returncode == 2 and "Traceback" not in wrong.stderr, wrong.output
    assert ("stage 01: all 13 required tests pass on your forge/, but its answers to the lab's seal probes in "
            "course/stages/01-instruction-hierarchy/seal.py are not the ones the stage's contract asks for") in wrong.stderr
    assert not (bundle / stage.fault_variant).exists()
    probes = bundle / stage.seal_probes
    probes.write_text(probes.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    changed = run(bundle, "fault", "start", "01")
    assert changed.returncode == 2 and "Traceback" not in changed.stderr, changed.output
    assert "course/stages/01-instruction-hierarchy/seal.py is not the file this lab was sealed with" in changed.stderr


def test_while_the_lab_is_sealed_check_says_the_known_wrong_run_waits_for_it(repo: Path, bundle: Path) -> None:
    stage = load_course(repo).stage("01")
    shutil.copyfile(repo / stage.solution_module, bundle / stage.module)
    shutil.copyfile(repo / stage.reference_transfer, bundle / stage.transfer_file)
    sealed = run(bundle, "check", "01")
    assert "once the fault lab is open (`forgelab fault start 01`)" in " ".join(sealed.stdout.split()), sealed.stdout
    assert run(bundle, "fault", "start", "01").returncode == 0
    opened = run(bundle, "check", "01")
    flat = " ".join(opened.stdout.split())
    assert "it fails on the known-wrong implementation, as it should" in flat and "once the fault lab is open" not in flat
