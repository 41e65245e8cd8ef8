"""Shell commands an agent asked for and the person allowed: ACP terminals, bounded.

A command runs only after the person allowed its card (``own_tools.py`` asks). Before the
card, :func:`prepare` fixes exactly what will run: the program is looked up on the ``PATH``
the command runs with and the card names its absolute path, which is then run as it is.
The agent's own ``env`` is never used (docs/security.md, "Cards and diffs"): a variable
such as ``PATH``, ``LD_PRELOAD`` or ``BASH_ENV`` would change what runs without showing on
the card, so the card only lists the names the agent asked for, as not used.

A command runs in its own process group, in a folder inside the server's root, with a
trimmed environment (never the server's: no Jupyter token), for at most
``CopilotApp.agent_shell_timeout_seconds``, and keeps at most the last ``output_cap`` bytes
of its output (stdout and stderr together). Killing or releasing a terminal ends its whole
process group.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import uuid
from dataclasses import dataclass, field

from ..protocol.hiddenchars import bidi_controls, escaped
from ..protocol.refusals import Refusal

#: The most output a terminal keeps, in bytes; the agent may ask for less.
OUTPUT_CAP = 256 * 1024
#: The most terminals one conversation may hold at once.
MAX_TERMINALS = 8
#: The longest command line a card shows, in characters; a longer one is refused
#: (``over-budget``) rather than shown cut.
MAX_COMMAND_CHARS = 4000
#: The shell that runs a command line sent without arguments.
SHELL = "/bin/sh"


@dataclass(frozen=True)
class Command:
    """A command exactly as it will run, and as its card shows it."""

    #: The program's absolute path, as it will be executed.
    program: str
    #: The arguments it gets, ``argv[0]`` being :attr:`program`.
    argv: list[str]
    #: The command line as the agent sent it: the command and its arguments shell-quoted,
    #: or the line itself when the agent sent a line for the shell.
    line: str


def prepare(command: str, args: list[str] | None, cwd: str, search_path: str) -> Command:
    """What an agent's ``terminal/create`` will run, or a :class:`Refusal`; checked in order.

    1. the line is at most :data:`MAX_COMMAND_CHARS` characters (``over-budget``);
    2. it holds no direction control (``invalid-input``): such a character can make a card
       show text in another order than the one that runs (docs/security.md);
    3. with arguments, ``command`` names a program found as ``exec`` would find it: a name
       with a slash relative to ``cwd``, any other on ``search_path`` (``invalid-input``
       when there is none). Without arguments, ``command`` is a line for :data:`SHELL`.
    """
    line = shlex.join([command, *args]) if args else command
    if len(line) > MAX_COMMAND_CHARS:
        raise Refusal(
            "over-budget",
            f"The command is longer than {MAX_COMMAND_CHARS} characters, so it could not be "
            "shown in full; it did not run.",
        )
    controls = bidi_controls(line)
    if controls:
        raise Refusal(
            "invalid-input",
            f"The command holds characters that change the direction of text "
            f"({escaped(''.join(dict.fromkeys(controls)))}), so it could not be shown as it "
            "would run; it did not run.",
        )
    if "\x00" in line:
        raise Refusal("invalid-input", "The command holds a NUL character; it did not run.")
    if not args:
        return Command(SHELL, [SHELL, "-c", command], line)
    program = resolve_program(command, search_path, cwd)
    if program is None:
        raise Refusal(
            "invalid-input",
            f"No program named {escaped(command)} was found on the PATH that commands run "
            "with; it did not run.",
        )
    return Command(program, [program, *args], line)


def resolve_program(command: str, search_path: str, cwd: str) -> str | None:
    """The absolute path ``exec`` would run for ``command`` in ``cwd``, or ``None``.

    A name holding a slash is taken relative to ``cwd``; any other is looked for in each
    folder of ``search_path`` in turn, an empty or relative entry meaning a folder relative
    to ``cwd`` (as ``execvp`` reads it, not as this server's own folder would).
    """
    if not command:
        return None
    if "/" in command:
        candidate = os.path.normpath(os.path.join(cwd, command))
        return candidate if _runnable(candidate) else None
    for entry in search_path.split(os.pathsep):
        candidate = os.path.normpath(os.path.join(cwd, entry, command))
        if _runnable(candidate):
            return candidate
    return None


def _runnable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


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
            if not terminal.timed_out:
                # The output ended: the command exits by itself in a moment. Wait for that, so
                # that its exit code is its own and not the kill's below.
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(terminal.proc.wait(), 2.0)
            # A child that kept the pipe open after the command exited is ended with it.
            terminal.kill()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(terminal.proc.wait(), 5.0)
            terminal.done.set()
