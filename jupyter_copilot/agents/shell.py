"""Shell commands an agent asked for and the person allowed: ACP terminals, bounded.

A command runs only after the person allowed its card (``own_tools.py`` asks). It runs in
its own process group, in a folder inside the server's root, with a trimmed environment
(never the server's: no Jupyter token), for at most ``CopilotApp.agent_shell_timeout_seconds``,
and keeps at most the last ``output_cap`` bytes of its output (stdout and stderr together).
Killing or releasing a terminal ends its whole process group.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import uuid
from dataclasses import dataclass, field

#: The most output a terminal keeps, in bytes; the agent may ask for less.
OUTPUT_CAP = 256 * 1024
#: The most terminals one conversation may hold at once.
MAX_TERMINALS = 8


@dataclass
class Terminal:
    """One command and what it printed so far."""

    terminal_id: str
    proc: asyncio.subprocess.Process
    cap: int
    output: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    timed_out: bool = False
    done: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None

    @property
    def exit_code(self) -> int | None:
        """The exit code, ``None`` while running or when ended by a signal."""
        code = self.proc.returncode
        return code if code is not None and code >= 0 else None

    @property
    def exit_signal(self) -> str | None:
        """The signal that ended the command, if one did."""
        code = self.proc.returncode
        if code is None or code >= 0:
            return None
        with contextlib.suppress(ValueError):
            return signal.Signals(-code).name
        return str(-code)

    def text(self) -> str:
        """The output kept, as text (a cut multi-byte character at the start is dropped)."""
        return self.output.decode("utf-8", "ignore")

    def append(self, chunk: bytes) -> None:
        """Keep the tail of the output within ``cap`` bytes."""
        self.output += chunk
        if len(self.output) > self.cap:
            del self.output[: len(self.output) - self.cap]
            self.truncated = True

    def kill(self) -> None:
        """End the command's process group while its leader is still ours to signal."""
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)


class Terminals:
    """The terminals of one conversation."""

    def __init__(self, timeout: float) -> None:
        self._timeout = timeout
        self._by_id: dict[str, Terminal] = {}

    async def start(
        self, argv: list[str], cwd: str, env: dict[str, str], output_limit: int | None
    ) -> Terminal:
        """Start ``argv`` in ``cwd``; the output is read until it ends or time runs out."""
        if len(self._by_id) >= MAX_TERMINALS:
            raise OSError("too many terminals are open in this conversation")
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
        cap = min(output_limit, OUTPUT_CAP) if output_limit and output_limit > 0 else OUTPUT_CAP
        terminal = Terminal(uuid.uuid4().hex, proc, cap)
        terminal.task = asyncio.ensure_future(self._run(terminal))
        self._by_id[terminal.terminal_id] = terminal
        return terminal

    def get(self, terminal_id: str) -> Terminal | None:
        """A terminal of this conversation by id."""
        return self._by_id.get(terminal_id)

    def release(self, terminal_id: str) -> None:
        """Kill the command if it still runs and forget it."""
        terminal = self._by_id.pop(terminal_id, None)
        if terminal is not None:
            terminal.kill()

    def close(self) -> None:
        """The conversation ended: every command is killed."""
        for terminal_id in list(self._by_id):
            self.release(terminal_id)

    async def _run(self, terminal: Terminal) -> None:
        stdout = terminal.proc.stdout
        assert stdout is not None

        async def pump() -> None:
            while chunk := await stdout.read(65536):
                terminal.append(chunk)

        try:
            await asyncio.wait_for(pump(), self._timeout)
        except asyncio.TimeoutError:
            terminal.timed_out = True
            terminal.kill()
        finally:
            # A child that kept the pipe open after the command exited is ended with it.
            terminal.kill()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(terminal.proc.wait(), 5.0)
            terminal.done.set()
