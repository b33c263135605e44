"""The learner's side of the boundary: a small server that runs inside the sandbox.

It is copied, with ``wire.py`` (as ``_judge_wire.py``), into the sandbox's read-only code folder next
to the learner's ``forge/`` package and started as::

    python -S -P _judge_host.py --in FD --out FD --limits JSON --path FOLDERS serve

``serve`` answers calls: import a ``forge`` module, call one of its functions with arguments that
arrive as data, and send back the result (or the exception) as data. When the learner's code calls
back into an object that lives on the caller's side (a test's fake model, a callback), the call
travels back as data too. The caller is the judge's trusted session (the course's tests) or, relayed
by the judge, the separate sandbox that runs the learner's own tests (:mod:`forgelab.judge.relay`):
no test ever shares a process with the learner's ``forge``.

The process that runs the learner's own tests imports this module as ``forgelab.judge.host`` for
:func:`apply_limits` only.

This file imports nothing of forgelab and holds nothing secret: everything it does on behalf of the
learner's code can also be done by that code itself. Resource limits (memory, file size, open files,
processes, CPU time) are set here before any learner code is imported; the hard limits cannot be
raised again from inside.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import resource
import signal
import sys
import traceback
from types import ModuleType
from typing import TYPE_CHECKING, Any

CODE_DIR = os.path.dirname(os.path.abspath(__file__))

if TYPE_CHECKING or __package__:  # imported as forgelab.judge.host (for apply_limits)
    from forgelab.judge import wire
else:
    sys.path.insert(0, CODE_DIR)  # started with -P: the code folder is not on the path by itself
    import _judge_wire as wire  # the copy of forgelab/judge/wire.py next to this file


# ---------------------------------------------------------------- limits


def apply_limits(limits: dict[str, int]) -> None:
    """Hard limits for this process and everything it starts (they are inherited)."""
    mb = 1024 * 1024

    def both(kind: int, value: int) -> None:
        try:
            soft, hard = resource.getrlimit(kind)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(kind, (value, value))
        except (ValueError, OSError):
            pass  # a platform without this limit (e.g. RLIMIT_AS on macOS): the judge's watchdog remains

    if limits.get("memory_mb"):
        both(resource.RLIMIT_AS, int(limits["memory_mb"]) * mb)
    if limits.get("file_mb"):
        both(resource.RLIMIT_FSIZE, int(limits["file_mb"]) * mb)
    if limits.get("open_files"):
        both(resource.RLIMIT_NOFILE, int(limits["open_files"]))
    if limits.get("processes") and hasattr(resource, "RLIMIT_NPROC"):
        both(resource.RLIMIT_NPROC, int(limits["processes"]))
    both(resource.RLIMIT_CORE, 0)
    if limits.get("cpu_total_s"):
        total = int(limits["cpu_total_s"])
        try:
            resource.setrlimit(resource.RLIMIT_CPU, (total, total + 5))
        except (ValueError, OSError):
            pass
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an oversized write fails with EFBIG instead of killing us
    if limits.get("become") and os.getuid() == 0:
        become(int(limits["become"]))


def become(uid: int) -> None:
    """Give up root for ``uid`` (and the same gid), for good: the sandbox starts as root inside a user namespace
    that the judge made when it runs as root itself, and the kernel limits the processes only of a user who is
    not root outside it (see forgelab/judge/sandbox.py). No capability survives, and none can be gained."""
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    for name in os.listdir("/proc/self/fd"):  # the user namespace bubblewrap joined: nothing to keep it for
        try:
            if os.readlink(f"/proc/self/fd/{name}").startswith("user:["):
                os.close(int(name))
        except (OSError, ValueError):
            pass
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS: no set-uid program helps
    except (OSError, AttributeError):
        pass
    if os.getuid() != uid or os.geteuid() != uid:
        raise SystemExit("the sandbox could not give up root")


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# ---------------------------------------------------------------- locating learner code


def learner_frames(tb: Any) -> str:
    """The traceback, cut to the frames in the learner's files, paths shown relative to the workbook."""
    lines = []
    for frame in traceback.extract_tb(tb):
        path = os.path.abspath(frame.filename)
        if not path.startswith(CODE_DIR + os.sep) or os.path.basename(path).startswith("_judge_"):
            continue
        relative = os.path.relpath(path, CODE_DIR)
        lines.append(f'  File "{relative}", line {frame.lineno}, in {frame.name}')
        if frame.line:
            lines.append(f"    {frame.line.strip()}")
    return "\n".join(lines)


