"""What every command handler needs, in one place that imports no handler (so nothing imports ``cli``).

``open_workbook()`` finds the workbook and reads its course; ``judge_settings(args)`` turns the
judge's flags into the one settings object the judge is given; ``add_judge_flags`` adds those flags.
"""

from __future__ import annotations

import argparse
from typing import Any

from forgelab.core.i18n import N_, _, active
from forgelab.judge.settings import DEFAULT, JudgeSettings, SandboxMode
from forgelab.core.paths import Workbook
from forgelab.core.registry import Course, load_course
from forgelab.core.display import fail


COURSE_CACHE = "course-cache.json"  # in the workspace's state folder (forgelab.core.registry: keyed by every byte read)


def open_workbook() -> tuple[Workbook, Course]:
    """The workbook and its course, read through the course cache in the workspace's state folder."""
    workbook = Workbook.locate()
    return workbook, load_course(workbook.root, cache=workbook.state_dir / COURSE_CACHE)


def judge_settings(args: argparse.Namespace) -> JudgeSettings:
    """The judge's settings from a command's flags (defaults otherwise), in the language the command speaks."""
    cpu = getattr(args, "cpu_limit", None)
    settings = DEFAULT.with_(language=active())
    return settings.with_(test_cpu_s=int(cpu)) if cpu else settings


def add_judge_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cpu-limit", type=int, metavar="SECONDS",
                        help=_("CPU seconds your code may use in one test before it counts as an endless loop (default 10)"))


UNSANDBOXED_WARNING = N_("warning: the target's code ran WITHOUT the sandbox (--unsandboxed): it could read and write "
                         "what you can; use this only for code you trust")


def add_unsandboxed_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--unsandboxed", action="store_true",
                        help=_("with --target PATH: run that code even where the sandbox cannot start (NOT safe for "
                               "someone else's code)"))


def sandbox_settings(settings: JudgeSettings, unsandboxed: bool) -> JudgeSettings:
    """A path target is someone else's code: the sandbox ``grade`` uses, required — or, when asked, none."""
    return settings.with_(sandbox=SandboxMode.OFF if unsandboxed else SandboxMode.REQUIRED)


def sandbox_refusal(reason: str) -> int:
    """The one-line refusal when a path target's code would have to run without the sandbox."""
    return fail(_("refusing to run the target's code: it is someone else's code, so it runs only in the sandbox "
                  "(as `forgelab grade` does), and {reason}").format(reason=reason),
                _("run it on Linux where bubblewrap works (user namespaces enabled), or add --unsandboxed for code "
                  "you trust"))


def sandbox_for_path_target(bench: Any, args: argparse.Namespace) -> int | None:
    """Make ``bench`` (a Workbench) run a path target's code in the sandbox, or refuse (the exit status) when it
    cannot start; with ``--unsandboxed``, say so first."""
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.judge.sandbox import SandboxUnavailable, isolation

    unsandboxed = bool(getattr(args, "unsandboxed", False))
    bench.settings = sandbox_settings(bench.settings, unsandboxed)
    if unsandboxed:
        print(_(UNSANDBOXED_WARNING), flush=True)
        return None
    try:
        isolation(bench.settings.sandbox)
    except SandboxUnavailable as error:
        return sandbox_refusal(error.reason)
    return None
