"""``forgelab new-stage NN slug --module forge/x.py``: every file a new stage needs, and nothing else.

The scaffold writes only new files (never edits an existing one), so deleting the files it lists
leaves the tree exactly as before. Every file carries the marker :data:`TODO`, and
``forgelab verify-course`` refuses a stage while any of its files still does — the scaffold is a
start, never a finished stage. ``forgelab build NN`` then generates the notebook, the fault variant
and the fault contract from these sources.

:func:`unowned_files` is the other half: the course folders may only hold files that a stage (or the
course) owns, so a file the registry does not know is reported instead of shipped or forgotten.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from forgelab.core.i18n import _
from forgelab.core.registry import Course, RegistryError

TODO = "TODO(new-stage)"
SLUG = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
MODULE = re.compile(r"^forge/[a-z_][a-z0-9_]*\.py$")


@dataclass(frozen=True)
class Scaffold:
    number: str
    slug: str
    module: str
    files: dict[str, str]  # path relative to the root → content


def _snake(number: str, slug: str) -> str:
    return f"{number}_{slug.replace('-', '_')}"


def plan(course: Course, number: str, slug: str, module: str, title: str = "") -> Scaffold:
    """What ``new-stage`` would write; refuses names that clash or do not follow the layout."""
    number = number.zfill(2)
    if not number.isdigit() or len(number) != 2:
        raise RegistryError(_("stage number {number!r}: give two digits, e.g. 11").format(number=number))
    if number in course.by_number:
        raise RegistryError(_("stage {number} already exists ({slug}): choose a free number").format(
            number=number, slug=course.by_number[number].slug))
    if not SLUG.match(slug):
        raise RegistryError(_("slug {slug!r}: use lower-case words joined by hyphens, e.g. tool-call-budget").format(
            slug=slug))
    if not MODULE.match(module):
        raise RegistryError(_("module {module!r}: give a new module of the learner's package, e.g. "
                              "forge/tool_budget.py").format(module=module))
    if any(stage.module == module for stage in course.stages):
        raise RegistryError(_("{module} already belongs to another stage: choose a new module name").format(
            module=module))
    key, snake, name = f"{number}-{slug}", _snake(number, slug), Path(module).stem
    title = title or slug.replace("-", " ").capitalize()
    function = "todo_" + name
    files = {
        f"course/stages/{key}/stage.toml": STAGE_TOML.format(number=number, slug=slug, module=module, title=title, todo=TODO),
        f"course/stages/{key}/demo.py": DEMO.format(name=name, function=function, todo=TODO),
        f"course/stages/{key}/mutants.toml": MUTANTS.format(module=module, todo=TODO),
        f"course/stages/{key}/fault.toml": FAULT.format(key=key, module=module, todo=TODO),
        f"course/stages/{key}/seal.py": SEAL.format(number=number, name=name, function=function, todo=TODO),
        module: STARTER.format(number=number, title=title, function=function, todo=TODO, body=STUB.format(
            function=function, number=number)),
        f"solutions/{module}": STARTER.format(number=number, title=title, function=function, todo=TODO,
                                              body=f"    raise NotImplementedError(\"{TODO}: write the reference\")\n"),
        f"tests/stages/test_{snake}.py": TESTS.format(number=number, name=name, function=function, todo=TODO),
        f"transfer/test_{snake}.py": TRANSFER.format(number=number, name=name, function=function, todo=TODO),
        f"solutions/transfer/test_{snake}.py": TRANSFER_REFERENCE.format(name=name, function=function, todo=TODO),
        f"solutions/answers/{key}.md": f"{TODO}: the reference answer to the design question, covering every rubric point.\n",
    }
    existing = [path for path in files if (course.root / path).exists()]
    if existing:
        raise RegistryError(_("{path} already exists: the scaffold never overwrites a file").format(path=existing[0]))
    return Scaffold(number, slug, module, files)


def write(course: Course, scaffold: Scaffold) -> list[str]:
    for relative, content in scaffold.files.items():
        path = course.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    return sorted(scaffold.files)


def unfinished(course: Course, number: str) -> list[str]:
    """The stage's source files that still carry the scaffold's TODO marker."""
    stage = course.by_number[number]
    candidates = [*(p.relative_to(course.root).as_posix() for p in stage.source_dir.iterdir() if p.is_file()),
                  stage.module, stage.solution_module, stage.test_file, stage.transfer_file, stage.reference_transfer,
                  stage.reference_answer]
    found = []
    for relative in candidates:
        path = course.root / relative
        if path.is_file() and TODO in path.read_text(encoding="utf-8", errors="replace"):
            found.append(relative)
    return sorted(set(found))


# ---------------------------------------------------------------- files nobody owns

COURSE_FOLDERS = ("course", "tests/stages", "transfer", "solutions", "failure_labs", "notebooks", "instructor/checks")
STAGE_SOURCES = re.compile(r"^(stage\.toml|demo\.py|mutants\.toml|fault\.toml|seal\.py|figure[-\w]*\.(svg|mmd|py))$")
COURSE_FILES = ("course/course.toml", "course/glossary.toml", "course/docstrings.toml", "course/learner/README.md",
                "course/learner/README.zh-CN.md")


def owned(course: Course) -> set[str]:
    """Every path (relative to the root) that the registry says belongs to the course."""
    files = set(COURSE_FILES)
    for stage in course.stages:
        files |= {stage.module, stage.solution_module, stage.test_file, stage.transfer_file, stage.reference_transfer,
                  stage.reference_answer, stage.notebook, stage.fault_variant, stage.fault_contract_file, stage.seal_probes,
                  f"{stage.failure_lab}/fixtures/diagnosis.json", stage.reference_regression_test}
    return files


def unowned_files(course: Course) -> list[str]:
    """Files under the course folders that no stage and no course-wide source owns."""
    known = owned(course)
    stage_dirs = {stage.source_dir.name for stage in course.stages}
    checks = {stage.number for stage in course.stages}
    found = []
    for folder in COURSE_FOLDERS:
        base = course.root / folder
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            if not path.is_file() or "__pycache__" in path.parts or path.suffix == ".pyc" or \
                    ".ipynb_checkpoints" in path.parts:
                continue
            relative = PurePosixPath(path.relative_to(course.root).as_posix())
            text = relative.as_posix()
            if text in known or text.endswith("/__init__.py") and text.startswith(("solutions/", "failure_labs/")):
                continue
            parts = relative.parts
            if parts[:2] == ("course", "stages") and len(parts) == 4 and parts[2] in stage_dirs and \
                    STAGE_SOURCES.match(parts[3]):
                continue
            if parts[:2] == ("course", "starters"):  # the bundle's pristine copies of forge/ and transfer/
                continue
            if parts[:2] == ("instructor", "checks") and re.match(r"^test_(\d\d)_\w+\.py$", parts[2]) and \
                    parts[2][5:7] in checks:
                continue
            if parts[0] == "notebooks" and _course_notebook(course, relative):
                continue
            found.append(text)
    return found


def _course_notebook(course: Course, relative: PurePosixPath) -> bool:
    """Stage notebooks of every language edition, and the opening notebook."""
    names = {Path(stage.notebook).name for stage in course.stages} | {"00-opening.ipynb"}
    parts = relative.parts
    if len(parts) == 2:
        return parts[1] in names
    return len(parts) == 3 and parts[1] in course.languages and parts[2] in names


# ---------------------------------------------------------------- the templates

STAGE_TOML = '''# Stage {number} — {todo}: fill in every text below; `forgelab verify-course` refuses this stage while
# any file of it still says {todo}. Paths follow from number, slug and module.
schema = 1
number = "{number}"
slug = "{slug}"
module = "{module}"
scenario = "software"
builds_on = []
required_tests = [
    "test_{todo_name}",
]

[fault]
target_test = "test_{todo_name}"
# a regular expression that the target test's failure output on the broken variant must match
symptom = "{todo}"

[transfer]
scenario = "office"

# Which rungs of the hint ladder (hints below, 1 = the first) address which test: `forgelab hint` reveals first
# the rungs of the first failing test. {todo}: map every test a hint helps with.
[hint_rungs]
test_{todo_name} = [1, 2, 3]

[text.en]
title = "{title}"
capability = "{todo}: one sentence: the capability this stage adds."
problem_title = "{todo}"
problem = "{todo}: what goes wrong without this capability."
what_it_is = "{todo}"
what_it_is_not = "{todo}"
relations = "{todo}"
boundary_decision = "{todo}"
demo_goal = "{todo}"
exercise = "{todo}"
steps = ["{todo}"]
hints = ["{todo}: a nudge", "{todo}: the idea", "{todo}: the key step"]
done_when = ["{todo}"]
mastery = ["{todo}"]

[text.en.prediction]
question = "{todo}"
options = ["{todo}: a real misconception", "{todo}: the answer"]
answer = 1
rationale = "{todo}"

[text.en.fault]
story = "{todo}: what the learner sees, not the cause."
diagnosis = ["{todo}"]
fix_principle = "{todo}"

[text.en.transfer]
scenario = "{todo}"
changed_condition = "{todo}"
task = "{todo}"
criteria = ["{todo}"]

[text.en.design]
question = "{todo}"
rubric = ["{todo}"]
'''.replace("{todo_name}", "todo_write_the_first_behaviour")

STUB = '''    raise NotImplementedError("{function}() is not implemented yet — see hints 1–3 (forgelab hint {number})")
'''

STARTER = '''"""Stage {number} — {title}.