def last_learner_line(tb: Any) -> tuple[str, int]:
    found = ("", 0)
    for frame in traceback.extract_tb(tb):
        path = os.path.abspath(frame.filename)
        if path.startswith(CODE_DIR + os.sep) and not os.path.basename(path).startswith("_judge_"):
            found = (os.path.relpath(path, CODE_DIR), frame.lineno or 0)
    return found


def import_problem(name: str, error: BaseException) -> dict[str, object]:
    """Why ``import name`` failed, as data: kind (missing | syntax | import), file, line, message."""
    if isinstance(error, SyntaxError):
        path = error.filename or ""
        shown = os.path.relpath(os.path.abspath(path), CODE_DIR) if path else ""
        return {"module": name, "kind": "syntax", "type": type(error).__name__, "message": wire.cap(str(error.msg), 300),
                "file": shown, "line": error.lineno or 0}
    file, line = last_learner_line(error.__traceback__)
    missing = isinstance(error, ModuleNotFoundError) and (error.name == name or error.name == "forge")
    try:
        message = str(error).splitlines()[0] if str(error) else ""
    except Exception:  # noqa: BLE001
        message = ""
    return {"module": name, "kind": "missing" if missing else "import", "type": type(error).__name__,
            "message": wire.cap(message, 300), "file": file, "line": line}


def load_module(name: str) -> ModuleType:
    if not wire.is_forge_module(name):
        raise wire.WireError(f"only forge modules can be called, not {name!r}")
    loaded = sys.modules.get(name)  # what import_module would return for a module already imported, found sooner
    return loaded if isinstance(loaded, ModuleType) else importlib.import_module(name)


def resolve(path: str) -> Any:
    """``"forge.x:Name.attr"`` → the object, looked up in the learner's own modules."""
    module_name, _, qualname = path.partition(":")
    target: Any = load_module(module_name)
    for part in qualname.split("."):
        if not part or part.startswith("__"):
            raise wire.WireError(f"{path!r} does not name a public attribute")
        try:
            target = getattr(target, part)
        except AttributeError:
            raise AttributeError(f"{module_name.replace('.', '/')}.py has no {qualname!r}: "
                                 "it must keep the name the starter gave it") from None
    return target


def resolve_class(path: str) -> Any:
    found = resolve(path)
    if not isinstance(found, type):
        raise wire.WireError(f"{path} is not a class in the learner's code")
    return found


# ---------------------------------------------------------------- the server


class TrustedObject:
    """Stands in for an object that lives on the judge's side; every use is a call across the boundary."""

    __slots__ = ("_server", "_handle")
    _server: Server
    _handle: int

    def __init__(self, server: Server, handle: int) -> None:
        object.__setattr__(self, "_server", server)
        object.__setattr__(self, "_handle", handle)

    def __call__(self, *args: object, **kwargs: object) -> object:
        return self._server.callback({"op": "callback", "handle": self._handle}, args, kwargs)

    def __getattr__(self, name: str) -> object:
        if name.startswith("__"):
            raise AttributeError(name)
        return self._server.callback({"op": "getattr", "handle": self._handle, "name": name}, (), {})

    def __repr__(self) -> str:
        return f"<object from the test, handle {self._handle}>"


