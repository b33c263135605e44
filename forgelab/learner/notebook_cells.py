"""Run All never halts: a learner-facing cell shows what went wrong instead of raising — and where.

``%load_ext forgelab.learner.notebook`` installs :class:`NoHaltTransformer` into the kernel. It wraps every cell's code so
that an exception becomes one short, readable output that names the file and line it came from — "not implemented
yet — see hint 1", a syntax error with its file and line, the learner's own traceback lines, or the line of the
cell itself — and the cell ends normally, so *Run All* reaches the last cell, which says what is still open. A
cell that needs a name an earlier, unfinished cell never defined says so instead of showing a ``NameError``.

**An endless loop stops.** While a cell runs, a CPU-time alarm is armed (:data:`CELL_CPU_SECONDS`; CPU time, so a
busy machine never stops correct code). When the cell's code has used that much, :class:`CellTimeLimit` is raised
where it is running — usually in the learner's loop — and the output names that line; the cell ends, and Run All
goes on. It derives from ``BaseException``, so a learner's ``except Exception`` cannot swallow it.

**Lines are the file's as it is now.** Before each cell, every ``forge`` module whose file changed since it was
loaded is reloaded in place (the code of functions already imported elsewhere is updated too), and tracebacks
read their lines afresh; a frame whose code is older than its file says so instead of pairing an old line number
with a new line.

The reference notebooks are built with the same extension: a reference cell that fails prints :data:`MARKER`
first, and ``forgelab build`` refuses a notebook whose output contains it.
"""

from __future__ import annotations

import ast
import hashlib
import linecache
import signal
import sys
import traceback
from pathlib import Path
from types import FrameType, ModuleType, TracebackType
from typing import Any

from forgelab.core.i18n import LANGUAGES, N_, _, speaking

MARKER = N_("⚠ this cell did not finish")  # shown in the notebook's language; build refuses any edition's form
HANDLER = "__forgelab_explain__"
SHOW = "__forgelab_show__"
FAILED = "__forgelab_failed__"
GUARD = "__forgelab_guard__"
LIMIT = "__forgelab_cell_limit__"
ERROR = "__forgelab_error__"
CELL_CPU_SECONDS = 10  # CPU seconds a cell's code may use before it is stopped as an endless loop
MAX_LEARNER_LINES = 4


class CellTimeLimit(BaseException):
    """The cell's code used more than its CPU time: raised where it was running. Not an ``Exception``, so a
    learner's ``except Exception`` (or a test harness) cannot catch and retry it."""

    def __init__(self, seconds: float) -> None:
        super().__init__(seconds)
        self.seconds = seconds


def markers() -> tuple[str, ...]:
    """:data:`MARKER` in every language the tools speak (``forgelab build`` looks for each)."""
    found = []
    for language in LANGUAGES:
        with speaking(language):
            found.append(_(MARKER))
    return tuple(dict.fromkeys(found))


# ---------------------------------------------------------------- where an error happened


def _shown_path(filename: str) -> str | None:
    """A learner file as they know it (``forge/instructions.py``, ``labs/01-…/forge/x.py``); None for others."""
    parts = Path(filename).parts
    if "forge" not in parts or "forgelab" in parts or "site-packages" in parts:
        return None
    index = parts.index("forge")
    if index >= 2 and parts[index - 2] == "labs":
        index -= 2  # a fault lab's copy: name it as the lab's file, never as the learner's own module
    return "/".join(parts[index:])


def _is_cell(filename: str) -> bool:
    """A notebook cell's code (IPython keeps it in linecache under a name that is no file on disk)."""
    return filename.startswith("<ipython-input") or ("ipykernel_" in filename and not Path(filename).is_file()) or \
        (filename in linecache.cache and not Path(filename).is_file() and filename.endswith(".py"))


def _stale(frame: traceback.FrameSummary, code_first_line: int | None) -> bool:
    """The file changed after this code was loaded: its first line no longer starts the function it ran."""
    if not code_first_line or frame.name.startswith("<"):
        return False
    text = linecache.getline(frame.filename, code_first_line).strip()
    return not text.startswith(("def ", "async def ", "@", "class ")) or (
        text.startswith(("def ", "async def ")) and f" {frame.name}(" not in f" {text.split('def ', 1)[1]}")


