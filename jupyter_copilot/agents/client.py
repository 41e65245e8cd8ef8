"""The ACP client side of a conversation's agent.

It turns the agent's updates into the turn's stream (reply text, one-line tool calls) and
its permission requests into approval cards. It implements no file system or terminal
methods: an agent that asks us to read or write a file or run a command gets "method not
found".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from acp.schema import (
    AgentMessageChunk,
    AllowedOutcome,
    DeniedOutcome,
    PermissionOption,
    RequestPermissionResponse,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
)

from .conversation import ERROR_CHARS, Conversation

if TYPE_CHECKING:
    from .host import Conversations


class AgentClient:
    """The ACP client side of one conversation's agent."""

    def __init__(self, conversations: Conversations, conversation: Conversation) -> None:
        self._conversations = conversations
        self._conversation = conversation

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        """Stream reply text and tool calls into the running turn; ignore the rest."""
        turn = self._conversation.running
        if turn is None or session_id != self._conversation.session_id:
            return
        if isinstance(update, AgentMessageChunk):
            if isinstance(update.content, TextContentBlock) and update.content.text:
                turn.emit({"type": "text", "text": update.content.text})
        elif isinstance(update, (ToolCallStart, ToolCallProgress)):
            turn.emit(_tool_event(update))

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **_: Any
    ) -> RequestPermissionResponse:
        """Ask the person with an approval card that offers the agent's options."""
        choice = await self._conversations.ask_permission(self._conversation, tool_call, options)
        if choice is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=choice)
        )


def _tool_event(update: ToolCallStart | ToolCallProgress) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "tool", "toolCallId": update.tool_call_id}
    if update.title:
        event["title"] = update.title[:200]
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
    return event
