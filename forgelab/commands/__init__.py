"""Sub-command groups beyond ``check`` and ``materialize``; each module adds its own parsers."""

from __future__ import annotations

import argparse
import importlib

# Each module has ``register(subparsers)``. Imports stay inside the handlers, so that
# `forgelab --help` and `forgelab check` do not pay for tools they do not use.
MODULES = ("learner", "course", "site", "grade", "project", "starters", "i18n")


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    for name in MODULES:
        try:
            module = importlib.import_module(f"forgelab.commands.{name}")
        except ModuleNotFoundError as error:
            if error.name != f"forgelab.commands.{name}":
                raise
            continue
        module.register(sub)
