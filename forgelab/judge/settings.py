"""The judge's limits and modes, in one object that every caller passes down explicitly.

Nothing here is read from the environment at import time. A command builds a
:class:`JudgeSettings` (from its flags, or the defaults) and hands it to the judge; the judge writes
it into the job description of the processes it starts (:class:`forgelab.judge.messages.SessionJob`), where it is
read back strictly: an unknown field, a string for a number or an unknown sandbox mode is an error naming the field.
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, replace
from typing import Any, ClassVar


HOST_CPU_TOTAL_S = 600  # a hard cap on one learner process's whole life (the per-test limit is watched from outside)


class SandboxMode(enum.StrEnum):
    AUTO = "auto"  # bubblewrap when it works here, otherwise run without it (learners' own machines)
    REQUIRED = "required"  # bubblewrap or refuse (grading)
    OFF = "off"  # never (an instructor's explicit --unsandboxed)


@dataclass(frozen=True)
class JudgeSettings:
    """Limits for learner code. "Endless" is measured in CPU time, so a busy machine fails no one.

    * ``test_cpu_s`` — CPU seconds the learner's code may use during one test (all its calls), and while
      its module is imported; a run of the learner's own tests gets ``learner_tests_factor`` times that;
    * ``test_wall_s`` — a generous wall-clock limit per test, for code that waits instead of computing (both wall
      limits leave out the time the code was ready to run but waiting for a CPU: a busy machine is not the learner's);
    * ``submission_wall_s`` — the wall-clock time the learner's code of one run may take in all, waiting
      included: once in the course's tests (every call, import and callback answer added up) and once in the
      learner's own tests (every run of them added up); what is left after it is used up is not run;
    * ``session_wall_s`` — the whole test session, course code included: a last resort against a grader that
      broke (the budgets above stop the learner's code long before);
    * ``learner_tests_wall_s`` — one run of tests the learner wrote, in wall-clock seconds;
    * ``memory_mb``, ``file_mb``, ``open_files``, ``processes`` — per process in the sandbox;
    * ``output_kb`` — what the learner's code may print per process before it is stopped;
    * ``max_limit_hits`` — after this many tests of one target hit a limit, its other tests are not run.
    """

    # read strictly wherever it crosses a process boundary inside a message (forgelab.judge.messages)
    __pydantic_config__: ClassVar[dict[str, object]] = {"strict": True, "extra": "forbid"}

    test_cpu_s: int = 10
    test_wall_s: int = 90
    submission_wall_s: int = 600
    session_wall_s: int = 1800
    learner_tests_factor: int = 2
    learner_tests_wall_s: int = 300
    memory_mb: int = 1536
    file_mb: int = 64
    open_files: int = 256
    processes: int = 64
    output_kb: int = 4096
    max_limit_hits: int = 2
    sandbox: SandboxMode = SandboxMode.AUTO
    language: str = "en"  # the edition the judge's own words are in (causes, "not run" reasons)

    @property
    def import_cpu_s(self) -> int:
        return self.test_cpu_s

    @property
    def learner_tests_cpu_s(self) -> int:
        return self.test_cpu_s * self.learner_tests_factor

    def with_(self, **changes: Any) -> JudgeSettings:
        return replace(self, **changes)

    def as_dict(self) -> dict[str, int | str]:
        """Every setting by its name, as the gradebook records what a grading run was held to."""
        return {name: str(value) if isinstance(value, enum.Enum) else value for name, value in asdict(self).items()}

    def host_limits(self) -> dict[str, int]:
        """What the sandboxed process sets on itself (hard limits) before learner code runs."""
        return {"memory_mb": self.memory_mb, "file_mb": self.file_mb, "open_files": self.open_files,
                "processes": self.processes, "cpu_total_s": HOST_CPU_TOTAL_S}


DEFAULT = JudgeSettings()
