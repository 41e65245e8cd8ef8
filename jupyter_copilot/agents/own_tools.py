"""An agent's own tools, held to the conversation's mode: file reads, file writes, shell, asks.

Adapters that honour the client capabilities we announce send their own Read, Write and
shell tools here instead of acting on disk. Each request is checked in a fixed order
(docs/security.md, "Agents' own tools"):

1. the kill switch (``kill-switch``);
2. the path resolves inside the server's root after symlinks (``outside-root``) and is
   not a notebook (``notebook-file``); a read checks its grants (3 and 4) before this, and
   whether the file exists only after, so that a conversation without the grant learns
   nothing about paths (docs/security.md, "Smaller guarantees");
3. the conversation allows it: reads need the ``files`` reference (``blocked``), writes are
   refused in Plan and Chat-only (``plan-mode``), shell commands need
   ``CopilotApp.agent_shell = "ask"`` and a mode that edits (``not-permitted``);
4. the server's authorizer lets the person read or write files (``blocked``, ``read-only``);
5. a command can be shown as it will run (``shell.prepare``): at most 4,000 characters
   (``over-budget``), no direction controls, a program found on the ``PATH``
   (``invalid-input``);
6. a write opens a file review and a command waits for the person's Allow.

A refusal answers the agent with a JSON-RPC error whose message starts with the code, and
the person sees a notice in the turn. The agent's own permission requests follow the mode
too: Chat-only and Plan reject writes, commands and fetches at once; a request for one of
our own MCP tools is allowed once (the tool holds the call to the mode itself); every other
request becomes a card. Nothing is ever allowed for an agent's own tool without the person.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import acp
from acp.schema import (
    AllowedOutcome,
    CreateTerminalResponse,
    DeniedOutcome,
    EnvVariable,
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    ToolCallUpdate,
    WaitForTerminalExitResponse,
)

from ..page.bridge import PageSession
from ..page.dispatcher import Dispatcher
from ..protocol.callers import CONTEXT_REFS
from ..protocol.hiddenchars import bidi_controls, escaped
from ..protocol.refusals import Refusal
from ..tools.approvals import Approvals
from . import files, shell
from .conversation import OUTPUT_CHARS, Conversation
from .filereviews import FileReviews
from .policy import MCP_SERVER_NAME
from .shell import MAX_COMMAND_CHARS, Terminal, Terminals

#: The JSON-RPC error code of a refused request (the server-defined range).
REFUSED = -32001
#: The most names of ignored environment variables a shell card lists, and their length.
MAX_IGNORED_ENV = 50
MAX_ENV_NAME_CHARS = 100

_KIND_WORDS = {
    "edit": "edit files",
    "delete": "delete files",
    "move": "move files",
    "execute": "run a command",
    "fetch": "fetch from the network",
    "switch_mode": "leave plan mode",
}


@dataclass
class OwnToolsHost:
    """What the agent's own tools need from the server."""

    approvals: Approvals
    dispatcher: Dispatcher
    file_reviews: FileReviews
    #: The server's root directory, absolute.
    root: str
    #: Whether the kill switch is engaged now.
    tools_engaged: Callable[[], bool]
    #: ``CopilotApp.agent_shell`` now: ``ask`` or ``never``.
    shell_policy: Callable[[], str]
    #: Seconds a shell command may run.
    shell_timeout: Callable[[], float]
    #: The names of our MCP tools, which hold every call to the mode themselves.
    our_tools: frozenset[str] = frozenset()
    #: The context references the administrator's policy allows now (``adminpolicy.py``).
    allowed_refs: Callable[[], Iterable[str]] = lambda: CONTEXT_REFS
    #: The mode a call runs in under the policy now: Plan when the conversation's mode is no
    #: longer allowed.
    allowed_mode: Callable[[str], str] = lambda mode: mode


def _refused(refusal: Refusal) -> acp.RequestError:
    return acp.RequestError(REFUSED, f"{refusal.code}: {refusal.message}", {"code": refusal.code})


