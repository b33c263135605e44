"""The ``forgelab`` command's entry point (and ``python -m forgelab.cli``'s): the command line, once
``forgelab check NN`` has started its trusted session and the sandbox's probe.

A cold check's longest paths are the trusted session's start (a new Python importing pytest) and the sandbox's
probe (a bubblewrap start); both used to begin once the command line had loaded its modules and built its parser,
a twelfth of a second in. Here they begin first, with only :mod:`forgelab.judge.early` loaded (which loads no more
than starting a process needs), while the command line loads beside them on the other CPU: the same session and
the same probe, started sooner (see :mod:`forgelab.judge.early`). Any other command is not delayed: this module
imports nothing else, and its guess at the command line (:func:`one_stage_check`) only ever starts what ``check``
would start itself; a session the command then does not use is closed when it ends.
"""

from __future__ import annotations

import sys
from types import ModuleType

# the options of `check` (and the command line's own) that take a value: the word after them is not a stage
VALUED = frozenset({"--target", "--out", "--cpu-limit", "--lang", "--why"})


def one_stage_check(arguments: list[str]) -> bool:
    """Is this ``forgelab check NN`` (one stage, by number, without ``--why`` or help)? Only then does ``check``
    start its session early (:func:`forgelab.cli.main.cmd_check`); a word this reading is not sure of says no."""
    words: list[str] = []
    skip = False
    for word in arguments:
        if skip:
            skip = False
        elif word in ("-h", "--help") or word.startswith("--why"):
            return False
        elif word in VALUED:
            skip = True
        elif word == "--" or (word.startswith("-") and "=" not in word and word != "--unsandboxed"):
            return False  # an option this reading does not know (or an abbreviation argparse would accept)
        elif not word.startswith("-"):
            words.append(word)
    return len(words) == 2 and words[0] == "check" and words[1].isdigit()


def main() -> int:
    """Run the command line (:func:`forgelab.cli.main.main`), the check's session started first."""
    starter: ModuleType | None = None  # forgelab.judge.early, once it has started something
    try:
        if one_stage_check(sys.argv[1:]):
            # lazy: only `check NN` loads the judge's starter, and before the command line
            from forgelab.judge import early

            starter = early
            early.start_session()
            early.probe_sandbox()
        # lazy: the command line loads after the session started (start-up speed, see the module's docstring)
        from forgelab.cli.main import main as command_line

        return command_line()
    except KeyboardInterrupt:  # Ctrl-C while the command line still loads: said as the command line says it
        # lazy: only this way out needs them
        from forgelab.core.display import fail
        from forgelab.core.i18n import _

        return fail(_("interrupted"))
    finally:
        if starter is not None:
            starter.discard()  # not used (the command stopped before `check` took it): it ends with the command
