"""Jupyter kernels that talk over Unix sockets (IPC) instead of TCP ports.

jupyter_client picks a kernel's five TCP ports by binding port 0 and closing it again; the kernel binds them a second
or two later, and on a busy machine another process can take one in between (a notebook test of the suite once
failed with ``Address already in use``). Over IPC each channel is a socket file named after a fresh UUID in
Jupyter's runtime folder: nothing else can take it, and the kernel removes it when it shuts down.

Used wherever the course's own tools run notebooks: ``forgelab build`` (:class:`IpcKernelManager` for nbclient),
``forgelab nbval`` (this module is loaded into nbval's pytest with ``-p``, and :func:`pytest_configure` makes nbval
start its kernels this way) and the tests (:func:`start_kernel`).
"""

from __future__ import annotations

import os
import uuid
from typing import Any

from jupyter_client.blocking.client import BlockingKernelClient
from jupyter_client.manager import KernelManager
from jupyter_core.paths import jupyter_runtime_dir
from traitlets import CaselessStrEnum, default


class IpcKernelManager(KernelManager):
    """A :class:`KernelManager` whose kernel listens on Unix sockets with names of its own."""

    transport = CaselessStrEnum(["tcp", "ipc"], default_value="ipc", config=True)

    @default("ip")
    def _ipc_path(self) -> str:
        if self.transport != "ipc":
            return str(super()._ip_default())
        folder = jupyter_runtime_dir()
        os.makedirs(folder, exist_ok=True)
        return os.path.join(folder, f"kernel-{uuid.uuid4()}-ipc")  # the channels are this path plus -1 … -5


def start_kernel(cwd: str, env: dict[str, str], startup_timeout: float = 60,
                 kernel_name: str = "python3") -> tuple[IpcKernelManager, BlockingKernelClient]:
    """A started kernel and its ready client, as ``jupyter_client.manager.start_new_kernel`` gives, over IPC."""
    manager = IpcKernelManager(kernel_name=kernel_name)
    manager.start_kernel(cwd=cwd, env=env)
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=startup_timeout)
    except RuntimeError:
        client.stop_channels()
        manager.shutdown_kernel()
        raise
    return manager, client


def pytest_configure(config: Any) -> None:
    """Loaded into nbval's pytest (``-p forgelab.authoring.kernels``): nbval's kernels start over IPC too."""
    import nbval.kernel  # type: ignore[import-untyped]  # lazy: only nbval's own pytest process has it to patch

    nbval.kernel.KernelManager = IpcKernelManager