def _first_lines(tb: TracebackType | None) -> list[int | None]:
    firsts: list[int | None] = []
    while tb is not None:
        firsts.append(tb.tb_frame.f_code.co_firstlineno)
        tb = tb.tb_next
    return firsts


def where(error: BaseException) -> tuple[list[str], list[str]]:
    """Where an error came from, as lines a learner reads: the cell's own line (the last one of the cell that ran)
    and the learner's files (the innermost few), each with its line as the file reads now."""
    tb = error.__traceback__
    for filename in {frame.filename for frame in traceback.extract_tb(tb)}:
        linecache.checkcache(filename)  # the file as it is now, not as it was first read
    cell: list[str] = []
    learner: list[str] = []
    for frame, first in zip(traceback.extract_tb(tb), _first_lines(tb)):
        shown = _shown_path(frame.filename)
        code = (frame.line or "").strip() or "…"
        if shown is not None:
            line = _("  {file}, line {line}, in {function}: {code}").format(file=shown, line=frame.lineno,
                                                                          function=frame.name, code=code)
            if _stale(frame, first):
                line += " " + _("(this code was loaded before your last edit of the file: run the cell again)")
            learner.append(line)
        elif _is_cell(frame.filename):
            cell = [_("  this cell, line {line}: {code}").format(line=frame.lineno, code=code)]
    return cell, learner[-MAX_LEARNER_LINES:]


def explain(error: BaseException, failed_before: list[str]) -> str:
    """One short text for an exception in a cell (no traceback wall), in the notebook's language, naming where."""
    marker = _(MARKER)
    cell, learner = where(error)
    if isinstance(error, CellTimeLimit):
        head = _("stopped after {seconds} s of CPU time — an endless loop? This is where it was running:").format(
            seconds=int(error.seconds))
        return "\n".join([f"{marker}: {head}", *cell, *learner, _("Fix the loop, then run the cell again; the notebook "
                                                                  "goes on with the next cell.")])
    if isinstance(error, NotImplementedError):
        not_yet = _("not implemented yet")
        message = str(error) or _("this function is not implemented yet — see the hints")
        known = ("not implemented yet", not_yet)
        text = message if any(words in message for words in known) else f"{not_yet} — {message}"
        return "\n".join([f"{marker}: {text}", *(learner[-1:] or cell)])
    if isinstance(error, SyntaxError) and error.filename and _shown_path(error.filename):
        return f"{marker}: " + _("syntax error in {file}, line {line}: {message} — fix it and run the cell again").format(
            file=_shown_path(error.filename), line=error.lineno, message=error.msg)
    if isinstance(error, NameError) and failed_before:
        return f"{marker}: " + _("skipped — it needs {name}, which an earlier cell could not compute ({cell})").format(
            name=getattr(error, "name", None) or _("a name"), cell=failed_before[-1])
    if isinstance(error, ModuleNotFoundError) and (error.name or "").startswith("forge"):
        return f"{marker}: " + _("cannot import {module}: bring the module back with `forgelab starter NN` "
                                 "(see part 6)").format(module=error.name)
    lines = [f"{marker}: {type(error).__name__}: {error}", *cell]
    if learner:
        lines += [_("raised in your code:"), *learner]
    return "\n".join(lines)


# ---------------------------------------------------------------- the CPU alarm


class Guard:
    """Arms a CPU-time alarm while a cell runs (``ITIMER_PROF``: this process's CPU, not the machine's clock)."""

    def __init__(self, seconds: float = CELL_CPU_SECONDS) -> None:
        self.seconds = seconds
        self.available = hasattr(signal, "setitimer") and hasattr(signal, "SIGPROF")
        self._previous: Any = None

    def _fire(self, _signum: int, _frame: FrameType | None) -> None:
        self.stop()
        raise CellTimeLimit(self.seconds)

    def start(self) -> None:
        if not self.available:
            return
        try:
            self._previous = signal.signal(signal.SIGPROF, self._fire)
            signal.setitimer(signal.ITIMER_PROF, self.seconds)
        except ValueError:  # not in the main thread: nothing to guard with
            self.available = False

    def stop(self) -> None:
        if not self.available:
            return
        signal.setitimer(signal.ITIMER_PROF, 0)
        if self._previous is not None:
            signal.signal(signal.SIGPROF, self._previous)
            self._previous = None


