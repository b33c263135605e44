"""Every use of pytest's private internals, in one place: the judge's only door into ``_pytest``.

The judge runs the course's tests with pytest's public API, except where a private part of pytest saves a run's
start-up or keeps the judge's output pytest's own. Those parts are not pytest's promise: a minor release may move or
change them (pytest 9.2 already moved one that tests/course/xdist_groups.py reads). So they live here only, pytest is
pinned to the minor version they were written and tested against (``pyproject.toml``: ``pytest>=9.2,<9.3``), and
``tests/course/test_pytest_private.py`` lists them (:data:`HOOKS`), proves each one exists in the installed pytest,
and fails when ``_pytest`` is imported, or one of these names is used, anywhere else in forgelab/.

What each is for:

* :func:`import_builtin_plugins` — ``_pytest.config.default_plugins``: the warm worker (``warm.preload``) and the
  early session (``early._serve``) import pytest's built-in plugins before a run needs them;
* :func:`prepare_config`, :func:`use_prepared_config` — ``_pytest.config.get_config`` (called once in the warm worker,
  then stood in for in each forked run) and ``Config.InvocationParams``;
* :func:`prescan_fixtures` — ``FixtureManager.parsefactories`` (patched), ``FixtureManager._lookup_in_type_dict``,
  ``FixtureManager._find_wrapped_fixture_def``, ``FixtureFunctionDefinition``, ``_pytest.compat.safe_getattr`` and
  ``safe_isclass``: the fixtures of pytest's own plugins looked for once in the warm worker;
* :func:`skip_absent_entry_points` — the plugin manager's ``load_setuptools_entrypoints`` (patched on one instance);
* :func:`rewritten_pyc`, :func:`pyc_tail` — ``_pytest.assertion.rewrite._rewrite_test``, ``_write_pyc_fp`` and
  ``PYC_TAIL``: pytest's own assert-rewritten bytecode of a course test file, written beside every copy and kept in
  the workbook's cache under a name that holds pytest's version (``bytecode.rewritten_beside``);
* :func:`pytest_default_explanation` — ``_pytest.assertion.pytest_assertrepr_compare``: pytest's own detail of a
  failed comparison, kept below the judge's first difference (``explain.pytest_assertrepr_compare``).

Importing this module imports no part of pytest: each function imports what it needs when it runs.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from _pytest.config import Config


HOOKS: tuple[str, ...] = (
    "_pytest.config.default_plugins",
    "_pytest.config.get_config",
    "_pytest.config.Config.InvocationParams",
    "_pytest.config.PytestPluginManager.load_setuptools_entrypoints",
    "_pytest.fixtures.FixtureManager.parsefactories",
    "_pytest.fixtures.FixtureManager._lookup_in_type_dict",
    "_pytest.fixtures.FixtureManager._find_wrapped_fixture_def",
    "_pytest.fixtures.FixtureFunctionDefinition",
    "_pytest.compat.safe_getattr",
    "_pytest.compat.safe_isclass",
    "_pytest.assertion.rewrite._rewrite_test",
    "_pytest.assertion.rewrite._write_pyc_fp",
    "_pytest.assertion.rewrite.PYC_TAIL",
    "_pytest.assertion.pytest_assertrepr_compare",
)
"""Every private part of pytest the judge uses, as ``module.attribute`` (the test resolves each one)."""


def import_builtin_plugins() -> None:
    """Import pytest's built-in plugin modules (``_pytest.config.default_plugins``), as every session's start would."""
    import _pytest.config

    for name in _pytest.config.default_plugins:
        try:
            importlib.import_module(f"_pytest.{name}")
        except ImportError:  # pytest then says so itself, as in any session
            pass


def rewritten_pyc(path: Path) -> tuple[str, bytes]:
    """What pytest's own import hook would write for ``path`` (``_pytest.assertion.rewrite``: the same version as
    the session's, from the same installation); the name's tail holds that version, so another one ignores it."""
    import io

    from _pytest.assertion import rewrite

    source_hash, code = rewrite._rewrite_test(path, None)  # type: ignore[arg-type]  # no option changes the code
    buffer = io.BytesIO()
    rewrite._write_pyc_fp(buffer, source_hash, code)
    return rewrite.PYC_TAIL, buffer.getvalue()


def pyc_tail() -> str:
    """The end of the name pytest gives its rewritten bytecode: Python's cache tag and pytest's version."""
    from _pytest.assertion import rewrite

    return str(rewrite.PYC_TAIL)


def pytest_default_explanation(config: Any, op: str, left: object, right: object) -> list[str]:
    """pytest's own explanation of a failed comparison (its hook has a stable signature); [] when it has none."""
    from _pytest.assertion import pytest_assertrepr_compare as pytest_default

    return list(pytest_default(config, op, left, right) or [])


