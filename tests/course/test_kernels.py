"""The course's tools and tests start Jupyter kernels over Unix sockets, never on TCP ports picked and let go.

jupyter_client picks a kernel's TCP ports by binding port 0 and closing it; the kernel binds them a moment later, and
on a busy machine another process took one in between (a CI round lost a notebook test to ``Address already in
use``). forgelab.authoring.kernels names each channel's socket by a fresh UUID instead.
"""

from __future__ import annotations

import os
from pathlib import Path

from forgelab.authoring import nbval
from forgelab.authoring.kernels import IpcKernelManager, start_kernel


def test_two_kernels_listen_on_sockets_of_their_own_and_leave_none_behind(tmp_path: Path) -> None:
    started = [start_kernel(cwd=str(tmp_path), env=dict(os.environ), startup_timeout=120) for _ in range(2)]
    infos = [manager.get_connection_info() for manager, _client in started]
    try:
        assert [info["transport"] for info in infos] == ["ipc", "ipc"]
        assert infos[0]["ip"] != infos[1]["ip"] and all(os.path.isabs(str(info["ip"])) for info in infos)
        for (_manager, client), word in zip(started, ("one", "two")):
            reply = client.execute_interactive(f"print({word!r})", timeout=60)
            assert reply["content"]["status"] == "ok"
    finally:
        for manager, client in started:
            client.stop_channels()
            manager.shutdown_kernel(now=True)
    for info in infos:
        folder, name = os.path.split(str(info["ip"]))
        assert not [entry for entry in os.listdir(folder) if entry.startswith(name)]


def test_build_and_nbval_start_their_kernels_over_ipc() -> None:
    assert IpcKernelManager().transport == "ipc"
    command = nbval.nbval_command(["notebooks/01-instruction-hierarchy.ipynb"], lax=False)
    assert command[command.index("forgelab.authoring.kernels") - 1] == "-p"
    import nbval.kernel as nbval_kernel  # type: ignore[import-untyped]
    from jupyter_client.manager import KernelManager

    from forgelab.authoring import kernels

    before = nbval_kernel.KernelManager
    try:
        kernels.pytest_configure(None)
        assert nbval_kernel.KernelManager is IpcKernelManager
    finally:
        nbval_kernel.KernelManager = before
    assert before is KernelManager