Contract
    {todo}: what the function takes, returns and refuses, in the words a test can check.

Boundary decision
    {todo}: the one decision this stage makes explicit.
"""

from __future__ import annotations


def {function}(value: str) -> str:
    """{todo}: one line on what it returns."""
{body}'''

TESTS = '''"""Stage {number} — {todo}: the stage tests (every name must be listed in required_tests)."""

from __future__ import annotations

import pytest

from forge.{name} import {function}


def test_todo_write_the_first_behaviour() -> None:
    pytest.fail("{todo}: assert the first behaviour of {function}")
'''

TRANSFER = '''"""Transfer challenge, stage {number} — {todo}: the changed scenario, in the learner's words.

Replace the ``pytest.skip`` line with your test, then run ``forgelab check {number}``.
"""

import pytest

from forge.{name} import {function}  # noqa: F401


def test_transfer() -> None:
    pytest.skip("not written yet: replace this line with your test (notebook part 8)")
'''

TRANSFER_REFERENCE = '''"""{todo}: the reference transfer test (it must fail on the fault variant)."""

from forge.{name} import {function}  # noqa: F401


def test_transfer() -> None:
    raise AssertionError("{todo}: write the reference transfer test")
'''

DEMO = '''# %% [markdown] en
# {todo}: the worked demonstration — what we run, what we expect to see, and why.

# %% [markdown] zh
# {todo}: the same in Chinese. Code is written once; a line only one edition runs ends with `  # [en]` or `  # [zh]`.

# %%
from forge.{name} import {function}

print({function}("{todo}"))
'''

SEAL = '''"""Stage {number}'s seal probes — {todo}: inputs the stage tests do not use, whose answers the contract fixes.