# pytest's configuration as every run's `pytest.main` begins it, made once in the worker (see prepare_config);
# and, in a forked run, pytest's own get_config while the prepared one stands in for it
_PREPARED: list[Config] = []
_GET_CONFIG: list[Callable[..., Config]] = []
PROG = "pytest.main()"  # the program name pytest.main gives its configuration
PYTEST11 = "pytest11"  # the entry-point group of installed pytest plugins


def prepare_config() -> None:
    """Begin pytest's configuration once, in the worker, as ``pytest.main`` begins it in every run: a plugin
    manager with pytest's ~40 built-in plugins registered and their options added (``_pytest.config.get_config``).

    None of that depends on the run: no built-in plugin reads the environment, the working folder or the arguments
    while it is registered (the arguments are only read for ``-p no:NAME``, which keeps a plugin out: a run that
    says so gets a configuration of its own). Every forked run gets its own copy of this one, never used before,
    with its own arguments and folder (:func:`prepared_get_config`); the rest of its start — the ini file, the
    judge's plugin, its options, the rootdir, the assertion rewriting — is pytest's own, in the run."""
    from _pytest.config import get_config

    config = get_config(None, None, prog=PROG)
    skip_absent_entry_points(config)
    _PREPARED[:] = [config]
    prescan_fixtures()


@dataclass(frozen=True)
class _Scanned:
    """What :func:`prescan_fixtures` found in one of pytest's own modules or classes (``owner``)."""

    owner: object  # kept alive: the scans are looked up by its id
    fingerprint: tuple[int, ...]  # the sizes of its namespaces then (and of its bases'): a change means a new scan
    names: tuple[str, ...]  # the names where pytest's scan can find or warn about a fixture
    reduced: types.ModuleType | None  # a module: a stand-in holding only those names (the same objects)


def _fingerprint(owner: object) -> tuple[int, ...]:
    if isinstance(owner, types.ModuleType):
        return (len(vars(owner)),)
    return tuple(len(vars(base)) for base in getattr(owner, "__mro__", ()))


