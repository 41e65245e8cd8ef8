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
kernel death) keep launching real kernels of their own, with ``WorkerPortKernelManager``.

Kernel ports. jupyter_client picks a kernel's five ports by binding port 0 and closing the
socket; the kernel binds them a second or so later. In between, the port is free for anyone
on the machine, and with several test workers starting servers, kernels and connections, one
was taken once in CI ("Address already in use", the kernel died before its first reply). So
every kernel a test starts, launched or shared, gets its ports from ``KernelPorts``: a range
of this worker's own below the kernel's ephemeral range, which neither port 0 nor an outgoing
connection ever draws from, handed out in turn and checked free before use.
"""

from __future__ import annotations

import atexit
import os
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jupyter_client.asynchronous.client import AsyncKernelClient
from jupyter_client.connect import write_connection_file
from jupyter_server.services.kernels.kernelmanager import ServerKernelManager

#: The kernel manager class the server config names for tests marked ``shared_kernel``.
ATTACHED_KERNEL_MANAGER = "tests.kernels.AttachedKernelManager"
#: The kernel manager class the server config names for every other test.
WORKER_PORT_KERNEL_MANAGER = "tests.kernels.WorkerPortKernelManager"

#: The lowest port a test kernel may use; the highest is below the ephemeral range.
FIRST_KERNEL_PORT = 10000
#: The ports of one kernel: shell, iopub, stdin, heartbeat, control.
PORT_NAMES = ("shell_port", "iopub_port", "stdin_port", "hb_port", "control_port")


def ephemeral_start(path: Path = Path("/proc/sys/net/ipv4/ip_local_port_range")) -> int:
    """The first port the kernel hands out for port 0 and outgoing connections (Linux's
    ``ip_local_port_range``; 32768, its default, where that cannot be read)."""
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


class KernelPorts:
    """The kernel ports of one test worker: its share of the ports from ``FIRST_KERNEL_PORT``
    up to the ephemeral range, by its pytest-xdist number, handed out in turn from a place
    that moves on with every port, so that a port is used again only after the whole share
    has been, and skipped while anything holds it."""

    def __init__(self, worker: int, workers: int, end: int) -> None:
        size = (end - FIRST_KERNEL_PORT) // max(workers, 1)
        if not 0 <= worker < workers or size < 10 * len(PORT_NAMES):
            raise ValueError(f"no kernel port range for worker {worker} of {workers}")
        self.first = FIRST_KERNEL_PORT + worker * size
        self.size = size
        self.next = 0

    @classmethod
    def for_this_worker(cls) -> KernelPorts:
        """The share of the pytest-xdist worker running this process (all of it with -n 0)."""
        name = os.environ.get("PYTEST_XDIST_WORKER", "")
        workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
        worker = int(name.removeprefix("gw")) if name.startswith("gw") else 0
        return cls(worker, workers, ephemeral_start())

    def take(self, ip: str) -> int:
        """The next port of this share that nothing on ``ip`` holds now."""
        for _ in range(self.size):
            port = self.first + self.next
            self.next = (self.next + 1) % self.size
            with socket.socket() as probe:
                try:
                    probe.bind((ip, port))
                except OSError:
                    continue
            return port
        raise RuntimeError(
            f"every kernel port from {self.first} to {self.first + self.size} is taken"
        )

    def for_kernel(self, ip: str) -> dict[str, int]:
        """Five ports for one kernel."""
        return {name: self.take(ip) for name in PORT_NAMES}


_ports: KernelPorts | None = None


def kernel_ports(ip: str = "127.0.0.1") -> dict[str, int]:
    """Five ports for a kernel this test process starts, from this worker's share."""
    global _ports
    if _ports is None:
        _ports = KernelPorts.for_this_worker()
    return _ports.for_kernel(ip)


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
        str(folder / "kernel.json"),
        ip="127.0.0.1",
        key=os.urandom(16).hex().encode(),
        **kernel_ports("127.0.0.1"),
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


async def kernel_implementation(info: dict[str, Any]) -> str:
    """The ``implementation`` a kernel at ``info`` names in its ``kernel_info`` reply."""
    client = AsyncKernelClient()
    client.load_connection_info(info)
    client.start_channels()
    try:
        reply = await client.kernel_info(reply=True, timeout=60)
        return reply["content"]["implementation"]  # type: ignore[no-any-return]
    finally:
        client.stop_channels()


class WorkerPortKernelManager(ServerKernelManager):
    """The server's kernel manager, launching its kernel on ports from this worker's share
    (``KernelPorts``) instead of ports that were free a moment before the kernel binds them.
    A restart keeps the kernel's ports, as jupyter_client's own port cache does."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["cache_ports"] = False
        super().__init__(*args, **kwargs)

    async def start_kernel(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        """Take five ports for the kernel, the first time, then launch it."""
        if self.transport == "tcp" and not self.shell_port:
            for name, port in kernel_ports(self.ip).items():
                setattr(self, name, port)
        await super().start_kernel(*args, **kwargs)


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
