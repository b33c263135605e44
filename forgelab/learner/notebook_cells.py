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

**Only what is saved runs.** When a ``forge`` module that loaded before no longer imports (a syntax, import or name
error in the saved file), its old code stays in the kernel — in ``sys.modules`` and in every name an earlier cell
imported. So every cell that uses it (an import of it, a name that comes from it, or from a module that uses it) says
the module does not import — file, line, message — and runs nothing (:class:`ModuleBlocked`); the next save that
imports cleanly lifts it. **A hang costs one limit:** a call stopped for CPU time marks its module hanging until the
file's content changes, and later cells that use it — and the notebook's test, transfer and summary cells
(:func:`hanging`) — skip their calls with a one-line note.

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
from collections.abc import Iterable
from dataclasses import dataclass
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
REFUSE = "__forgelab_refuse__"
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


# ---------------------------------------------------------------- modules whose code must not run now


@dataclass(frozen=True)
class Blocked:
    """Why a ``forge`` module's code must not run: it no longer imports (``kind`` "import") or a call into it was
    stopped for CPU time (``kind`` "hang"). Holds while its file still has ``digest`` (a save that changes it lifts it)."""

    module: str  # forge.instructions
    path: str  # the file, absolute
    digest: str
    kind: str  # "import" | "hang"
    line: int | None
    message: str

    @property
    def shown(self) -> str:
        return _shown_path(self.path) or self.path

    @property
    def where(self) -> str:
        """``line 56: invalid syntax`` (the message alone when the line is not known)."""
        return _("line {line}: {message}").format(line=self.line, message=self.message) if self.line else self.message

    def holds(self) -> bool:
        return _file_digest(self.path) == self.digest


BLOCKED: dict[str, Blocked] = {}  # module name -> why its code must not run (one kernel per process)


class ModuleBlocked(Exception):
    """A cell was about to use (``used``: a name or a module) code of a blocked module: it runs nothing."""

    def __init__(self, blocked: Blocked, used: str) -> None:
        super().__init__(f"{blocked.shown}: {blocked.message}")
        self.blocked = blocked
        self.used = used


def _file_digest(path: str | Path) -> str | None:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def _forge(name: object) -> bool:
    return isinstance(name, str) and (name == "forge" or name.startswith("forge."))


def _origin(value: object) -> str | None:
    """The ``forge`` module a value comes from (a module, a function or class defined there, an instance of such a
    class), or None."""
    try:
        if isinstance(value, ModuleType):
            name: object = value.__name__
        elif isinstance(value, type) or callable(value):
            name = getattr(value, "__module__", None)
        else:
            name = getattr(type(value), "__module__", None)
    except Exception:  # noqa: BLE001 - an object whose attributes raise comes from no module we know
        return None
    return name if isinstance(name, str) and _forge(name) else None


def _module_file(module: ModuleType) -> str | None:
    path = getattr(module, "__file__", None)
    return str(Path(path).resolve()) if isinstance(path, str) else None


def block(module: str, path: Path, kind: str, line: int | None, message: str) -> None:
    """Mark ``module`` (its file ``path``) as not to run until the file's content changes."""
    digest = _file_digest(path)
    if digest is not None:
        BLOCKED[module] = Blocked(module, str(path.resolve()), digest, kind, line, message)


def blocked_now() -> dict[str, Blocked]:
    """Every blocked module whose file is unchanged, and every loaded ``forge`` module that uses one (a package's
    submodules, a module holding a function, class or module of a blocked one), with the reason it inherits."""
    for name, entry in list(BLOCKED.items()):
        if not entry.holds():
            del BLOCKED[name]
    found = dict(BLOCKED)
    grew = bool(found)
    while grew:
        grew = False
        for name, module in sorted(sys.modules.items()):
            if name in found or not _forge(name) or not isinstance(module, ModuleType):
                continue
            why = next((entry for blocked, entry in found.items() if name.startswith(blocked + ".")), None)
            if why is None:
                why = next((found[origin] for value in list(vars(module).values())
                            if (origin := _origin(value)) in found
                            and not origin.startswith(name + ".")), None)  # a package's own submodules do not count
            if why is not None:
                found[name], grew = why, True
    return found


def hanging(paths: Iterable[Path]) -> Blocked | None:
    """The hang mark on one of these files (a learner's ``forge`` module), if its content is unchanged since."""
    wanted = {str(Path(path).resolve()) for path in paths}
    return next((entry for entry in blocked_now().values() if entry.kind == "hang" and entry.path in wanted), None)


