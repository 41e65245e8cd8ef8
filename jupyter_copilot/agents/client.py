"""The ACP client side of a conversation's agent.

It turns the agent's updates into the turn's stream (reply text, one-line tool calls) and
hands its file, shell and permission requests to :class:`OwnTools`, which holds them to the
conversation's mode. A change of the agent's own session mode is put back (``permissions.py``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from acp.schema import (
    AgentMessageChunk,
    CreateTerminalResponse,
    CurrentModeUpdate,
    EnvVariable,
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    TerminalOutputResponse,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    UsageUpdate,
    WaitForTerminalExitResponse,
)

from .conversation import ERROR_CHARS, Conversation, tokens
from .own_tools import OwnTools

if TYPE_CHECKING:
    from .permissions import AgentModes


class AgentClient:
    """The ACP client side of one conversation's agent."""

    def __init__(self, modes: AgentModes, conversation: Conversation, tools: OwnTools) -> None:
        self._modes = modes
        self._conversation = conversation
        self._tools = tools

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        """Stream reply text and tool calls into the running turn; hold the agent's mode."""
        if session_id != self._conversation.session_id or self._conversation.loading_session:
            # A session being loaded replays its history: the transcript holds it already.
            return
        if isinstance(update, CurrentModeUpdate):
            self._modes.changed(self._conversation, update.current_mode_id)
            return
        turn = self._conversation.running
        if turn is None:
            return
        if isinstance(update, AgentMessageChunk):
            if isinstance(update.content, TextContentBlock) and update.content.text:
                turn.emit({"type": "text", "text": update.content.text})
        elif isinstance(update, (ToolCallStart, ToolCallProgress)):
            turn.emit(_tool_event(update))
        elif isinstance(update, UsageUpdate):
            used, size = tokens(update.used), tokens(update.size)
            if used is not None and size:
                turn.context = (used, size)

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **_: Any
    ) -> RequestPermissionResponse:
        """Reject what the mode forbids at once; a card with the agent's options otherwise."""
        return await self._tools.request_permission(tool_call, options)

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **_: Any,
    ) -> ReadTextFileResponse:
        """A file read, if the conversation may read files."""
        return await self._tools.read_text_file(path, line, limit)

    async def write_text_file(self, session_id: str, path: str, content: str, **_: Any) -> None:
        """A file write becomes a file review; nothing is written before Keep."""
        await self._tools.write_text_file(path, content)

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **_: Any,
    ) -> CreateTerminalResponse:
        """A shell command, run only after the person allows its card."""
        return await self._tools.create_terminal(command, args, env, cwd, output_byte_limit)

    async def terminal_output(
        self, session_id: str, terminal_id: str, **_: Any
    ) -> TerminalOutputResponse:
        """What a command printed so far."""
        return await self._tools.terminal_output(terminal_id)

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **_: Any
    ) -> WaitForTerminalExitResponse:
        """Wait for a command to end."""
        return await self._tools.wait_for_terminal_exit(terminal_id)

    async def kill_terminal(self, session_id: str, terminal_id: str, **_: Any) -> None:
        """Kill a command."""
        await self._tools.kill_terminal(terminal_id)

    async def release_terminal(self, session_id: str, terminal_id: str, **_: Any) -> None:
        """Kill a command if it runs and forget it."""
        await self._tools.release_terminal(terminal_id)


#: An nbformat cell id: the only shape of a cell a tool card links to.
CELL_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def tool_cell(raw_input: Any) -> str | None:
    """The cell a tool call's input names (``cellId``, or ``afterCellId`` of a new cell).

    Only the id, never anything else of the input: the panel links the call's card to the
    cell when an open notebook has one with that id (docs/conversations.md).
    """
    if not isinstance(raw_input, dict):
        return None
    for key in ("cellId", "afterCellId"):
        value = raw_input.get(key)
        if isinstance(value, str) and CELL_ID.fullmatch(value):
            return value
    return None


def _tool_event(update: ToolCallStart | ToolCallProgress) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "tool", "toolCallId": update.tool_call_id}
    if update.title:
        event["title"] = update.title[:200]
    if (cell := tool_cell(update.raw_input)) is not None:
        event["cellId"] = cell
    if update.status:
        event["status"] = update.status
    if update.status == "failed":
        texts = [
            item.content.text
            for item in update.content or []
            if getattr(item, "type", None) == "content"
            and isinstance(getattr(item, "content", None), TextContentBlock)
        ]
        event["error"] = (" ".join(texts).strip() or "The tool call failed.")[:ERROR_CHARS]
    if isinstance(update.kind, str):
        event["kind"] = update.kind
    return event
