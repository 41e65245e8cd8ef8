"""One agent subprocess, in its own process group, spoken to over ACP on its stdio.

The agent gets a trimmed environment (``acp.default_environment()`` plus the admin's
``env``), never the server's: no Jupyter token reaches it that way. Its stderr goes to a
temporary file, read only for a DEBUG log line when it exits, because an unread pipe would
block a chatty agent. Stopping ends the whole process group: terminate, a grace period,
then kill, and the server waits for it, for a bounded time.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Awaitable, Mapping
from typing import Any, TypeVar

import acp
from acp.client.connection import ClientSideConnection
from acp.schema import Implementation, InitializeResponse

from .._version import __version__
from .catalog import AgentSpec, resolve_env
from .egress import Egress, Network
from .limits import TurnLimits
from .policy import client_capabilities
from .sandbox import NET_DIR, REQUIRED, Launch, Sandbox, SandboxRequired

#: The program that gives a sandboxed agent its network (run with ``python -I -S``).
NETBRIDGE = os.path.join(os.path.dirname(__file__), "netbridge.py")

T = TypeVar("T")

_READ_CHUNK = 64 * 1024
_STDERR_TAIL_BYTES = 4000
#: How long to wait for the exit after SIGKILL, and again after closing the pipes.
_KILL_WAIT_SECONDS = 2.0


class AgentStartError(Exception):
    """The agent could not be started; the message is for the person."""


class AgentExited(Exception):
    """The agent process ended while we waited for it."""

    def __init__(self, returncode: int | None) -> None:
        super().__init__(f"exit code {returncode}")
        self.returncode = returncode


class AgentProcess:
    """A running agent: the process, its ACP connection and what it announced."""

    def __init__(
        self,
        spec: AgentSpec,
        client: Any,
        cwd: str,
        log: logging.Logger,
        grace_seconds: float = 3.0,
        sandbox: Sandbox | None = None,
        hide_root: bool = False,
        network: Network | None = None,
        line_max_bytes: int = TurnLimits.line_bytes,
        secret_env: Mapping[str, str] | None = None,
    ) -> None:
        self.spec = spec
        # Kept out of ``spec``, whose repr a traceback may print: a person's own key.
        self._secret_env = dict(secret_env or {})
        self._client = client
        self._cwd = cwd
        self._sandbox = sandbox
        self._hide_root = hide_root
        self._network = network
        #: The sandboxed agent's network while it runs (``egress.py``).
        self.egress: Egress | None = None
        self.log = log
        self.grace_seconds = grace_seconds
        self.line_max_bytes = line_max_bytes
        #: Set when the agent was stopped for writing a line over ``line_max_bytes``.
        self.line_overrun = False
        self._pump: asyncio.Future[None] | None = None
        self.proc: asyncio.subprocess.Process | None = None
        self.conn: ClientSideConnection | None = None
        self.init: InitializeResponse | None = None
        self._exit: asyncio.Future[int] | None = None
        self._stopping: asyncio.Future[None] | None = None
        self._private_cwd: str | None = None
        # Closed in stop(); the process writes to it for its whole life.
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115

    @property
    def exited(self) -> bool:
        """Whether the process has ended (or never started)."""
        if self._exit is None or self._exit.done():
            return True
        # Reaped already, while its pipes may still be closing.
        return self.proc is not None and self.proc.returncode is not None

    @property
    def ending(self) -> bool:
        """Whether the process has ended or is being stopped: no new turn may use it."""
        return self._stopping is not None or self.exited

    @property
    def pid(self) -> int | None:
        """The process id, which is also its process group id."""
        return self.proc.pid if self.proc is not None else None

    @property
    def accepts_embedded_context(self) -> bool:
        """Whether the agent takes embedded resources (an attached cell) in a prompt."""
        caps = self.init.agent_capabilities if self.init is not None else None
        prompt = caps.prompt_capabilities if caps is not None else None
        return bool(prompt is not None and prompt.embedded_context)

    @property
    def accepts_images(self) -> bool:
        """Whether the agent takes image content blocks in a prompt (a cell's plots)."""
        caps = self.init.agent_capabilities if self.init is not None else None
        prompt = caps.prompt_capabilities if caps is not None else None
        return bool(prompt is not None and prompt.image)

    async def start(self, timeout: float = 60.0) -> InitializeResponse:
        """Start the process and run ACP ``initialize``."""
        if self.spec.unavailable is not None:
            raise AgentStartError(
                f"The agent '{self.spec.label}' cannot start. {self.spec.unavailable}"
            )
        env = {
            **acp.default_environment(),
            **resolve_env(self.spec.env, os.environ),
            **self._secret_env,
        }
        command = list(self.spec.command)
        if shutil.which(command[0], path=env.get("PATH")) is None:
            # Checked here because inside the sandbox a missing command is bwrap's error.
            raise AgentStartError(
                f"The agent '{self.spec.label}' could not be started: its command was not found."
            )
        cwd = self._cwd
        pass_fds: tuple[int, ...] = ()
        sandboxed = self._sandbox is not None and self._sandbox.active
        if sandboxed:
            launch = await self._sandboxed(command, env)
            command, pass_fds = launch.argv, launch.pass_fds
            env.update(launch.env)
            env.update(self.spec.sandbox_env)
        elif self._sandbox is not None and self._sandbox.mode == REQUIRED:
            raise AgentStartError(
                "The agent sandbox is required on this server, but it does not work here; "
                "no agent can start. Ask your administrator."
            )
        if self.spec.private_cwd and not sandboxed:
            # Under the sandbox it starts in its private /tmp.
            self._private_cwd = tempfile.mkdtemp(prefix="jupyter-copilot-agent-")
            cwd = self._private_cwd
        try:
            self.proc = await asyncio.create_subprocess_exec(
                *command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=self._stderr,
                env=env,
                cwd=cwd,
                start_new_session=True,
                pass_fds=pass_fds,
            )
        except FileNotFoundError as e:
            await self._release()
            raise AgentStartError(
                f"The agent '{self.spec.label}' could not be started: its command was not found."
            ) from e
        except OSError as e:
            await self._release()
            raise AgentStartError(
                f"The agent '{self.spec.label}' could not be started ({e.strerror})."
            ) from e
        finally:
            for fd in pass_fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._exit = asyncio.ensure_future(self.proc.wait())
        self._exit.add_done_callback(self._on_exit)
        # ACP reads whole lines however long: it reads complete lines from us instead.
        lines = asyncio.StreamReader(limit=self.line_max_bytes + 1)
        self._pump = asyncio.ensure_future(self._pump_lines(self.proc.stdout, lines))
        self.conn = ClientSideConnection(self._client, self.proc.stdin, lines)
        try:
            self.init = await self.call(
                self.conn.initialize(
                    protocol_version=acp.PROTOCOL_VERSION,
                    client_capabilities=client_capabilities(),
                    client_info=Implementation(name="jupyter-copilot", version=__version__),
                ),
                timeout,
            )
        except (AgentExited, asyncio.TimeoutError, acp.RequestError) as e:
            await self.stop()
            raise AgentStartError(
                f"The agent '{self.spec.label}' did not start: it did not answer the "
                "Agent Client Protocol handshake."
            ) from e
        return self.init

    async def _sandboxed(self, command: list[str], env: dict[str, str]) -> Launch:
        """How to start ``command`` in the sandbox, with its network served."""
        assert self._sandbox is not None
        if self._network is not None:
            self.egress = await self._network.open(env, self.spec.model_hosts(env))
            env.update(self.egress.plan.env)
            bridge = self.egress.bridge_args(NET_DIR)
        else:
            bridge = []
        # Its own loopback is the agent's whole network: the bridge carries what it may reach.
        wrapped = [sys.executable, "-I", "-S", NETBRIDGE, *bridge, "--", *command]
        try:
            # It looks through the folder for notebooks: not on the event loop.
            return await asyncio.to_thread(
                self._sandbox.launch,
                wrapped,
                agent_id=self.spec.id,
                hide_root=self._hide_root,
                private_cwd=self.spec.private_cwd,
                credentials=self.spec.credentials,
                settings=self.spec.settings,
                env=env,
                net_dir=self.egress.folder if self.egress is not None else None,
                path=env.get("PATH"),
                program=command,
            )
        except (SandboxRequired, OSError) as e:
            await self._release()
            raise AgentStartError(
                f"The agent '{self.spec.label}' could not be started in the sandbox."
            ) from e

    def mcp_url(self, outer: str) -> str:
        """Our MCP endpoint's URL as this agent reaches it."""
        return self.egress.mcp_url(outer) if self.egress is not None else outer

    async def _release(self) -> None:
        """Give back what the process had besides itself: its folder, its network."""
        self._remove_private_cwd()
        if self.egress is not None:
            await self.egress.close()
            self.egress = None

    async def call(self, awaitable: Awaitable[T], timeout: float | None = None) -> T:
        """Await an ACP request, unless the process ends first (:class:`AgentExited`)."""
        task: asyncio.Future[Any] = asyncio.ensure_future(awaitable)
        assert self._exit is not None
        waiters: set[asyncio.Future[Any]] = {task, self._exit}
        try:
            done, _ = await asyncio.wait(
                waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
        except asyncio.CancelledError:
            task.cancel()
            raise
        if task in done:
            if isinstance(task.exception(), ConnectionError):
                # The agent closed its stdout: it is exiting; report how it ended.
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(asyncio.shield(self._exit), 5.0)
                raise AgentExited(self._exit.result() if self._exit.done() else None)
            result: T = task.result()
            return result
        task.cancel()
        if self._exit.done():
            raise AgentExited(self._exit.result())
        raise asyncio.TimeoutError

    async def _pump_lines(self, stdout: asyncio.StreamReader, lines: asyncio.StreamReader) -> None:
        """Pass the agent's complete lines on; stop the agent at a line over the cap.

        At most one line is held here, so a line without end costs at most the cap.
        """
        line = bytearray()  # the line being written, not yet ended
        try:
            while chunk := await stdout.read(_READ_CHUNK):
                complete = bytearray()
                start = 0
                while (end := chunk.find(b"\n", start)) >= 0:
                    if len(line) + end - start > self.line_max_bytes:
                        break
                    complete += line
                    complete += chunk[start : end + 1]
                    line.clear()
                    start = end + 1
                else:
                    line += chunk[start:]
                if complete:
                    lines.feed_data(bytes(complete))
                if end >= 0 or len(line) > self.line_max_bytes:
                    self._line_overrun()
                    return
        except Exception:  # noqa: BLE001 - a broken pipe ends the stream like EOF
            pass
        finally:
            lines.feed_eof()

    def _line_overrun(self) -> None:
        self.line_overrun = True
        self.log.warning(
            "Copilot agent '%s' wrote a line longer than %d bytes; it is stopped",
            self.spec.id,
            self.line_max_bytes,
        )
        asyncio.ensure_future(self.stop())

    async def stop(self) -> None:
        """End the process group and wait for the process, for a bounded time.

        Idempotent: every call waits for the one stop. Safe under cancellation: a caller
        that gives up does not cancel the stop, nor poison a later one.
        """
        if self._stopping is None:
            self._stopping = asyncio.ensure_future(self._stop())
        await asyncio.shield(self._stopping)

    async def _stop(self) -> None:
        proc = self.proc
        try:
            if proc is None:
                return
            if self.conn is not None:
                # Closing waits for the reader, which a child holding stdout can block.
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self.conn.close(), 1.0)
            if proc.stdin is not None:
                with contextlib.suppress(Exception):
                    proc.stdin.close()
            self._signal_group(signal.SIGTERM)
            if not await self._exited_within(self.grace_seconds):
                # It ignored SIGTERM: kill the group while the agent is still ours to signal.
                self._signal_group(signal.SIGKILL)
                if not await self._exited_within(_KILL_WAIT_SECONDS):
                    # A helper that left the group holds our pipes open, so the exit is never
                    # reported: close the pipes and stop waiting for them.
                    self._close_pipes(proc)
                    await self._exited_within(_KILL_WAIT_SECONDS)
        finally:
            if self._pump is not None:
                self._pump.cancel()
            # Python 3.10 reports the exit before the pipes close: our ends would stay open
            # for as long as such a helper lives.
            self._close_pipes(proc)
            self._stderr.close()
            await self._release()

    @staticmethod
    def _close_pipes(proc: asyncio.subprocess.Process | None) -> None:
        """Close our ends of the agent's pipes (a no-op for those already closed).

        asyncio's process has no close of its own: its transport's close is the one.
        """
        transport = getattr(proc, "_transport", None)
        if transport is not None:
            with contextlib.suppress(Exception):
                transport.close()

    def _remove_private_cwd(self) -> None:
        if self._private_cwd is not None:
            shutil.rmtree(self._private_cwd, ignore_errors=True)
            self._private_cwd = None

    async def _exited_within(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for the exit to be reported; never cancels the watch."""
        if self._exit is None:
            return True
        await asyncio.wait({asyncio.shield(self._exit)}, timeout=seconds)
        return self._exit.done()

    def _signal_group(self, sig: int) -> None:
        """Signal the agent's process group, only while the agent has not been reaped.

        Once reaped its id may belong to someone else's process group (kernels lead their
        own), so a late signal could hit a stranger.
        """
        if self.proc is None or self.proc.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)

    def _on_exit(self, future: asyncio.Future[int]) -> None:
        if future.cancelled():
            return
        code = future.result()
        self.log.info("Copilot agent '%s' exited (code %s)", self.spec.id, code)
        with contextlib.suppress(Exception):
            self._stderr.seek(0, os.SEEK_END)
            size = self._stderr.tell()
            self._stderr.seek(max(0, size - _STDERR_TAIL_BYTES))
            tail = self._stderr.read().decode("utf-8", "replace")
            # What the agent wrote may quote the conversation: DEBUG only.
            self.log.debug("Copilot agent '%s' stderr tail:\n%s", self.spec.id, tail)