The bundle ships the fault lab encrypted with a key made from the reference's answers to these probes
(forgelab.core.seal); `forgelab fault start {number}` opens it with the learner's answers. Record only what the stage
tests pin exactly (never a message an honest implementation may word its own way), as JSON data.
"""

from __future__ import annotations

from collections.abc import Callable

from forge.{name} import {function}


def test_answers(forgelab_record: Callable[[object], None]) -> None:
    forgelab_record([{function}("{todo}")])
'''

MUTANTS = '''# Known-wrong single-point variants of solutions/{module}; each must fail >= 1 stage test.
# {todo}: add [[mutant]] tables (name, find, replace) once the reference is written.
'''

FAULT = '''# The fault lab's defect as find/replace edits of solutions/{module}, applied in order.
# `forgelab build` writes failure_labs/{key}/{module} from them. Never shipped to learners.

[[patch]]
find = "{todo}"
replace = "{todo}: the defect"

# The learner states a diagnosis before repairing (`forgelab fault diagnose NN`): which test shows the defect,
# which function it lies in (both worked out by `forgelab build`), and which of these choices it is. `defect` names
# the true one; the others are real misconceptions. The confirm step is the last diagnosis step, the one that names
# the defect: it opens once the learner's diagnosis is right. `forgelab build` ships only salted digests.
[diagnosis]
defect = "the-defect"

[[diagnosis.choice]]
id = "the-defect"
en = "{todo}: the true defect, in one sentence"
zh = "{todo}: the true defect, in Chinese"

[[diagnosis.choice]]
id = "a-misconception"
en = "{todo}: a real misconception"
zh = "{todo}: the same misconception, in Chinese"

[[diagnosis.choice]]
id = "another-misconception"
en = "{todo}: another real misconception"
zh = "{todo}: the same misconception, in Chinese"

[diagnosis.confirm]
en = "{todo}: Confirm: the step that names the defect and how to see it"
zh = "{todo}: the same step, in Chinese"
'''
