"""Stage 04's seal probes: inputs the stage tests do not use, whose answers the contract fixes exactly.

The fault lab opens with a key made from these answers (forgelab.core.seal): the fields of each parsed
specification, and for each payload the contract refuses only that it was refused, and the unknown fields it
names (never the rest of the message, which an honest parser may word its own way).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from forge.task_spec import TaskSpec

GOOD = [{"goal": "rename the export button", "acceptance": ["label reads Export CSV"], "write_allowed": True},
        {"goal": "summarise the meeting", "inputs": ["notes.md", "agenda.md"], "outputs": ["summary.md"],
         "acceptance": ["under 200 words", "lists every decision"], "write_allowed": False}]
REFUSED = [{"goal": "tidy the repo", "acceptance": ["tests pass"], "write_allowed": "true"},
           {"goal": "tidy the repo", "acceptance": "tests pass", "write_allowed": False},
           {"goal": "tidy the repo", "acceptance": ["tests pass"]},
           {"goal": "\t", "acceptance": ["tests pass"], "write_allowed": False},
           {"goal": "tidy the repo", "acceptance": ["tests pass"], "inputs": ["a", 7], "write_allowed": False},
           ["goal", "tidy the repo"]]
UNKNOWN = {"goal": "tidy", "acceptance": ["ok"], "write_allowed": False, "sudo": True, "Priority": 1, "after": "x"}


def test_parsed(forgelab_record: Callable[[object], None]) -> None:
    specs = [TaskSpec.parse(payload) for payload in GOOD]
    forgelab_record([[s.goal, list(s.inputs), list(s.outputs), list(s.acceptance), s.write_allowed] for s in specs])


def test_refused(forgelab_record: Callable[[object], None]) -> None:
    refused = []
    for payload in REFUSED:
        try:
            TaskSpec.parse(payload)  # type: ignore[arg-type]
        except ValueError:
            refused.append(True)
        else:
            refused.append(False)
    forgelab_record(refused)


def test_unknown_fields_named(forgelab_record: Callable[[object], None]) -> None:
    try:
        TaskSpec.parse(UNKNOWN)
    except ValueError as error:
        named = re.search(r"unknown fields:\W*(.*)", str(error))
        forgelab_record(sorted(name for name in ("Priority", "after", "sudo") if named and name in named.group(1)))
