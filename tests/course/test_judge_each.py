"""Many calls of one learner function in one exchange (``forgelab.judge.remote.each``, the host's ``call_each``).

An instructor check that calls the learner's code with hundreds of random inputs used to cross the sandbox's boundary
once per input. ``each`` sends the calls together and gets their results together; what a test sees must be what the
loop of single calls gives it: the same results, the first exception raised (and the calls after it not run) unless
``errors`` asks for exceptions in place, a stub or a limit always raised, an answer too large for one message fetched
in parts. Each case is a course test run by the judge against a module that misbehaves on request; the report's rows
say how each test ended and how many exchanges it made (``TestRow.trips``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ROOT

from forgelab.core.paths import Workbook
from forgelab.core.registry import load_course
from forgelab.judge import core
from forgelab.judge.core import CourseTests, TargetSpec
from forgelab.judge.outcomes import Limit, Outcome
from forgelab.judge.settings import JudgeSettings
from forgelab.verdicts import jobs

pytestmark = pytest.mark.slow

# The stage-01 reference, with a resolve() that does what the first instruction's value asks for
LEARNER = '''

_reference_resolve = resolve
_CALLS = []


@dataclass(frozen=True)
class Instruction:  # shaped like the course's, but it validates: built by this class, in this process
    source: str
    key: str
    value: str

    def __post_init__(self):
        if self.source not in RANK:
            raise ValueError(f"unknown source {self.source!r}")


def resolve(instructions):
    _CALLS.append(1)
    order = instructions[0].value if instructions else ""
    if order == "boom":
        raise ValueError(f"boom at call {len(_CALLS)}")
    if order == "stub":
        raise NotImplementedError
    if order == "exit":
        raise SystemExit(3)
    if order == "loop":
        while True:
            pass
    if order == "count":
        return {"calls": str(len(_CALLS))}, []
    return _reference_resolve(instructions)
'''

TESTS = '''
import pytest

from forge.instructions import Instruction, resolve
from forgelab.judge.channel import NotImplementedYet
from forgelab.judge.remote import Call, active_pool, each


def calls_so_far():
    return int(resolve([Instruction("user", "n", "count")])[0]["calls"])


def sets(count):
    sources = ["system", "developer", "user", "retrieved"]
    return [[Instruction(sources[(n + i) % 4], ["write", "tone"][i % 2], f"v{n}-{i}") for i in range(n % 5)]
            for n in range(count)]


def test_one_exchange_gives_what_the_loop_gives():
    cases = sets(60)
    assert each(resolve, [Call(list(items)) for items in cases]) == [resolve(list(items)) for items in cases]


def test_the_first_error_is_raised_and_the_calls_after_it_do_not_run():
    before = calls_so_far()
    calls = [Call([Instruction("user", "a", "x")]), Call([Instruction("user", "a", "boom")]),
             Call([Instruction("user", "a", "y")])]
    with pytest.raises(ValueError, match="boom at call"):
        each(resolve, calls)
    assert calls_so_far() == before + 3  # two of the three calls ran, then this one


def test_errors_take_their_calls_place_and_the_calls_go_on():
    before = calls_so_far()
    outcomes = each(resolve, [Call([Instruction("user", "a", value)]) for value in ("x", "boom", "exit", "y")],
                    errors=True)
    assert outcomes[0] == ({"a": "x"}, []) and outcomes[3] == ({"a": "y"}, [])
    assert isinstance(outcomes[1], ValueError) and str(outcomes[1]) == f"boom at call {before + 2}"
    assert isinstance(outcomes[2], Exception) and not isinstance(outcomes[2], ValueError)  # SystemExit, as data
    assert calls_so_far() == before + 5


def test_a_stub_is_raised_even_where_errors_are_kept():
    with pytest.raises(NotImplementedYet):
        each(resolve, [Call([Instruction("user", "a", "x")]), Call([Instruction("user", "a", "stub")])], errors=True)


def test_an_answer_larger_than_one_message_comes_in_parts():
    big = [[Instruction("system", "write", f"{n}" * 200_000)] for n in range(12)]
    assert each(resolve, [Call(items) for items in big]) == [({"write": f"{n}" * 200_000}, []) for n in range(12)]


def test_the_learners_class_builds_many_instances_in_one_exchange():
    built = each(Instruction, [Call("user", "a", "x"), Call("nobody", "a", "x"), Call(source="system", key="b",
                                                                                        value="y")], errors=True)
    assert built[0] == Instruction("user", "a", "x") and built[2] == Instruction("system", "b", "y")
    assert isinstance(built[1], ValueError) and "nobody" in str(built[1])


def test_a_plain_function_is_called_here():
    assert each(len, [Call([1, 2]), Call("abc")]) == [2, 3]
    assert isinstance(each(int, [Call("x")], errors=True)[0], ValueError)


@pytest.mark.watch_arguments
def test_a_test_that_watches_its_arguments_calls_one_by_one():
    assert each(resolve, [Call([Instruction("user", "a", "x")]) for _ in range(3)]) == [({"a": "x"}, [])] * 3


def test_a_loop_inside_the_calls_stops_at_the_cpu_limit():
    each(resolve, [Call([Instruction("user", "a", "x")]), Call([Instruction("user", "a", "loop")])])


def test_a_loop_in_a_lone_call_stops_at_the_cpu_limit():
    resolve([Instruction("user", "a", "loop")])


def test_after_the_limit_a_new_process_answers():
    assert each(resolve, [Call([Instruction("user", "a", "x")])]) == [({"a": "x"}, [])]
'''


def test_each_behaves_as_the_loop_of_single_calls_would(tmp_path: Path) -> None:
    course = load_course(ROOT)
    workbook = Workbook(ROOT, ROOT)
    (tmp_path / "course").mkdir()
    (tmp_path / "course" / "test_each.py").write_text(TESTS, encoding="utf-8")
    code = tmp_path / "code" / "forge"
    code.mkdir(parents=True)
    reference = (ROOT / "solutions" / "forge" / "instructions.py").read_text(encoding="utf-8")
    (code / "instructions.py").write_text(reference + LEARNER, encoding="utf-8")
    stage = course.stage("01")
    starters = jobs.starters(workbook)
    target = TargetSpec("learner", (starters / "forge", code), "01", (stage.module,))
    job = core.Job(tmp_path / "course", starters, jobs.stage_modules(course), (target,),
                   (CourseTests("learner", ("test_each.py",)),))
    report = core.run(job, JudgeSettings(test_cpu_s=3, max_limit_hits=3))  # two tests loop on purpose
    assert report.problem is None, report.problem
    rows = {row.name: row for row in report.rows}
    looping = rows.pop("test_a_loop_inside_the_calls_stops_at_the_cpu_limit")
    alone = rows.pop("test_a_loop_in_a_lone_call_stops_at_the_cpu_limit")
    assert (looping.outcome, looping.limit) == (Outcome.TIMEOUT, Limit.CPU), looping
    assert (alone.outcome, alone.limit, alone.cause) == (looping.outcome, looping.limit, looping.cause)  # same words
    assert {name: (row.outcome, row.cause) for name, row in rows.items() if row.outcome is not Outcome.PASSED} == {}
    # 120 instructions built one by one by the learner's class, 60 single calls and one exchange for the same 60;
    # in a test that watches its arguments, every call is one exchange
    assert rows["test_one_exchange_gives_what_the_loop_gives"].trips == 120 + 60 + 1
    assert rows["test_a_test_that_watches_its_arguments_calls_one_by_one"].trips == 3 + 3  # 3 built, 3 called
    assert rows["test_a_plain_function_is_called_here"].trips == 0
    # the learner's class is not the course's plain dataclass: its instances are built there, all in one exchange
    assert rows["test_the_learners_class_builds_many_instances_in_one_exchange"].trips == 1 + 2  # and 2 to compare
    assert rows["test_an_answer_larger_than_one_message_comes_in_parts"].trips >= 2
