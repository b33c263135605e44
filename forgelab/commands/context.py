"""What every command handler needs, in one place that imports no handler (so nothing imports ``cli``).

``open_workbook()`` finds the workbook and reads its course; ``judge_settings(args)`` turns the
judge's flags into the one settings object the judge is given; ``add_judge_flags`` adds those flags.
"""

from __future__ import annotations

import argparse

from forgelab.judge.settings import DEFAULT, JudgeSettings
from forgelab.paths import Workbook
from forgelab.registry import Course, load_course


def open_workbook() -> tuple[Workbook, Course]:
    workbook = Workbook.locate()
    return workbook, load_course(workbook.root)


def judge_settings(args: argparse.Namespace) -> JudgeSettings:
    """The judge's settings from a command's flags (defaults otherwise), in the language the command speaks."""
    from forgelab.i18n import active

    cpu = getattr(args, "cpu_limit", None)
    settings = DEFAULT.with_(language=active())
    return settings.with_(test_cpu_s=int(cpu)) if cpu else settings


def add_judge_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cpu-limit", type=int, metavar="SECONDS",
                        help="CPU seconds your code may use in one test before it counts as an endless loop (default 10)")