class OwnTools:
    """The agent's own tools for one conversation."""

    def __init__(self, host: OwnToolsHost, conversation: Conversation) -> None:
        self.host = host
        self.conversation = conversation

    def _refs(self) -> list[str]:
        """The conversation's context references, as far as the policy allows them now."""
        allowed = set(self.host.allowed_refs())
        return [r for r in self.conversation.context_refs if r in allowed]

    def _mode(self) -> str:
        """The conversation's mode, or Plan if the policy no longer allows it."""
        return self.host.allowed_mode(self.conversation.mode)

    # -- files ------------------------------------------------------------------------------

    async def read_text_file(
        self, path: str, line: int | None, limit: int | None
    ) -> ReadTextFileResponse:
        """A file's text (or the lines asked for), if the conversation may read files."""
        c = self.conversation
        try:
            self._check_switch()
            refusal = files.read_refusal(c.chat_only, self._refs())
            if refusal is None and not c.may_read_files:
                refusal = Refusal("blocked", "You may not read files on this server.")
            if refusal is not None:
                raise refusal
            api_path = self._resolve(path)
            if not await self.host.file_reviews.exists(api_path):
                # Agents read a file before they write it; a new file reads as empty, which
                # tells no more than that it is not there.
                return ReadTextFileResponse(content="")
            text = await self.host.file_reviews.read(api_path)
        except Refusal as refusal:
            self._notice(f"Refused the agent's file read: {refusal.message}")
            raise _refused(refusal) from None
        return ReadTextFileResponse(content=_lines(text or "", line, limit))

    async def write_text_file(self, path: str, content: str) -> None:
        """Open a file review of the write; nothing is written until the person's Keep."""
        c = self.conversation
        try:
            self._check_switch()
            api_path = self._resolve(path)
            refusal = files.write_refusal(c.chat_only, self._mode())
            if refusal is None and not c.may_write_files:
                refusal = Refusal("read-only", "You may not write files on this server.")
            if refusal is not None:
                raise refusal
            if not isinstance(content, str):
                raise Refusal("invalid-input", "The content must be text.")
            review = await self.host.file_reviews.propose(
                owner=c.owner,
                group=c.id,
                page=self._page(),
                path=api_path,
                content=content,
                agent=c.agent.label,
            )
        except Refusal as refusal:
            self._notice(f"Refused the agent's file write: {refusal.message}")
            raise _refused(refusal) from None
        if review is not None:
            self._notice(
                f"{c.agent.label} proposed a change to {api_path}; nothing is written until "
                "you press Keep in its review."
            )

    # -- shell ------------------------------------------------------------------------------

    async def create_terminal(
        self,
        command: str,
        args: list[str] | None,
        env: list[EnvVariable] | None,
        cwd: str | None,
        output_byte_limit: int | None,
    ) -> CreateTerminalResponse:
        """Run a command after the person allows its card; never automatically.

        The card shows the command line, the absolute path of the program that will run,
        the folder, and the names of the environment variables the agent asked for, which
        are not used (``shell.py``). What runs is exactly what the card shows.
        """
        c = self.conversation
        try:
            self._check_switch()
            refusal = files.shell_refusal(c.chat_only, self._mode(), self.host.shell_policy())
            if refusal is not None:
                raise refusal
            if not isinstance(command, str) or not command.strip():
                raise Refusal("invalid-input", "The command must be a non-empty string.")
            folder = files.resolve(self.host.root, cwd or self.host.root)
            real_cwd = os.path.join(os.path.realpath(self.host.root), *folder.split("/"))
            if not os.path.isdir(real_cwd):
                raise Refusal("invalid-input", "The command's folder does not exist.")
            environment = acp.default_environment()
            run = shell.prepare(
                command, list(args or []), real_cwd, environment.get("PATH", os.defpath)
            )
            allowed = await self.host.approvals.ask_shell(
                owner=c.owner,
                page=self._page(),
                description=f"{c.agent.label} wants to run a command",
                command=run.line,
                program=run.program,
                folder=folder,
                ignored_env=_ignored_names(env),
                group=c.id,
            )
            if not allowed:
                raise Refusal("denied", "The person did not allow this command; it did not run.")
            # Checked again: the switch may have engaged while the card waited.
            self._check_switch()
            if c.terminals is None:
                c.terminals = Terminals(self.host.shell_timeout())
            try:
                terminal = await c.terminals.start(
                    run.argv, real_cwd, environment, output_byte_limit
                )
            except OSError as e:
                raise Refusal("invalid-input", f"The command could not start ({e}).") from e
        except Refusal as refusal:
            self._notice(f"Refused the agent's command: {refusal.message}")
            raise _refused(refusal) from None
        self._show_terminal(terminal, escaped(run.line))
        return CreateTerminalResponse(terminal_id=terminal.terminal_id)

    async def terminal_output(self, terminal_id: str) -> TerminalOutputResponse:
        """What the command printed so far, and how it ended if it did."""
        terminal = self._terminal(terminal_id)
        return TerminalOutputResponse(
            output=terminal.text(),
            truncated=terminal.truncated,
            exit_status=_exit_status(terminal) if terminal.done.is_set() else None,
        )

    async def wait_for_terminal_exit(self, terminal_id: str) -> WaitForTerminalExitResponse:
        """Wait until the command ended (its time limit bounds the wait)."""
        terminal = self._terminal(terminal_id)
        await terminal.done.wait()
        return WaitForTerminalExitResponse(
            exit_code=terminal.exit_code, signal=terminal.exit_signal
        )

    async def kill_terminal(self, terminal_id: str) -> None:
        """Kill the command; its output stays readable."""
        self._terminal(terminal_id).kill()

    async def release_terminal(self, terminal_id: str) -> None:
        """Kill the command if it runs and forget it."""
        if self.conversation.terminals is not None:
            self.conversation.terminals.release(terminal_id)

    # -- the agent's own permission requests -------------------------------------------------

    async def request_permission(
        self, tool_call: ToolCallUpdate, options: list[PermissionOption]
    ) -> RequestPermissionResponse:
        """Reject at once what the mode forbids; ask the person about everything else."""
        c = self.conversation
        kind = tool_call.kind if isinstance(tool_call.kind, str) else None
        title = (tool_call.title or "a tool call")[:200]
        engaged = self.host.tools_engaged()
        if not c.chat_only and files.is_our_tool(
            tool_call.title, kind, self.host.our_tools, MCP_SERVER_NAME
        ):
            return _allow_once(options)
        if engaged or files.rejects_at_once(c.chat_only, self._mode(), kind):
            why = (
                "Copilot tools are turned off"
                if engaged
                else ("Chat-only" if c.chat_only else "Plan mode")
            )
            what = _KIND_WORDS.get(kind or "", "use its own tools")
            self._notice(f"{why}: refused the agent's own request to {what} ({title}).")
            return _reject(options)
        if kind == "execute" and len(tool_call.title or "") > MAX_COMMAND_CHARS:
            # A command the person cannot see whole is never put to them.
            self._notice(
                f"Refused the agent's own request to run a command longer than "
                f"{MAX_COMMAND_CHARS} characters: it could not be shown in full."
            )
            return _reject(options)
        if kind == "execute" and bidi_controls(tool_call.title or ""):
            # Nor one whose text may show in another order than the one it runs in.
            self._notice(
                "Refused the agent's own request to run a command holding characters that "
                "change the direction of text: it could not be shown as it would run."
            )
            return _reject(options)
        choice = await self._ask(tool_call, options)
        if choice is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=choice)
        )

    async def _ask(self, tool_call: ToolCallUpdate, options: list[PermissionOption]) -> str | None:
        c = self.conversation
        try:
            page = self._page()
        except Refusal:
            return None
        details: dict[str, Any] = {"conversationId": c.id, "toolCallId": tool_call.tool_call_id}
        if tool_call.kind == "execute" and tool_call.title:
            # Agents title a command request with the command: the card shows it whole.
            details["command"] = tool_call.title
        return await self.host.approvals.ask_permission(
            owner=c.owner,
            page=page,
            title=(tool_call.title or "A tool call")[:200],
            description=f"{c.agent.label} asks for permission",
            details=details,
            options=[
                {"optionId": o.option_id, "name": o.name[:80], "kind": o.kind} for o in options
            ],
            group=c.id,
        )

    # -- internals ---------------------------------------------------------------------------

    def _check_switch(self) -> None:
        if self.host.tools_engaged():
            raise Refusal("kill-switch")

    def _resolve(self, path: str) -> str:
        api_path = files.resolve(self.host.root, path)
        files.refuse_notebook(path, api_path)
        return api_path

    def _page(self) -> PageSession:
        """The page that sent the conversation's latest message, else the active page."""
        try:
            return self.host.dispatcher.resolve(self.conversation.page_id)
        except Refusal:
            return self.host.dispatcher.resolve()

    def _terminal(self, terminal_id: str) -> Terminal:
        terminals = self.conversation.terminals
        terminal = terminals.get(terminal_id) if terminals is not None else None
        if terminal is None:
            raise acp.RequestError.invalid_params({"terminalId": "unknown terminal"})
        return terminal

    def _notice(self, text: str) -> None:
        """A line in the turn (which shows the agent's paths and titles in it with their
        hidden characters as escapes)."""
        turn = self.conversation.running
        if turn is not None:
            turn.notice(text)

    def _show_terminal(self, terminal: Terminal, shown: str) -> None:
        """A tool card of our own for the command, with its output when it ends."""
        turn = self.conversation.running
        if turn is None:
            return
        card = f"shell-{terminal.terminal_id}"
        turn.emit(
            {
                "type": "tool",
                "toolCallId": card,
                "title": f"$ {shown}"[:200],
                "status": "in_progress",
            }
        )

        def ended(_: Any) -> None:
            failed = terminal.exit_code != 0 or terminal.timed_out
            error = None
            if terminal.timed_out:
                error = "The command ran out of time and was stopped."
            elif failed:
                how = terminal.exit_signal or f"exit code {terminal.exit_code}"
                error = f"The command failed ({how})."
            turn.emit(
                {
                    "type": "tool",
                    "toolCallId": card,
                    "status": "failed" if failed else "completed",
                    "error": error,
                    "output": terminal.text()[-OUTPUT_CHARS:],
                }
            )

        waiter = terminal.task
        if waiter is not None:
            waiter.add_done_callback(ended)