# ---------------------------------------------------------------- the learner's edits, reloaded


class Reloader:
    """Reloads every ``forge`` module whose file changed since it was loaded (before each cell), by content (a
    digest, never a file time), and updates in place every function and class an earlier cell imported from it."""

    def __init__(self) -> None:
        self.digests: dict[str, str] = {}
        self.old_objects: dict[Any, Any] = {}  # every generation of each module's objects, updated in place on reload

    @staticmethod
    def _digest(module: ModuleType) -> str | None:
        path = getattr(module, "__file__", None)
        if not path or not Path(path).is_file():
            return None
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()

    @staticmethod
    def _learner_modules() -> list[tuple[str, ModuleType]]:
        return [(name, module) for name, module in sorted(sys.modules.items())
                if (name == "forge" or name.startswith("forge.")) and isinstance(module, ModuleType)]

    def remember(self) -> None:
        """After a cell: the digest of every forge module it loaded for the first time (what was imported)."""
        for name, module in self._learner_modules():
            if name not in self.digests:
                digest = self._digest(module)
                if digest is not None:
                    self.digests[name] = digest

    def check(self) -> list[str]:
        """Before a cell: reload the modules whose file changed since they were loaded; the names reloaded."""
        reloaded = []
        for name, module in self._learner_modules():
            digest = self._digest(module)
            if digest is None:
                continue
            if self.digests.get(name, digest) != digest:
                try:
                    from IPython.extensions.autoreload import superreload

                    superreload(module, old_objects=self.old_objects)  # also updates what earlier cells imported
                    reloaded.append(name)
                except Exception:  # a module that does not import now: the cell's own import will say why
                    pass
            self.digests[name] = digest
        return reloaded


class NoHaltTransformer(ast.NodeTransformer):
    """Wraps a cell::

        __forgelab_guard__.start()
        try: <cell>
        except (Exception, CellTimeLimit) as e: __forgelab_guard__.stop(); __forgelab_explain__(e)
        finally: __forgelab_guard__.stop()

    The last bare expression is shown the way IPython would have shown it."""

    def visit_Module(self, node: ast.Module) -> ast.Module:
        if not node.body:
            return node
        body = list(node.body)
        if isinstance(body[-1], ast.Expr):
            body[-1] = ast.Expr(ast.Call(ast.Name(SHOW, ast.Load()), [body[-1].value], []))

        def call(target: str, method: str | None = None, *args: ast.expr) -> ast.Expr:
            function: ast.expr = ast.Name(target, ast.Load())
            if method:
                function = ast.Attribute(function, method, ast.Load())
            return ast.Expr(ast.Call(function, list(args), []))

        handler = ast.ExceptHandler(
            type=ast.Tuple([ast.Name("Exception", ast.Load()), ast.Name(LIMIT, ast.Load())], ast.Load()), name=ERROR,
            body=[call(GUARD, "stop"), call(HANDLER, None, ast.Name(ERROR, ast.Load()))])
        wrapped = ast.Try(body=body, handlers=[handler], orelse=[], finalbody=[call(GUARD, "stop")])
        module = ast.Module(body=[call(GUARD, "start"), wrapped], type_ignores=[])
        return ast.fix_missing_locations(ast.copy_location(module, node))


def install(shell: Any, seconds: float = CELL_CPU_SECONDS) -> None:
    """Install the transformer, the CPU guard and the reloader into an IPython shell (idempotent)."""
    user_ns = shell.user_ns
    failed: list[str] = user_ns.setdefault(FAILED, [])

    def handle(error: BaseException) -> None:
        text = explain(error, failed)
        failed.append(text.removeprefix(f"{_(MARKER)}: ").splitlines()[0][:120])
        print(text)

    def show(value: object) -> None:
        if value is not None:
            from IPython.display import display

            display(value)

    user_ns[HANDLER] = handle
    user_ns[SHOW] = show
    user_ns[GUARD] = Guard(seconds)
    user_ns[LIMIT] = CellTimeLimit
    transformers = shell.ast_transformers
    if not any(isinstance(t, NoHaltTransformer) for t in transformers):
        transformers.append(NoHaltTransformer())
        reloader = Reloader()
        reloader.remember()
        shell.events.register("pre_run_cell", lambda *_args: reloader.check())
        shell.events.register("post_run_cell", lambda *_args: reloader.remember())
