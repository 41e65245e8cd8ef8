"""REST handlers of side-panel conversations; they parse, authorize and delegate."""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from jupyter_core.utils import ensure_async
from jupyter_server.auth.decorator import authorized
from tornado import web
from tornado.iostream import StreamClosedError

from ..handlers import CopilotAPIHandler
from ..mcp.grants import principal_of
from ..refusals import Refusal
from . import bodies
from .conversation import Conversation

if TYPE_CHECKING:
    from ..app import CopilotApp


def _refusals_answered(method: Callable[..., Any]) -> Callable[..., Awaitable[None]]:
    """Turn a :class:`Refusal` raised by ``method`` into the contract's error answer."""

    @functools.wraps(method)
    async def wrapper(self: _ConversationHandler, *args: Any, **kwargs: Any) -> None:
        try:
            await ensure_async(method(self, *args, **kwargs))
        except Refusal as refusal:
            self.refuse(refusal)

    return wrapper


class _ConversationHandler(CopilotAPIHandler):
    """Common ground: the feature switch, the person, and answers as JSON."""

    def _check_enabled(self) -> None:
        if not self.copilot.enabled:
            raise Refusal("feature-disabled")

    @property
    def _owner(self) -> str:
        return principal_of(self.identity_provider, self.current_user)

    def _conversation(self, conversation_id: str) -> Conversation:
        self._check_enabled()
        return self.copilot.conversations.get(self._owner, conversation_id)

    async def _may(self, action: str) -> bool:
        """Whether the server's authorizer lets this person ``action`` files (contents)."""
        return bool(
            await ensure_async(
                self.authorizer.is_authorized(self, self.current_user, action, "contents")
            )
        )

    def _reply(self, body: dict[str, Any], status: int = 200) -> None:
        self.set_status(status)
        self.finish(json.dumps(body, ensure_ascii=False))


class AgentsHandler(_ConversationHandler):
    """``GET copilot/api/agents``: the agents, context references and modes on offer."""

    @web.authenticated
    @authorized("execute")
    @_refusals_answered
    def get(self) -> None:
        """The choices of the panel's pickers."""
        self._check_enabled()
        self._reply(self.copilot.conversations.agents_json())


class ConversationsHandler(_ConversationHandler):
    """``GET``/``POST copilot/api/conversations``: list and create."""

    @web.authenticated
    @authorized("execute")
    @_refusals_answered
    def get(self) -> None:
        """The person's conversations, newest first."""
        self._check_enabled()
        listed = self.copilot.conversations.listed(self._owner)
        self._reply({"conversations": [c.to_json() for c in listed]})

    @web.authenticated
    @authorized("execute")
    @_refusals_answered
    def post(self) -> None:
        """Create a conversation; its agent starts at the first message."""
        self._check_enabled()
        body = bodies.json_body(self.request.body)
        conversation = self.copilot.conversations.create(self._owner, self.current_user, body)
        self._reply({"conversation": conversation.to_json()}, 201)


class ConversationHandler(_ConversationHandler):
    """``GET``/``PATCH copilot/api/conversations/<id>``."""

    @web.authenticated
    @authorized("execute")
    @_refusals_answered
    def get(self, conversation_id: str) -> None:
        """The conversation with its turns."""
        self._reply(self._conversation(conversation_id).detail_json())

    @web.authenticated
    @authorized("execute")
    @_refusals_answered
    def patch(self, conversation_id: str) -> None:
        """Change the mode or the context references (the agent only before it started)."""
        conversation = self._conversation(conversation_id)
        self.copilot.conversations.patch(conversation, bodies.json_body(self.request.body))
        self._reply({"conversation": conversation.to_json()})


class MessagesHandler(_ConversationHandler):
    """``POST copilot/api/conversations/<id>/messages``: send, and stream the reply."""

    @web.authenticated
    @authorized("execute")
    @_refusals_answered
    async def post(self, conversation_id: str) -> None:
        """Start the turn, then write its events as NDJSON until it ends.

        The turn does not depend on this connection: if the page goes away, the agent
        finishes and ``GET conversations/<id>`` shows the reply.
        """
        conversation = self._conversation(conversation_id)
        message = bodies.message(bodies.json_body(self.request.body))
        turn = await self.copilot.conversations.send(
            conversation,
            message,
            may_read_files=await self._may("read"),
            may_write_files=await self._may("write"),
        )
        self.set_header("Content-Type", "application/x-ndjson; charset=UTF-8")
        self.set_header("Cache-Control", "no-store")
        self.set_header("X-Accel-Buffering", "no")
        try:
            async for event in turn.stream():
                self.write(json.dumps(event, ensure_ascii=False) + "\n")
                await self.flush()
        except StreamClosedError:
            return
        self.finish()


class CancelHandler(_ConversationHandler):
    """``POST copilot/api/conversations/<id>/cancel``: Stop."""

    @web.authenticated
    @authorized("execute")
    @_refusals_answered
    async def post(self, conversation_id: str) -> None:
        """Ask the agent to stop its turn; waiting approvals of the conversation end."""
        conversation = self._conversation(conversation_id)
        cancelled = await self.copilot.conversations.cancel(conversation)
        self._reply({"cancelled": cancelled})


class ArchiveHandler(_ConversationHandler):
    """``POST copilot/api/conversations/<id>/archive``."""

    @web.authenticated
    @authorized("execute")
    @_refusals_answered
    async def post(self, conversation_id: str) -> None:
        """Archive: the turn stops, the token stops working, the agent stops."""
        conversation = self._conversation(conversation_id)
        await self.copilot.conversations.archive(conversation)
        self._reply({"conversation": conversation.to_json()})


class FileReviewHandler(_ConversationHandler):
    """``POST copilot/api/file-reviews/<id>``: Keep or Undo an agent's proposed file write."""

    @web.authenticated
    @authorized("execute")
    @_refusals_answered
    async def post(self, review_id: str) -> None:
        """``{"decision": "keep" | "undo"}``; Keep writes only an unchanged file."""
        self._check_enabled()
        decision = bodies.file_decision(bodies.json_body(self.request.body))
        if decision == "keep" and not await self._may("write"):
            raise Refusal("read-only", "You may not write files on this server.")
        taken = await self.copilot.conversations.host.file_reviews.decide(
            review_id, self._owner, decision
        )
        self._reply({"decision": taken})


def conversation_routes(app: CopilotApp) -> list[tuple[str, type, dict[str, Any]]]:
    """The routes of the conversation API."""
    kwargs = {"app": app}
    one = r"/copilot/api/conversations/(?P<conversation_id>[0-9a-f]{32})"
    return [
        (r"/copilot/api/agents", AgentsHandler, kwargs),
        (r"/copilot/api/conversations", ConversationsHandler, kwargs),
        (one, ConversationHandler, kwargs),
        (one + "/messages", MessagesHandler, kwargs),
        (one + "/cancel", CancelHandler, kwargs),
        (one + "/archive", ArchiveHandler, kwargs),
        (r"/copilot/api/file-reviews/(?P<review_id>[0-9a-f]{32})", FileReviewHandler, kwargs),
    ]