def refuse(user_ns: dict[str, Any],  # free-form: IPython's user namespace
           names: tuple[str, ...], modules: tuple[str, ...]) -> None:
    """Before a cell runs: raise :class:`ModuleBlocked` when it imports a blocked module or uses a name bound to its
    code. ``modules`` are the dotted names the cell imports or reads (``forge.instructions.explain``)."""
    if not BLOCKED:
        return
    found = blocked_now()
    for dotted in modules:
        for name, entry in found.items():
            if dotted == name or dotted.startswith(name + "."):
                raise ModuleBlocked(entry, dotted)
    for name in names:
        if name in user_ns and (origin := _origin(user_ns[name])) in found:
            raise ModuleBlocked(found[origin], name)


def _failure(error: BaseException, path: str) -> tuple[int | None, str]:
    """The line of ``path`` an import failed at, and the message."""
    if isinstance(error, SyntaxError):
        return error.lineno, error.msg
    lines = [frame.lineno for frame in traceback.extract_tb(error.__traceback__)
             if str(Path(frame.filename).resolve()) == path]
    return (lines[-1] if lines else None), f"{type(error).__name__}: {error}"


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


def _import_failure(error: BaseException) -> tuple[str, int] | None:
    """The learner's file and line an exception left while it was being imported (its top level raised), or None."""
    if isinstance(error, (CellTimeLimit, NotImplementedError, SyntaxError)):
        return None
    frames = [frame for frame in traceback.extract_tb(error.__traceback__) if _shown_path(frame.filename)]
    if not frames or frames[-1].name != "<module>" or frames[-1].lineno is None:
        return None
    shown = _shown_path(frames[-1].filename)
    return (shown, frames[-1].lineno) if shown else None


def explain(error: BaseException, failed_before: list[str]) -> str:
    """One short text for an exception in a cell (no traceback wall), in the notebook's language, naming where."""
    marker = _(MARKER)
    if isinstance(error, ModuleBlocked):
        return f"{marker}: " + blocked_text(error.blocked, error.used)
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
    failed_at = _import_failure(error)
    if failed_at is not None:
        return f"{marker}: " + _("{file} does not import — line {line}: {message}. Fix {file}, then run the cell "
                                 "again.").format(file=failed_at[0], line=failed_at[1],
                                                  message=f"{type(error).__name__}: {error}")
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


def blocked_text(blocked: Blocked, used: str) -> str:
    """Why a cell (or a tool of the notebook) ran nothing: the module does not import, or it hangs."""
    if blocked.kind == "hang":
        return _("skipped — {file} was stopped after it ran out of CPU time ({where}); this cell uses {used} from it. "
                 "Save a change to {file}, then run the cell again.").format(
            file=blocked.shown, where=blocked.where, used=used)
    return _("{file} does not import — {where}. This cell uses {used} from it and ran nothing: the code loaded before "
             "your last save does not run. Fix {file}, then run the cell again.").format(
        file=blocked.shown, where=blocked.where, used=used)


def _mark_hang(error: CellTimeLimit) -> None:
    """A call stopped for CPU time in a ``forge`` module: mark that module hanging (innermost learner frame)."""
    by_file = {file: name for name, module in list(sys.modules.items())
               if _forge(name) and isinstance(module, ModuleType) and (file := _module_file(module))}
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        name = by_file.get(str(Path(frame.filename).resolve()))
        if name is not None:
            block(name, Path(frame.filename), "hang", frame.lineno,
                  _("stopped after {seconds} s of CPU time — an endless loop?").format(seconds=int(error.seconds)))
            return


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
                    BLOCKED.pop(name, None)
                except Exception as error:  # its old code stays loaded: no cell may run it (refuse)
                    path = _module_file(module)
                    if path is not None:
                        line, message = _failure(error, path)
                        block(name, Path(path), "import", line, message)
            self.digests[name] = digest
        return reloaded


def _dotted(node: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def _used(tree: ast.AST) -> tuple[set[str], set[str]]:
    """The names a cell reads, and the dotted module paths it imports or reads (``forge.instructions.explain``)."""
    names: set[str] = set()
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and (dotted := _dotted(node)) and _forge(dotted.split(".", 1)[0]):
            modules.add(dotted)
        elif isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules.add(node.module)
            modules.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names, modules


class NoHaltTransformer(ast.NodeTransformer):
    """Wraps a cell::

        __forgelab_guard__.start()
        try: __forgelab_refuse__(<names the cell reads>, <modules it imports>); <cell>
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

        names, modules = _used(node)
        refusal = call(REFUSE, None, ast.Tuple([ast.Constant(name) for name in sorted(names)], ast.Load()),
                       ast.Tuple([ast.Constant(name) for name in sorted(modules)], ast.Load()))
        body.insert(0, refusal)
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
        if isinstance(error, CellTimeLimit):
            _mark_hang(error)
        text = explain(error, failed)
        failed.append(text.removeprefix(f"{_(MARKER)}: ").splitlines()[0][:120])
        print(text)

    def show(value: object) -> None:
        if value is not None:
            from IPython.display import display

            display(value)

    user_ns[HANDLER] = handle
    user_ns[REFUSE] = lambda names, modules: refuse(user_ns, names, modules)
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
