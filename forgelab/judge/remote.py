"""The trusted side's ``forge``: the course's own definitions, with every learner function remote.

The judge builds an *interface* package (:mod:`forgelab.judge.interface`) from the pristine starter
modules and puts it first on the path of the process that runs the course's tests. Each stage
module there is the starter itself, followed by one call to :func:`remotify`. The rules:

1. every function of the module runs in the learner's process (:class:`RemoteFunction`);
2. constructing one of its classes runs the learner's class there — its defaults, ``__post_init__``
   and validators are the learner's (:class:`RemoteClass`); so do the methods, class methods,
   static methods and properties written in the class body, and assigning to an attribute. (When
   the learner's class is a plain dataclass with exactly the course's fields, defaults and flags,
   building it anywhere gives the same instance, and the judge builds it itself: that keeps a test
   that builds 30,000 inputs fast);
3. instances travel as data and are rebuilt from the course's own class without running any of its
   code, so comparing, hashing and printing them use the course's definitions — a learner's
   ``__eq__`` can never make a wrong answer look right;
4. constants and ``forge.project`` (the course's finished infrastructure) are the course's, locally.

So a stage test keeps reading like an ordinary test::

    from forge.instructions import Instruction, resolve
    accepted, rejected = resolve([Instruction("system", "write", "deny")])

while the process that decides pass or fail never runs a line of the learner's code.

The same interface serves the learner's own tests (transfer tests): they run in a sandbox of their own
with this package instead of the learner's ``forge``, and their calls reach the learner's code through
the judge (:mod:`forgelab.judge.tester`, :mod:`forgelab.judge.relay`), never in their own process.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import sys
import types
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from forgelab.judge import wire
from forgelab.judge.channel import ArgumentChanges, Host, LimitExceeded, TimeBudget, apply_in_place
from forgelab.judge.outcomes import ImportProblem, Limit
from forgelab.judge.sandbox import Isolation
from forgelab.judge.settings import JudgeSettings

if TYPE_CHECKING:  # the tester's copy of the judge (forgelab.judge.relay) has no messages: it never reads a job
    from forgelab.judge.messages import SessionTarget


class HostPool:
    """The hosts of one judge session, one per target label, started on first use."""

    def __init__(self, targets: dict[str, SessionTarget], settings: JudgeSettings, isolation: Isolation,
                 test_roots: tuple[Path, ...] = ()) -> None:
        self.targets, self.settings, self.isolation = targets, settings, isolation
        self.test_roots = test_roots  # the course's test files: only their objects may become handles
        self.hosts: dict[str, Host] = {}
        self._spawned: set[str] = set()  # hosts started ahead (prespawn) that have not imported anything yet
        self.import_problems: dict[str, ImportProblem | None] = {}
        self.limit_hits: dict[str, int] = {}
        self.last_limit: dict[str, Limit] = {}  # which limit stopped the target's code most recently
        self.current: str | None = None
        self.time_budget = TimeBudget(settings.submission_wall_s)  # all targets' code together

    def _host(self, label: str) -> Host:
        if label not in self.targets:
            raise KeyError(f"unknown target {label!r}")
        host = self.hosts.get(label)
        if host is None:
            spec = self.targets[label]
            host = Host(label, Path(spec.code_dir), self.settings, self.isolation, resolve_course_class,
                        stage=spec.stage)
            host.test_roots = self.test_roots
            host.time_budget = self.time_budget
            self.hosts[label] = host
        return host

    def prespawn(self, label: str) -> None:
        """Start ``label``'s host process now, while pytest still collects: it starts its interpreter meanwhile, but
        imports none of the learner's code until its first test asks for it (:meth:`host`, the handshake). It is
        the same fresh host, held to the same limits (its CPU and wall clock count from the handshake, as before).
        A host started even earlier and handed over with :func:`hand_over` (the warm worker's) is used instead."""
        if label not in self.targets or label in self.hosts:
            return
        waiting = _WAITING.pop(label, None)
        if waiting is not None:
            if waiting.alive or waiting.import_asked:
                waiting.test_roots = self.test_roots
                waiting.time_budget = self.time_budget
                self.hosts[label] = waiting
                self._spawned.add(label)
                return
            waiting.close()
        host = self._host(label)
        try:
            host.spawn()
        except Exception:  # noqa: BLE001 - the first test then starts it as before, and says what went wrong
            host.close()
            return
        self._spawned.add(label)

    def host(self, label: str) -> Host:
        host = self._host(label)
        if label in self._spawned:  # started by prespawn: its first use imports the learner's modules
            self._spawned.discard(label)
            if host.alive or host.import_asked:
                self.import_problems[label] = host.handshake(list(self.targets[label].probe))
                return host
        if not host.alive and self.import_problems.get(label) is None:
            # a module that did not import once is not tried again in this session: one cause, one wait
            problem = host.start(list(self.targets[label].probe))
            if problem is not None or label not in self.import_problems:
                self.import_problems[label] = problem
        return host

    def begin_test(self, label: str, watch_arguments: bool = False) -> ImportProblem | None:
        """Make ``label`` current and ready for one test; its import problem, if it has one.

        The learner's code always works on copies of the test's arguments. Only in a test that watches its
        arguments (marked ``watch_arguments``, e.g. ``test_input_is_not_mutated``) does what it changed in
        them show, as in one process; every other test keeps its objects exactly as it built them.
        """
        previous = self.hosts.get(self.current) if self.current is not None and self.current != label else None
        if previous is not None:  # it waits, perhaps till the end of the session: no files kept open for it
            previous.release_files()
        self.current = label
        host = self.host(label)
        host.argument_changes = ArgumentChanges.SHOWN if watch_arguments else ArgumentChanges.HIDDEN
        problem = self.import_problems.get(label)
        if problem is None and host.alive:
            host.begin_test()
        return problem

    def current_host(self) -> Host:
        if self.current is None:
            raise RuntimeError("no judge target is active: the course's tests must run through forgelab")
        return self.host(self.current)

    def take_output(self, label: str) -> str:
        host = self.hosts.get(label)
        return host.take_output() if host is not None else ""

    def record_limit(self, label: str, limit: Limit) -> int:
        self.limit_hits[label] = self.limit_hits.get(label, 0) + 1
        self.last_limit[label] = limit
        return self.limit_hits[label]

    def builds_like_known(self, path: str) -> bool:
        """True when the current target's learner class at ``path`` is known to build like the course's (see
        :meth:`Host.builds_like`), read without touching its process."""
        host = self.hosts.get(self.current) if self.current is not None else None
        return host is not None and host.known_to_build_like(path)

    def take_trips(self, label: str) -> int:
        """The exchanges ``label``'s host made for tests since the last call (a test's count, read at its end)."""
        host = self.hosts.get(label)
        if host is None:
            return 0
        trips, host.trips = host.trips, 0
        return trips

    def close(self) -> None:
        for host in self.hosts.values():
            host.close()


class Pool(Protocol):
    """Where the interface's calls go: the trusted session's :class:`HostPool`, or, in the process that runs
    a learner's own tests, the link through the judge to that learner's host (:mod:`forgelab.judge.tester`)."""

    def current_host(self) -> Host: ...


_POOL: Pool | None = None
_WAITING: dict[str, Host] = {}  # hosts started ahead for this process's session, by target label (see hand_over)


def hand_over(label: str, host: Host) -> None:
    """Give this process's session ``host`` as ``label``'s host: started already (:meth:`Host.spawn`), with the
    settings, isolation and stage of that target and a code folder holding that target's code, it has imported
    nothing yet, or has only been asked to import the target's first modules (:meth:`Host.ask_import`: the
    session's handshake reads the answer) — the warm worker starts it before the learner saves and asks for the
    import once the saved code is in its folder (:mod:`forgelab.judge.warm`)."""
    _WAITING[label] = host


def install_pool(pool: Pool | None) -> None:
    global _POOL
    _POOL = pool


def active_pool() -> Pool:
    if _POOL is None:
        raise RuntimeError("the course's forge interface is loaded, but no judge session is running: "
                           "run the course's tests with `forgelab check`, never with plain pytest")
    return _POOL


def resolve_course_class(path: str) -> Any:
    """``"forge.x:Name"`` → the course's own class (the interface's), never anything else."""
    module_name, _, qualname = path.partition(":")
    if not wire.is_forge_module(module_name):
        raise wire.WireError(f"{path!r} is not a forge type")
    try:
        target: Any = sys.modules.get(module_name) or importlib.import_module(module_name)
    except ImportError:
        raise wire.WireError(f"the course has no module {module_name}") from None
    for part in qualname.split("."):
        if not part or part.startswith("__"):
            raise wire.WireError(f"{path!r} does not name a public class")
        target = getattr(target, part, None)
        if target is None:
            raise wire.WireError(f"the course's {module_name} has no {qualname}: the learner's code returned a type "
                                 "the course does not define — return the course's types or plain data")
        if isinstance(target, RemoteClass):
            target = target.wrapped
    if not isinstance(target, type):
        raise wire.WireError(f"{path} is not a class")
    return target


class RemoteFunction:
    """A function of the learner's module: calling it runs it in the current target's host."""

    def __init__(self, module: str, qualname: str, original: Callable[..., Any] | None = None) -> None:
        self.module, self.qualname = module, qualname
        self.__name__ = qualname.rsplit(".", 1)[-1]
        self.__qualname__ = qualname
        self.__module__ = module
        self.__doc__ = getattr(original, "__doc__", None)
        if original is not None:
            try:
                self.__signature__ = inspect.signature(original)
            except (TypeError, ValueError):
                pass

    def __call__(self, *args: object, **kwargs: object) -> object:
        return active_pool().current_host().request(
            {"op": "call", "target": f"{self.module}:{self.qualname}"}, args, kwargs)

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        if instance is None:
            return self
        return functools.partial(self, instance)

    def __repr__(self) -> str:
        return f"<learner function {self.module}.{self.qualname}>"


class RemoteMethod:
    """A method written in a class body of the learner's module: runs remotely, the instance travels as data."""

    def __init__(self, module: str, qualname: str) -> None:
        self.function = RemoteFunction(module, qualname)

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        if instance is None:
            return self.function
        return functools.partial(self.function, instance)


def _remote_property(module: str, qualname: str) -> property:
    """Reading it calls the learner's getter with the instance; ``Cls.name.fget`` is that remote function, so a
    check can read it of many instances in one exchange (:func:`each`)."""
    return property(RemoteFunction(module, qualname), doc=f"computed by the learner's {qualname}")


def _remote_setattr(module: str, qualname: str) -> Callable[[object, str, object], None]:
    def assign(instance: object, name: str, value: object) -> None:
        """Assigning to an attribute is the learner's class's business (e.g. a frozen model refuses it)."""
        changed = active_pool().current_host().request(
            {"op": "setattr", "target": f"{module}:{qualname}"}, (instance, name, value), {})
        apply_in_place(instance, changed)

    return assign


class RemoteClass:
    """A class of the learner's module: constructing it runs the learner's class in the sandbox.

    The instance comes back as data and is rebuilt from the course's class, so comparing, hashing and
    printing it use the course's definitions. Its class methods and static methods run remotely;
    other attributes (fields, ``model_fields``, configuration) read the course's definition, and
    ``isinstance(x, Proxy)`` checks against it.
    """

    def __init__(self, cls: type, module: str, remote_names: frozenset[str], shape: dict[str, object]) -> None:
        self.wrapped = cls
        self.shape = shape  # how the course's class builds instances (see wire.class_shape)
        self.module = module
        self.remote_names = remote_names
        self.__name__ = cls.__name__
        self.__qualname__ = cls.__qualname__
        self.__doc__ = cls.__doc__
        self.__module__ = module

    def __call__(self, *args: object, **kwargs: object) -> object:
        pool = active_pool()
        path = f"{self.module}:{self.wrapped.__qualname__}"
        if isinstance(pool, HostPool) and pool.builds_like_known(path):  # asked already: the process is not polled
            return self.wrapped(*args, **kwargs)  # (stage 02's check builds 30,000 candidates)
        host = pool.current_host()
        if host.builds_like(path, self.shape):  # a plain dataclass shaped exactly like the course's
            return self.wrapped(*args, **kwargs)
        return host.request({"op": "call", "target": path}, args, kwargs)

    def __getattr__(self, name: str) -> Any:
        if name in self.remote_names:
            return RemoteFunction(self.module, f"{self.wrapped.__qualname__}.{name}")
        return getattr(self.wrapped, name)

    def __instancecheck__(self, instance: object) -> bool:
        return isinstance(instance, self.wrapped)

    def __subclasscheck__(self, subclass: type) -> bool:
        return issubclass(subclass, self.wrapped)

    def __repr__(self) -> str:
        return f"<class {self.module}.{self.wrapped.__qualname__} (built by the learner's code)>"


class Call:
    """The arguments of one call, for :func:`each`: ``Call(items, budget=10)``."""

    __slots__ = ("args", "kwargs")

    def __init__(self, *args: object, **kwargs: object) -> None:
        self.args, self.kwargs = args, kwargs

    def __repr__(self) -> str:
        shown = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"Call({', '.join(shown)})"


def each(function: Callable[..., Any], calls: Iterable[Call], errors: bool = False) -> list[Any]:
    """``[function(*c.args, **c.kwargs) for c in calls]``, with the learner's function called in one exchange.

    A check that calls the learner's code with 300 random inputs crosses the process boundary once instead of 300
    times (an exchange costs about as much as a small call itself). With ``errors`` an :class:`Exception` a call
    raises takes that call's place in the list and the calls go on; without it the first one is raised, as in the
    loop. Each call works on copies of its arguments, and what a call returns is rebuilt as data (equal to, never
    the same object as, an argument): use a plain loop in a test that watches its arguments or checks identity.
    Anything that is not a learner's function or class made remote by the judge (a plain function, the reference
    in a plain ``pytest`` run, a tester's link) is called in a loop here, with the same results.
    """
    listed = list(calls)
    target, bound = _remote_target(function)
    pool = _POOL
    if isinstance(function, RemoteClass) and isinstance(pool, HostPool) and listed:
        path = f"{function.module}:{function.wrapped.__qualname__}"
        if not pool.current_host().builds_like(path, function.shape):
            target = path  # built by the learner's class: remotely, all at once
    if target is not None and isinstance(pool, HostPool) and listed:
        host = pool.current_host()
        if host.argument_changes is ArgumentChanges.HIDDEN:
            outcomes = host.request_each(target, [((*bound, *c.args), c.kwargs) for c in listed], errors)
            return [value for _ok, value in outcomes]
    results: list[Any] = []
    for call in listed:
        try:
            results.append(function(*call.args, **call.kwargs))
        except Exception as error:  # noqa: BLE001 - returned in its place, as asked
            if not errors:
                raise
            results.append(error)
    return results


def _remote_target(function: object) -> tuple[str | None, tuple[object, ...]]:
    """The learner's ``module:qualname`` behind ``function`` and the arguments bound before the call's own, or
    ``(None, ())`` where it is not one (a local class is built here: see :meth:`RemoteClass.__call__`)."""
    bound: tuple[object, ...] = ()
    if isinstance(function, functools.partial) and not function.keywords:
        bound, function = tuple(function.args), function.func
    if isinstance(function, RemoteFunction):
        return f"{function.module}:{function.qualname}", bound
    return None, ()


# free-form: a module's own __dict__
def remotify(namespace: dict[str, Any], module: str, classes: dict[str, dict[str, list[str]]] | None = None) -> None:
    """Make the module's functions and classes remote (see the module docstring); data stays local. ``namespace`` is
    a module's own ``__dict__``: free-form by nature."""
    for name, value in list(namespace.items()):
        if isinstance(value, types.FunctionType) and value.__module__ == module:
            namespace[name] = RemoteFunction(module, value.__qualname__, value)
    for name, members in (classes or {}).items():
        cls = namespace.get(name)
        if not isinstance(cls, type) or issubclass(cls, BaseException):
            continue  # exception classes stay the course's: tests catch them with `pytest.raises(...)`
        shape = wire.class_shape(cls, wire.Encoder())
        for method in members.get("methods", []):
            setattr(cls, method, RemoteMethod(module, f"{cls.__qualname__}.{method}"))
        for prop in members.get("properties", []):
            setattr(cls, prop, _remote_property(module, f"{cls.__qualname__}.{prop}"))
        setattr(cls, "__setattr__", _remote_setattr(module, cls.__qualname__))
        remote = frozenset(members.get("classmethods", [])) | frozenset(members.get("staticmethods", []))
        namespace[name] = RemoteClass(cls, module, remote, shape)


__all__ = ["Call", "HostPool", "LimitExceeded", "Limit", "Pool", "RemoteClass", "RemoteFunction", "active_pool", "each",
           "install_pool", "remotify", "resolve_course_class"]