class Server:
    def __init__(self, fd_in: int, fd_out: int) -> None:
        self.fd_in, self.fd_out = fd_in, fd_out
        self.handles: dict[int, object] = {}
        self.handle_ids: dict[int, int] = {}

    # handles for objects of ours that cannot travel as data (a returned closure)
    def register(self, value: object) -> int:
        key = id(value)
        if key in self.handle_ids:
            return self.handle_ids[key]
        number = len(self.handles) + 1
        self.handles[number] = value
        self.handle_ids[key] = number
        return number

    def encoder(self, arguments: tuple[object, ...] = ()) -> wire.Encoder:
        return wire.Encoder(handle=self.register, arguments=arguments, returning=self.returning)

    def decoder(self) -> wire.Decoder:
        return wire.Decoder(resolve_class, stub=lambda number: TrustedObject(self, number), own=self.own)

    def own(self, number: int) -> object:
        if number not in self.handles:
            raise wire.WireError(f"no object with handle {number} was handed out")
        return self.handles[number]

    def returning(self, value: object) -> int | None:
        if isinstance(value, TrustedObject) and value._server is self:
            return value._handle
        return None

    def send(self, message: dict[str, object]) -> None:
        wire.write_frame(self.fd_out, message)

    def error(self, error: BaseException, kind: str = "exception") -> dict[str, object]:
        text = learner_frames(error.__traceback__)
        described = wire.describe_exception(error, self.encoder(), text)
        described["kind"] = kind
        return described

    # a call from our side into the judge's side (learner code used a TrustedObject)
    def callback(self, request: dict[str, object], args: tuple[object, ...], kwargs: dict[str, object]) -> object:
        encoder = self.encoder()
        request = {**request, "args": [encoder.encode(a) for a in args],
                   "kwargs": [[k, encoder.encode(v)] for k, v in kwargs.items()]}
        self.send(request)
        while True:
            message = wire.read_frame(self.fd_in)
            op = message["op"]
            if op in ("return", "raise"):
                self.restore(args, message)
            if op == "return":
                return self.decoder().decode(message.get("value"))
            if op == "raise":
                raise rebuild_trusted_error(message.get("error"), self.decoder())
            self.handle(message)

    def restore(self, args: tuple[object, ...], message: dict[str, object]) -> None:
        """The judge's side changed some arguments of a callback in place: change ours the same way."""
        decoder = self.decoder()
        for pair in wire.items_of(message, "mutated"):
            if isinstance(pair, list) and len(pair) == 2 and type(pair[0]) is int and 0 <= pair[0] < len(args):
                wire.apply_in_place(args[pair[0]], decoder.decode(pair[1]))

    def serve(self) -> None:
        while True:
            try:
                message = wire.read_frame(self.fd_in)
            except wire.ChannelClosed:
                return
            if message["op"] == "shutdown":
                return
            self.handle(message)

    def handle(self, message: dict[str, object]) -> None:
        op = message["op"]
        if isinstance(message.get("cpu_s"), int):
            self.limit_cpu(wire.number_of(message, "cpu_s"))
        if op == "import":
            problems = []
            for name in wire.items_of(message, "modules"):
                try:
                    load_module(str(name))
                except BaseException as error:  # noqa: BLE001 - every failure at import time is reported
                    problems.append(import_problem(str(name), error))
            self.send({"op": "imported", "problems": problems})
        elif op in ("call", "call_handle", "get_handle"):
            self.call(message)
        elif op == "call_each":
            self.call_each(message)
        elif op == "setattr":
            self.assign(message)
        elif op == "shape":
            shapes = []
            for path in wire.items_of(message, "classes"):
                try:
                    shapes.append(wire.class_shape(resolve_class(str(path)), self.encoder()))
                except BaseException as error:  # noqa: BLE001 - a missing class: the judge constructs remotely
                    shapes.append({"kind": "unknown", "why": wire.cap(f"{type(error).__name__}: {error}", 200)})
            self.send({"op": "shapes", "shapes": shapes})
        else:
            self.send({"op": "raise", "error": {"kind": "boundary", "module": "", "qualname": "WireError",
                                                 "bases": ["ValueError"], "message": f"unknown request {op!r}"}})

    def assign(self, message: dict[str, object]) -> None:
        """``instance.name = value`` with the learner's class (a frozen one refuses); the instance goes back."""
        try:
            decoder = self.decoder()
            instance, name, value = (decoder.decode(a) for a in wire.items_of(message, "args"))
            setattr(instance, str(name), value)
        except BaseException as error:  # noqa: BLE001
            self.send({"op": "raise", "error": self.error(error), "mutated": []})
            return
        self.reply(instance, (), {}, "return")

    @staticmethod
    def limit_cpu(budget: int) -> None:
        """From now on this process may use ``budget`` more CPU seconds (the judge also watches from outside)."""
        if budget <= 0:
            return
        try:
            _, hard = resource.getrlimit(resource.RLIMIT_CPU)
            soft = int(cpu_seconds()) + budget + 1
            if hard != resource.RLIM_INFINITY:
                soft = min(soft, hard)
            resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
        except (ValueError, OSError):
            pass

    def call(self, message: dict[str, object]) -> None:
        try:
            decoder = self.decoder()
            args = tuple(decoder.decode(a) for a in wire.items_of(message, "args"))
            kwargs = {name: decoder.decode(v) for name, v in wire.pairs_of(message, "kwargs")}
            function: Any
            if message["op"] == "call":
                function = resolve(str(message["target"]))
                if isinstance(function, property) and function.fget is not None:
                    function = function.fget
            else:
                function = self.own(wire.number_of(message, "handle"))
                if message.get("name"):
                    function = getattr(function, str(message["name"]))
        except BaseException as error:  # noqa: BLE001
            self.send({"op": "raise", "error": self.error(error, _unreached(error)), "mutated": []})
            return
        if message["op"] == "get_handle":
            self.reply(function, args, (), "return")
            return
        before = {i: wire.state_of(a) for i, a in enumerate(args) if _mutable(a)}
        try:
            result = function(*args, **kwargs)
        except BaseException as error:  # noqa: BLE001 - the learner's code may raise anything, even SystemExit
            self.send({"op": "raise", "error": self.error(error), "mutated": self.mutations(args, before)})
            return
        self.reply(result, args, before, "return")

    def call_each(self, message: dict[str, object]) -> None:
        """One function, many calls, one answer: ``calls`` holds ``[args, kwargs]`` pairs, run in order, each on its
        own copies of its arguments (what a call changes in them is not sent back). The answer ``each`` holds one
        ``{"value": ...}`` or ``{"error": ...}`` per call that ran. It stops after the first error unless ``errors``
        is set, after an exception that is not an ``Exception`` (``SystemExit``) or is ``NotImplementedError`` (the
        judge raises those, as it would have in a loop of single calls), and once the answer holds
        :data:`EACH_BYTES`: the judge sends the calls that did not run again."""
        try:
            function: Any = resolve(str(message["target"]))
            if isinstance(function, property) and function.fget is not None:
                function = function.fget
        except BaseException as error:  # noqa: BLE001
            self.send({"op": "raise", "error": self.error(error, _unreached(error)), "mutated": []})
            return
        keep_going = bool(message.get("errors"))
        pieces: list[bytes] = []
        size = 0
        for pair in wire.items_of(message, "calls"):
            try:
                decoder = self.decoder()
                if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], list)
                        and isinstance(pair[1], list)):
                    raise wire.WireError("a call of call_each is not [args, kwargs]")
                args = tuple(decoder.decode(a) for a in pair[0])
                kwargs = {name: decoder.decode(v) for name, v in wire.pairs_of({"kwargs": pair[1]}, "kwargs")}
            except BaseException as error:  # noqa: BLE001
                pieces.append(_each_piece({"error": self.error(error, "boundary")}))
                break
            stop = not keep_going
            try:
                result = function(*args, **kwargs)
            except BaseException as error:  # noqa: BLE001 - the learner's code may raise anything, even SystemExit
                piece = _each_piece({"error": self.error(error)})
                stop = stop or not isinstance(error, Exception) or isinstance(error, NotImplementedError)
            else:
                try:
                    piece, stop = _each_piece({"value": self.encoder().encode(result)}), False
                except (wire.WireError, RecursionError, ValueError) as error:
                    what = str(error) if isinstance(error, wire.WireError) else "the value is nested too deeply"
                    piece = _each_piece({"error": {"kind": "boundary", "module": "", "qualname": "BoundaryError",
                                                   "bases": ["ValueError"], "traceback": "",
                                                   "message": f"the result could not be sent back: {what}"}})
            pieces.append(piece)
            size += len(piece)
            if stop or size >= EACH_BYTES:
                break
        body = b'{"op":"each","each":[' + b",".join(pieces) + b"]}"
        if len(body) > wire.MAX_FRAME_BYTES:
            self.send({"op": "raise", "error": {"kind": "boundary", "module": "", "qualname": "BoundaryError",
                                                 "bases": ["ValueError"], "message": "the result could not be sent back: "
                                                 "it is larger than a message may be", "traceback": ""}, "mutated": []})
            return
        _write_all(self.fd_out, len(body).to_bytes(4, "big") + body)

    def reply(self, result: object, args: tuple[object, ...], before: Any, op: str) -> None:
        try:
            value = self.encoder(args).encode(result)
            mutated = self.mutations(args, before) if before else []
            frame = wire.dumps({"op": op, "value": value, "mutated": mutated})
        except (wire.WireError, RecursionError) as error:
            what = str(error) if isinstance(error, wire.WireError) else "the value is nested too deeply"
            self.send({"op": "raise", "error": {"kind": "boundary", "module": "", "qualname": "BoundaryError",
                                                 "bases": ["ValueError"], "message": f"the result could not be sent back: {what}",
                                                 "traceback": ""}, "mutated": []})
            return
        _write_all(self.fd_out, frame)

    def mutations(self, args: tuple[object, ...], before: dict[int, bytes | str | None]) -> list[object]:
        changed: list[object] = []
        for index, state in before.items():
            if wire.state_of(args[index]) != state:
                changed.append([index, self.encoder().encode(args[index])])
        return changed