def _ignored_names(env: list[EnvVariable] | None) -> list[str]:
    """The names of the variables an agent asked for, which are never used: sorted, at
    most :data:`MAX_IGNORED_ENV`, each cut to :data:`MAX_ENV_NAME_CHARS` characters."""
    names = sorted({v.name for v in env or [] if isinstance(v.name, str)})
    return [n[:MAX_ENV_NAME_CHARS] for n in names[:MAX_IGNORED_ENV]]


def _exit_status(terminal: Terminal) -> TerminalExitStatus:
    return TerminalExitStatus(exit_code=terminal.exit_code, signal=terminal.exit_signal)


def _allow_once(options: list[PermissionOption]) -> RequestPermissionResponse:
    """The agent's "allow once" option (never "always"); cancelled if it offers none."""
    allows = [o for o in options if o.kind == "allow_once"]
    if not allows:
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
    return RequestPermissionResponse(
        outcome=AllowedOutcome(outcome="selected", option_id=allows[0].option_id)
    )


def _reject(options: list[PermissionOption]) -> RequestPermissionResponse:
    """The agent's own reject option, preferring "reject once"; cancelled if it offers none."""
    rejects = [o for o in options if o.kind.startswith("reject")]
    rejects.sort(key=lambda o: o.kind != "reject_once")
    if not rejects:
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
    return RequestPermissionResponse(
        outcome=AllowedOutcome(outcome="selected", option_id=rejects[0].option_id)
    )


def _lines(text: str, line: int | None, limit: int | None) -> str:
    """ACP's ``line`` (1-based) and ``limit`` applied to a file's text."""
    if line is None and limit is None:
        return text
    lines = text.splitlines(keepends=True)
    start = max(0, (line or 1) - 1)
    end = len(lines) if limit is None or limit < 0 else start + limit
    return "".join(lines[start:end])
