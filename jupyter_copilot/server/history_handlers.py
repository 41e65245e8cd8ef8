"""REST handlers of earlier conversations: take one with you as Markdown, pick one up again
(docs/conversations.md, "Earlier conversations")."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from jupyter_server.auth.decorator import authorized
from tornado import web

from ..admin.switches import FEATURE, Switches
from ..agents.conversations import Conversations
from ..agents.export import conversation_markdown, filename
from .web import CopilotHandler, gated


class _HistoryHandler(CopilotHandler):
    """Common ground: the person's own conversation by id (another's is not found)."""

    def initialize(  # type: ignore[override]
        self, switches: Switches, conversations: Conversations
    ) -> None:
        """Receive the switches and the conversations."""
        self.switches = switches
        self.conversations = conversations


class ExportHandler(_HistoryHandler):
    """``GET copilot/api/conversations/<id>/export``: the conversation as a Markdown file."""

    @web.authenticated
    @authorized("read")
    @gated(FEATURE)
    def get(self, conversation_id: str) -> None:
        """The Markdown, as a download named after the conversation's title and date.

        The server's token and the conversation's are redacted, with anything else that
        looks like a key (``agents/export.py``)."""
        conversation = self.conversations.get(self.principal, conversation_id)
        detail = conversation.detail_json()
        known = [conversation.token, str(getattr(self.identity_provider, "token", "") or "")]
        text = conversation_markdown(detail["conversation"], detail["turns"], known)
        name = filename(detail["conversation"])
        self.set_header("Cache-Control", "no-store")
        self.set_header("X-Content-Type-Options", "nosniff")
        disposition = f"attachment; filename=\"{name}\"; filename*=UTF-8''{quote(name)}"
        self.set_header("Content-Disposition", disposition)
        self.finish(text.encode("utf-8"), set_content_type="text/markdown; charset=UTF-8")


class ResumeHandler(_HistoryHandler):
    """``POST copilot/api/conversations/<id>/resume``: pick an archived conversation up."""

    @web.authenticated
    @authorized("execute")
    @gated(FEATURE)
    def post(self, conversation_id: str) -> None:
        """Un-archive it when its agent loads earlier sessions; ``invalid-input`` otherwise."""
        conversation = self.conversations.get(self.principal, conversation_id)
        self.conversations.resume(conversation)
        self.reply(conversation.detail_json())


def history_routes(
    switches: Switches, conversations: Conversations
) -> list[tuple[str, type, dict[str, Any]]]:
    """The routes of export and resume."""
    kwargs = {"switches": switches, "conversations": conversations}
    one = r"/copilot/api/conversations/(?P<conversation_id>[0-9a-f]{32})"
    return [
        (one + "/export", ExportHandler, kwargs),
        (one + "/resume", ResumeHandler, kwargs),
    ]
