"""Start-up rules for graded code: installed as ``sitecustomize.py`` in a folder on PYTHONPATH.

:func:`forgelab.grading.isolation.write_startup_rules` copies this file, so Python runs it at the
start of every graded process (pytest, the import probe, the notebook kernel).

1. Network guard. With ``FORGELAB_NO_NETWORK=1`` every Python process of a grading run — pytest, the notebook kernel,
anything they start with the same environment — refuses to resolve or connect to any address
except loopback and Unix sockets. Loopback stays open because the notebook kernel talks to nbval
over 127.0.0.1. The refusal is an ``OSError`` whose message says why, so a learner's test that
tries the network fails with a readable cause instead of hanging on a timeout.

This guards Python code only; a program written in C or started as another executable is not
covered. ``forgelab grade`` adds a separate network namespace where the system allows one.

2. Deterministic Hypothesis. With ``FORGELAB_HYPOTHESIS_DERANDOMIZE=1``, as soon as a test imports
``hypothesis`` a profile is loaded that derandomizes it and turns its example database off, so a
property test fails (or passes) with the same falsifying example on every grading run.

3. Optional imports skipped. ``FORGELAB_SKIP_IMPORTS`` names modules (comma-separated) whose import
fails at once with ``ModuleNotFoundError``. The grader's nbval run sets it to ``rfc3987_syntax``:
jsonschema imports it only for its optional ``iri`` format check, nbformat (which imports
jsonschema) never uses that check, and importing it builds a parser that costs seconds per run.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

if os.environ.get("FORGELAB_NO_NETWORK") == "1":
    import ipaddress
    import socket

    _MESSAGE = "network access is disabled while grading (only loopback is allowed)"
    _LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", ""}

    def _is_local_host(host: object) -> bool:
        if isinstance(host, bytes):
            host = host.decode("ascii", "replace")
        if not isinstance(host, str):
            return False
        if host.lower() in _LOCAL_NAMES:
            return True
        try:
            return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
        except ValueError:
            return False

    def _allowed(sock: socket.socket, address: object) -> bool:
        if getattr(socket, "AF_UNIX", None) is not None and sock.family == socket.AF_UNIX:
            return True
        if isinstance(address, tuple) and address:
            return _is_local_host(address[0])
        return False

    _connect: Any = socket.socket.connect
    _connect_ex: Any = socket.socket.connect_ex
    _sendto: Any = socket.socket.sendto
    _getaddrinfo: Any = socket.getaddrinfo

    def _refuse(address: object) -> ConnectionRefusedError:
        return ConnectionRefusedError(f"{_MESSAGE}: refused {address!r}")

    def _guarded_connect(self: socket.socket, address: Any) -> None:
        if not _allowed(self, address):
            raise _refuse(address)
        _connect(self, address)

    def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
        if not _allowed(self, address):
            raise _refuse(address)
        return int(_connect_ex(self, address))

    def _guarded_sendto(self: socket.socket, data: bytes, *args: Any) -> int:
        address = args[-1] if args else None
        if not _allowed(self, address):
            raise _refuse(address)
        return int(_sendto(self, data, *args))

    def _guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host is not None and not _is_local_host(host):
            raise socket.gaierror(socket.EAI_NONAME, f"{_MESSAGE}: will not resolve {host!r}")
        return _getaddrinfo(host, *args, **kwargs)

    setattr(socket.socket, "connect", _guarded_connect)
    setattr(socket.socket, "connect_ex", _guarded_connect_ex)
    setattr(socket.socket, "sendto", _guarded_sendto)
    setattr(socket, "getaddrinfo", _guarded_getaddrinfo)


if os.environ.get("FORGELAB_HYPOTHESIS_DERANDOMIZE") == "1":

    def _load_profile(module: ModuleType) -> None:
        settings = getattr(module, "settings", None)
        if settings is None:
            return
        settings.register_profile("forgelab-grading", derandomize=True, database=None, print_blob=False)
        settings.load_profile("forgelab-grading")

    class _AfterHypothesis(importlib.abc.MetaPathFinder):
        """Wrap the loader of ``hypothesis`` so that the profile is loaded right after it."""

        def find_spec(self, name: str, path: Sequence[str] | None = None,
                      target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
            if name != "hypothesis":
                return None
            sys.meta_path.remove(self)
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            if spec is None or spec.loader is None:
                return spec
            loader: Any = spec.loader
            original = loader.exec_module

            def exec_module(module: ModuleType) -> None:
                original(module)
                _load_profile(module)

            loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, _AfterHypothesis())


_SKIPPED = {name.strip() for name in os.environ.get("FORGELAB_SKIP_IMPORTS", "").split(",") if name.strip()}
if _SKIPPED:

    class _SkipImports(importlib.abc.MetaPathFinder):
        def find_spec(self, name: str, path: Sequence[str] | None = None,
                      target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
            if name.split(".", 1)[0] in _SKIPPED:
                raise ModuleNotFoundError(f"{name} is skipped while grading (optional, slow to import)", name=name)
            return None

    sys.meta_path.insert(0, _SkipImports())
