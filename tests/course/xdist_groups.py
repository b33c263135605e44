"""``--dist loadgroup`` with pytest 9.2: the ``xdist_group`` of a test reaches the scheduler again.

pytest-xdist (3.8) tells its scheduler a test's group by appending ``@group`` to the test's id in the worker
(``item._nodeid``); since pytest 9.2 a test's id is read from ``item._id`` and that assignment is lost. Every group
was silently ignored: a module whose fixtures are meant to be made once per run (a published site, the graded
class, a Slurm run, ``make lab``) made them again in each worker that got one of its tests, and two JupyterLabs of
the ``make-lab`` group could run at once. :func:`keep_xdist_groups` puts the suffix back where pytest reads it; with
an older pytest, where pytest-xdist's own suffix holds, it changes nothing. Upstream: pytest-dev/pytest-xdist
issue #1386 (open, with the fix proposed in pull request #1388); drop this module once a pytest-xdist release
carries that fix.
"""

from __future__ import annotations

from typing import Any


def group_suffix(item: Any) -> str:
    """``@name`` of the test's xdist groups (joined as pytest-xdist joins them), or "" without one."""
    names = sorted({str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
                    for mark in item.iter_markers("xdist_group")})
    return "@" + "_".join(names) if names else ""


def keep_xdist_groups(config: Any, items: list[Any]) -> int:
    """In an xdist worker under ``--dist loadgroup``: every grouped test's id ends with its group. How many were fixed."""
    if not getattr(config.option, "loadgroup", False):  # pytest-xdist sets it in its workers only
        return 0
    try:
        from _pytest.nodeid import NodeId
    except ImportError:  # pytest before 9.2: pytest-xdist's own suffix holds
        return 0
    fixed = 0
    for item in items:
        suffix = group_suffix(item)
        if suffix and not item.nodeid.endswith(suffix):
            item._id = NodeId.parse(item.nodeid + suffix)
            fixed += 1
    return fixed
