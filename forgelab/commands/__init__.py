"""Sub-command groups beyond ``check`` and ``materialize``; each module adds its own parsers.

The learner's commands and the course repository's (instructors, course authors) are apart: an unzipped
learner bundle offers only the first (``forgelab --help`` lists nothing a learner cannot use there), and
names the others as tools of the course repository when someone types one.
"""

from __future__ import annotations

import argparse
import importlib

# Each module has ``register(subparsers)``. Imports stay inside the handlers, so that
# `forgelab --help` and `forgelab check` do not pay for tools they do not use.
MODULES = ("learner", "course", "site", "grade", "grade_report", "project", "starters", "i18n")  # the order `--help` lists them in
LEARNER_MODULES = frozenset({"learner", "project", "starters"})  # the others are the course repository's
# what the course repository offers beyond the learner's commands (cli.py adds `materialize` there itself)
INSTRUCTOR_COMMANDS = ("materialize", "new-stage", "build", "verify-course", "nbval", "site", "release", "grade",
                       "gradebook", "i18n", "grade-report")
# two words typed as one command: `forgelab grade report OUT` is the parser `grade-report` (a submission folder that
# is really called `report` is graded as `forgelab grade ./report`)
COMPOUND = {("grade", "report"): "grade-report"}


def route(arguments: list[str]) -> list[str]:
    """``arguments`` with a compound command (:data:`COMPOUND`) joined into its parser's name."""
    words = [index for index, item in enumerate(arguments) if not item.startswith("-")][:2]
    if len(words) == 2 and words[1] == words[0] + 1:
        joined = COMPOUND.get((arguments[words[0]], arguments[words[1]]))
        if joined:
            return [*arguments[:words[0]], joined, *arguments[words[1] + 1:]]
    return arguments


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]", *, learner_only: bool = False) -> None:
    for name in MODULES:
        if learner_only and name not in LEARNER_MODULES:
            continue
        try:
            module = importlib.import_module(f"forgelab.commands.{name}")
        except ModuleNotFoundError as error:
            if error.name != f"forgelab.commands.{name}":
                raise
            continue
        module.register(sub)
