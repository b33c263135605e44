"""The process that runs a learner's own test file (a transfer test): pytest and the course's interface, no forge.

The judge (:mod:`forgelab.judge.relay`) starts it in a sandbox of its own whose read-only code folder
holds the course's interface package ``forge/`` (the pristine starters, where every function and class
of a stage module is remote, see :mod:`forgelab.judge.remote`), the learner's one test file under
``transfer/``, the few judge modules it needs under ``forgelab/``, and ``_judge_tester.py``, which
calls :func:`main`::

    python -s -P _judge_tester.py --limits JSON --language LANG --file transfer/test_NN.py [--file …] -- PYTEST-ARGS...

It runs each ``--file`` in its own pytest session, one after the other, and tells the judge before each one
begins (a ``file`` event: the judge counts that file's limits from then on, see :mod:`forgelab.judge.relay`).

Its standard input and output are the link to the judge (frames, see :mod:`forgelab.judge.wire`); it
moves them aside at once, reads nothing more from standard input and prints to standard error. The
command line, the environment and every descriptor number are the same in every run.

The learner's ``forge`` is not in this process: it runs in another sandbox, the host
(:mod:`forgelab.judge.host`), and every call the test makes travels to it as data through the judge,
which watches the host, relays each frame and answers ``{"op": "limit"}`` when a limit stopped it
(:class:`Link`); the test's events (a test starts, a report) travel on the same link. So forge code
can patch nothing here (pytest, the test module, builtins), and the test
sees forge only through what it does: not its source, not its file names, not its tracebacks. The
folder is the same whichever ``forge`` the host serves, so the test cannot tell the runs apart by
looking around either.

Everything in this process is the learner's code, and what it reports about its tests is taken as its
own claim about its own tests. The rule about handles still holds here as on the trusted side
(:func:`forgelab.judge.channel.handle_allowed`): the host may call only the test file's own functions
and objects and read only their public attributes — never pytest, a module or a built-in of this
process — so that forge code cannot reach into it through a callback either.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from forgelab.core import i18n
from forgelab.core.i18n import _
from forgelab.judge import channel, remote, wire
from forgelab.judge.channel import FrameReader, Host, LimitExceeded
from forgelab.judge.host import apply_limits
from forgelab.judge.outcomes import ImportProblem, Limit
from forgelab.judge.sandbox import Isolation
from forgelab.judge.settings import JudgeSettings

LAUNCHER = '''"""Starts the process that runs the learner's own tests (see forgelab/judge/tester.py)."""
import os
import sys

CODE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, CODE)  # started with -P: the interface forge/ and forgelab/ are here
if sys.argv[1:2] == ["--path"]:  # started with -S: the library folders (forgelab.judge.channel.host_argv)
    from forgelab.judge.host import site_as_before

    site_as_before(sys.argv[2])
    del sys.argv[1:3]

from forgelab.judge.tester import main  # noqa: E402

main(sys.argv[1:], CODE)
'''


class Link(Host):
    """The test's way to the learner's host: frames to the judge, which relays them and watches the host.

    It is a :class:`~forgelab.judge.channel.Host` without a process of its own: the judge starts, watches,
    stops and restarts the real one. Calls, callbacks into the test's objects, rebuilt results and
    exceptions work as on the trusted side.
    """

    def __init__(self, fd_in: int, fd_out: int, settings: JudgeSettings, test_roots: tuple[Path, ...]) -> None:
        super().__init__("forge", Path("."), settings, Isolation(False, "", "relayed by the judge"),
                         remote.resolve_course_class)
        self._to_host, self._from_host = fd_out, fd_in
        self._reader = FrameReader(fd_in)
        self.test_roots = test_roots

    @property
    def alive(self) -> bool:
        return True

    def spawn(self) -> None:
        raise RuntimeError("the learner's host is started by the judge, not by the process that runs the tests")

    def handshake(self, modules: list[str]) -> ImportProblem | None:
        raise RuntimeError("the learner's host is started by the judge, not by the process that runs the tests")

    def close(self) -> None:
        pass

    def event(self, event: dict[str, Any]) -> None:  # free-form: a plain frame, see forgelab.judge.learner_plugin
        """Send one event of the test run (see learner_plugin). When a test starts, the judge starts the host's
        per-test limits again, and a limit the host hits is recorded against that test."""
        wire.write_frame(self._to_host, {"op": "event", "event": event})

    def _exchange(self, message: dict[str, object]) -> dict[str, object]:
        try:
            wire.write_frame(self._to_host, message)
        except OSError:
            raise self._died() from None
        return self._wait()

    def _wait(self) -> dict[str, object]:
        reader = self._reader
        assert reader is not None
        while True:
            try:
                frame = reader.next()
                if frame is None:
                    reader.fill()  # blocks: the writer is the judge
                    continue
            except (wire.ChannelClosed, OSError):
                raise self._died() from None
            if frame.get("op") == "limit":
                limit = str(frame.get("limit"))
                raise LimitExceeded(Limit(limit) if limit in Limit.__members__.values() else Limit.CRASH,
                                    str(frame.get("message", "")))
            return frame

    def _died(self) -> LimitExceeded:
        return LimitExceeded(Limit.CRASH, _("the judge closed the connection to your code"))

    def _stop(self, reason: Limit) -> None:
        pass  # the judge stops the host itself; the next call starts a fresh one


class _LinkPool:
    def __init__(self, link: Link) -> None:
        self.link = link

    def current_host(self) -> Host:
        return self.link


def main(argv: list[str], code_dir: str) -> None:
    link_in, link_out = os.dup(0), os.dup(1)  # the link to the judge, out of the way of pytest and the test
    quiet = os.open(os.devnull, os.O_RDONLY)
    os.dup2(quiet, 0)
    os.close(quiet)
    os.dup2(2, 1)  # what pytest and the test print goes where the judge collects it (and caps it)
    parser = argparse.ArgumentParser(prog="_judge_tester")
    parser.add_argument("--limits", default="{}")
    # only the edition the tester's own words are in: its Link starts and watches no process, the judge holds the
    # learner's host to the settings' limits (forgelab.judge.relay)
    parser.add_argument("--language", default=JudgeSettings().language)
    parser.add_argument("--file", action="append", default=[], help="a test file, relative to the code folder (in "
                        "the order they run)")
    parser.add_argument("rest", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    apply_limits(json.loads(args.limits))
    sys.dont_write_bytecode = True
    settings = JudgeSettings(language=args.language)
    i18n.use(settings.language)
    link = Link(link_in, link_out, settings, ())
    remote.install_pool(_LinkPool(link))
    for module in (remote, channel, sys.modules[__name__]):  # a failure shows the test's lines, not the judge's
        setattr(module, "__tracebackhide__", True)
    from forgelab.judge import learner_plugin  # lazy: it imports pytest, which the judge's side never needs

    learner_plugin.use_sink(link.event)
    import pytest

    rest = args.rest[1:] if args.rest[:1] == ["--"] else args.rest
    code: int | pytest.ExitCode = pytest.ExitCode.NO_TESTS_COLLECTED
    for shown in args.file:
        link.test_roots = ((Path(code_dir) / shown).parent.resolve(),)  # the test's own folder (see handle_allowed)
        link.event({"event": "file", "path": shown})
        code = pytest.main(["-p", "forgelab.judge.learner_plugin", *rest, os.path.join(code_dir, shown)])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(int(code))