def _unreached(error: BaseException) -> str:
    """The kind of error for a target that could not be reached: a missing name is the learner's exception, a module
    that does not import is an import problem, anything else the boundary's."""
    if isinstance(error, AttributeError):
        return "exception"
    return "import" if isinstance(error, (ImportError, SyntaxError)) else "boundary"


EACH_BYTES = 1 << 20  # an answer to call_each holds about this much at most; the judge sends the rest again


def _each_piece(outcome: dict[str, object]) -> bytes:
    return json.dumps(outcome, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode("ascii")


def _mutable(value: object) -> bool:
    return isinstance(value, (list, dict, set, bytearray)) or (
        wire.is_forge_module(type(value).__module__) and not isinstance(value, type))


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class TrustedError(Exception):
    """Base of the stand-ins for exception types of the test's side that are not built-in."""


_STAND_INS: dict[tuple[str, str, type], type] = {}


def rebuild_trusted_error(data: object, decoder: wire.Decoder) -> BaseException:
    """An exception the test's code raised while the learner's code called it: same name, same arguments."""
    if not isinstance(data, dict):
        return TrustedError("the test's code raised an error")
    name = str(data.get("qualname", "Exception"))
    module = str(data.get("module", ""))
    raw = data.get("args") if isinstance(data.get("args"), list) else None
    try:
        args = tuple(decoder.decode(item) for item in raw) if raw is not None else (str(data.get("message", "")),)
    except (wire.WireError, RecursionError):
        args = (str(data.get("message", "")),)
    builtin = getattr(__import__("builtins"), name, None)
    cls: type[BaseException]
    if module == "builtins" and isinstance(builtin, type) and issubclass(builtin, Exception):
        cls = builtin
    else:
        base: type[BaseException] = Exception
        for candidate in data.get("bases", []) if isinstance(data.get("bases"), list) else []:
            found = getattr(__import__("builtins"), str(candidate), None)
            if isinstance(found, type) and issubclass(found, Exception):
                base = found
                break
        simple = "".join(ch for ch in name.rsplit(".", 1)[-1] if ch.isalnum() or ch == "_") or "TrustedError"
        key = (module, simple, base)
        if key not in _STAND_INS:
            _STAND_INS[key] = type(simple, (TrustedError, base), {"__module__": module or "tests"})
        cls = _STAND_INS[key]
    try:
        return cls(*args)
    except Exception:  # noqa: BLE001
        return cls(str(data.get("message", "")))


# ---------------------------------------------------------------- entry point


def site_as_before(path: str) -> None:
    """What the ``site`` module would have given the learner's code: the host starts without it (``-S``, see
    :func:`forgelab.judge.channel.host_argv`), so the library folders come as ``path`` and ``exit``/``quit`` are
    made here."""
    import builtins
    import _sitebuiltins

    sys.path.extend(folder for folder in path.split(os.pathsep) if folder and folder not in sys.path)
    builtins.exit = _sitebuiltins.Quitter("exit", "Ctrl-D (i.e. EOF)")
    builtins.quit = _sitebuiltins.Quitter("quit", "Ctrl-D (i.e. EOF)")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="_judge_host")
    parser.add_argument("mode", choices=("serve",))
    parser.add_argument("--in", dest="fd_in", type=int, default=-1)
    parser.add_argument("--out", dest="fd_out", type=int, default=-1)
    parser.add_argument("--limits", default="{}")
    parser.add_argument("--path", default="", help="the library folders (os.pathsep between them)")
    args = parser.parse_args(argv)
    site_as_before(args.path)
    apply_limits(json.loads(args.limits))
    sys.dont_write_bytecode = True
    server = Server(args.fd_in, args.fd_out)
    try:
        server.serve()
    except wire.ChannelClosed:
        pass
    sys.stdout.flush()
    os._exit(0)  # no atexit or finalizer of the learner's code runs after the judge is done


if __name__ == "__main__":
    main(sys.argv[1:])
