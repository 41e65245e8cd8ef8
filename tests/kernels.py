"""One real IPython kernel per test process, attached to by the kernel sessions of tests that
only need a session's registration.

A tool registration is a kernel session on a notebook, made by the server's sessions API
(``POST api/sessions``). Most tests of the proposal tools never talk to that kernel: they need
the session, not a fresh interpreter. Starting and stopping an IPython kernel for each of them
costs a second of CPU on a machine where the suite runs four workers on two cores.

``AttachedKernelManager`` is the server's own kernel manager (jupyter_server's
``ServerKernelManager``) told that it does not own its kernel (jupyter_client's
``owns_kernel=False``, the mechanism for connecting to a kernel someone else started). Its
``start_kernel`` connects to this process's shared kernel instead of launching one, so the
session is created, listed, renamed and deleted through the real sessions API and kernel
manager, with a kernel id of its own, and the product's registration hooks see exactly the
calls they see with a launched kernel; shutting the kernel down removes it from the server
(and its registration) and leaves the shared process running for the next test.

A test module opts in with ``pytestmark = pytest.mark.shared_kernel`` (tests/conftest.py).
Tests that run code in the kernel, interrupt or restart it (the run tool, kernel restarts,
kernel death) keep launching real kernels of their own.
"""

from __future__ import annotations

import atexit
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jupyter_client.connect import write_connection_file
from jupyter_server.services.kernels.kernelmanager import ServerKernelManager

#: The kernel manager class the server config names for tests marked ``shared_kernel``.
ATTACHED_KERNEL_MANAGER = "tests.kernels.AttachedKernelManager"


@dataclass
class SharedKernel:
    """A real IPython kernel process and its connection info."""

    process: subprocess.Popen[bytes]
    info: dict[str, Any]
    folder: Path

    def stop(self) -> None:
        """End the kernel process."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)


_shared: SharedKernel | None = None
#: How many times this process started the shared kernel (a test checks it stays one).
starts = 0


def shared_kernel() -> SharedKernel:
    """This process's shared kernel, started on first use and again if it died."""
    global _shared, starts
    if _shared is not None and _shared.process.poll() is None:
        return _shared
    if _shared is not None:
        _shared.stop()
    folder = Path(tempfile.mkdtemp(prefix="copilot-shared-kernel-"))
    connection_file, info = write_connection_file(
        str(folder / "kernel.json"), ip="127.0.0.1", key=os.urandom(16).hex().encode()
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "ipykernel_launcher", "-f", connection_file],
        cwd=folder,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    _shared = SharedKernel(process, dict(info), folder)
    starts += 1
    return _shared


@atexit.register
def _stop_shared_kernel() -> None:
    if _shared is not None:
        _shared.stop()


class AttachedKernelManager(ServerKernelManager):
    """The server's kernel manager, connected to the shared kernel instead of launching one."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["owns_kernel"] = False
        super().__init__(*args, **kwargs)

    async def start_kernel(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        """Connect to the shared kernel: its ports and key become this kernel's."""
        self.load_connection_info(shared_kernel().info)  # type: ignore[arg-type]
        ready = self.ready
        if not ready.done():
            ready.set_result(None)