def prescan_fixtures() -> None:
    """Look once, in the worker, for the fixtures in pytest's own plugin modules and classes; every run's fixture
    manager then reads only those names (``FixtureManager.parsefactories``, about 10 ms a run otherwise).

    At every session's start pytest scans each registered plugin for fixtures: every name of the module, or of the
    plugin object's class, read and unwrapped, the same answer every time for pytest's own modules and classes, which
    no run changes. For those (the worker's own imports of ``_pytest``, known by identity and unchanged in size), a
    holder with no fixture is not scanned and a module is scanned through a stand-in that holds only the names where
    pytest's scan found a fixture or would warn about one — the same objects, in the same order, so pytest registers
    the same fixture definitions. Every other holder (the test files, their classes, the judge's plugin) is scanned by
    pytest as ever. A pytest without these internals is left as it is."""
    try:
        from _pytest import fixtures
        from _pytest.compat import safe_getattr, safe_isclass

        definition = fixtures.FixtureFunctionDefinition
        manager: Any = fixtures.FixtureManager
        lookup, wrapped, original = (manager._lookup_in_type_dict, manager._find_wrapped_fixture_def,
                                     manager.parsefactories)
    except (ImportError, AttributeError):
        return

    def relevant(owner: Any, name: str) -> bool:
        raw = lookup(None, owner, name)
        return (raw is not None and wrapped(None, raw) is not None) or \
            type(safe_getattr(owner, name, None)) is definition

    scans: dict[int, _Scanned] = {}
    for module_name, module in sorted(sys.modules.items()):
        if module is None or not (module_name == "_pytest" or module_name.startswith("_pytest.")):
            continue
        owners: list[Any] = [module, *(value for value in vars(module).values()
                                       if isinstance(value, type) and value.__module__ == module_name)]
        for owner in owners:
            if id(owner) in scans:
                continue
            names = tuple(name for name in dir(owner) if relevant(owner, name))
            reduced = None
            if isinstance(owner, types.ModuleType) and names:
                reduced = types.ModuleType(owner.__name__)
                for name in names:
                    setattr(reduced, name, vars(owner)[name])
            scans[id(owner)] = _Scanned(owner, _fingerprint(owner), names, reduced)

    def parsefactories(self: Any, *args: Any, **kwargs: Any) -> Any:
        holder = kwargs.get("holder")
        if not args and holder is not None and set(kwargs) == {"holder", "node"}:
            owner = holder if isinstance(holder, types.ModuleType) or safe_isclass(holder) else type(holder)
            scan = scans.get(id(owner))
            if scan is not None and scan.owner is owner and scan.fingerprint == _fingerprint(owner):
                if not scan.names:
                    return None
                if scan.reduced is not None:
                    kwargs = {**kwargs, "holder": scan.reduced}
        return original(self, *args, **kwargs)

    manager.parsefactories = parsefactories


def pytest11_names() -> frozenset[str]:
    """The names of the installed distributions' pytest plugins (the ``pytest11`` entry points)."""
    import importlib.metadata

    return frozenset(point.name for dist in importlib.metadata.distributions() for point in dist.entry_points
                     if point.group == PYTEST11)


def skip_absent_entry_points(config: Config) -> None:
    """Every run's ``-p forgelab.judge.session_plugin`` first looks for an installed plugin of that name, reading
    the entry points of every installed distribution (a few ms each run, the same answer every time): the worker
    reads them once, and a run's look-up for a name that no distribution's ``pytest11`` entry point has ends there
    with nothing loaded, as the full look-up would. Any other look-up is pytest's own."""
    manager = config.pluginmanager
    original = manager.load_setuptools_entrypoints
    names = pytest11_names()

    def load_setuptools_entrypoints(group: str, name: str | None = None) -> int:
        if group == PYTEST11 and name is not None and name not in names:
            return 0
        return original(group, name)

    setattr(manager, "load_setuptools_entrypoints", load_setuptools_entrypoints)  # noqa: B010 - one instance only


def excludes_a_plugin(args: list[str]) -> bool:
    """``-p no:NAME`` (or ``-pno:NAME``) in ``args``: the run keeps one of pytest's own plugins out."""
    return any(arg.startswith("-pno:") or (arg == "-p" and following.startswith("no:"))
               for arg, following in zip(args, [*args[1:], ""], strict=True))


def prepared_get_config(args: object = None, plugins: object = None, *, prog: str | None = None) -> Config:
    """``_pytest.config.get_config`` in a forked run: the worker's prepared configuration, once, given this run's
    arguments and folder; pytest's own function whenever the call is not the one :func:`prepare_config` stood in
    for (plugins given, another program name, a plugin kept out) and for every later call."""
    import pathlib

    import _pytest.config

    original = _GET_CONFIG[0]
    _pytest.config.get_config = original  # one use only
    if not _PREPARED or plugins or prog != PROG or not isinstance(args, list) or excludes_a_plugin(args):
        return original(args, plugins, prog=prog)
    config = _PREPARED.pop()
    config.invocation_params = _pytest.config.Config.InvocationParams(args=args, plugins=None,
                                                                       dir=pathlib.Path.cwd())
    return config


def use_prepared_config() -> None:
    """In a forked run: the one ``get_config`` call of its ``pytest.main`` gets :func:`prepared_get_config`."""
    import _pytest.config

    if _PREPARED:
        _GET_CONFIG[:] = [_pytest.config.get_config]
        _pytest.config.get_config = prepared_get_config
