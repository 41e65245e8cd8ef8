"""REST handlers of side-panel conversations; they parse, authorize and delegate."""

from __future__ import annotations

import json
from typing import Any

from jupyter_server.auth.decorator import authorized
from tornado import web
from tornado.iostream import StreamClosedError

from ..admin.switches import FEATURE, Switches
from ..agents import bodies
from ..agents.conversation import Conversation
from ..agents.conversations import Conversations
from ..agents.filereviews import FileReviews
from ..protocol.callers import KERNEL_VARIABLES
from ..protocol.refusals import Refusal
from .web import CopilotHandler, gated


class _ConversationHandler(CopilotHandler):
    """Common ground: the conversations, and the person's own conversation by id."""

    def initialize(  # type: ignore[override]
        self, switches: Switches, conversations: Conversations, file_reviews: FileReviews
    ) -> None:
        """Receive the switches, the conversations and the file reviews."""
        self.switches = switches
        self.conversations = conversations
        self.file_reviews = file_reviews

    def _conversation(self, conversation_id: str) -> Conversation:
        return self.conversations.get(self.principal, conversation_id)


class AgentsHandler(_ConversationHandler):
    """``GET copilot/api/agents``: the agents, context references and modes on offer."""

    @web.authenticated
    @authorized("execute")
    @gated(FEATURE)
    async def get(self) -> None:
        """The choices of the panel's pickers, once the model endpoints said whether they
        answer (a few seconds at most)."""
        await self.conversations.probe_models()
        self.reply(self.conversations.agents_json())


class PersonalKeysHandler(_ConversationHandler):
    """``GET copilot/api/personal-keys``: the models a person may bring a key for, and
    whether they set one (docs/admin.md, "Personal keys"); never a key."""

    @web.authenticated
    @authorized("execute")
    @gated(FEATURE)
    def get(self) -> None:
        """Whether personal keys are allowed and, per model, ``keySet``."""
        self.reply(self.conversations.personal_keys_json(self.principal))


class PersonalKeyHandler(_ConversationHandler):
    """``PUT``/``DELETE copilot/api/personal-keys/<model id>``: set, replace or remove the
    person's own key for one model. The answer never holds the key."""

    @web.authenticated
    @authorized("execute")
    @gated(FEATURE)
    def put(self, model_id: str) -> None:
        """Store or replace the key of the body ``{"key"}``."""
        self.reply(self.conversations.set_personal_key(self.principal, model_id, self.json_body()))

    @web.authenticated
    @authorized("execute")
    @gated(FEATURE)
    def delete(self, model_id: str) -> None:
        """Forget the key."""
        self.reply(self.conversations.remove_personal_key(self.principal, model_id))


class ConversationsHandler(_ConversationHandler):
    """``GET``/``POST copilot/api/conversations``: list and create."""

    @web.authenticated
    @authorized("execute")
    @gated(FEATURE)
    def get(self) -> None:
        """The person's conversations, newest first, each with its turns; ``stored`` says
        whether they last beyond a server restart."""
        listed = self.conversations.listed(self.principal)
        self.reply(
            {
                "conversations": [
                    {**c.to_json(), "turns": [t.to_json() for t in c.turns]} for c in listed
                ],
                "stored": self.conversations.stored(),
            }
        )

    @web.authenticated
    @authorized("execute")
    @gated(FEATURE)
    def post(self) -> None:
        """Create a conversation; its agent starts at the first message."""
        conversation = self.conversations.create(
            self.principal, self.current_user, self.json_body()
        )
        self.reply({"conversation": conversation.to_json()}, 201)


class ConversationHandler(_ConversationHandler):
    """``GET``/``PATCH``/``DELETE copilot/api/conversations/<id>``."""

    @web.authenticated
    @authorized("execute")
    @gated(FEATURE)
    def get(self, conversation_id: str) -> None:
        """The conversation with its turns."""
        self.reply(self._conversation(conversation_id).detail_json())

    @web.authenticated
    @authorized("execute")
    @gated(FEATURE)
    def patch(self, conversation_id: str) -> None:
        """Change the mode or the context references (the agent only before it started)."""
        conversation = self._conversation(conversation_id)
        self.conversations.patch(conversation, self.json_body())
        self.reply({"conversation": conversation.to_json()})

    @web.authenticated
    @authorized("execute")
    @gated(FEATURE)
    async def delete(self, conversation_id: str) -> None:
        """Delete: the turn stops, the agent stops, and the conversation is forgotten,
        in the store too."""
        await self.conversations.delete(self._conversation(conversation_id))
        self.reply({"deleted": True})


class MessagesHandler(_ConversationHandler):
    """``POST copilot/api/conversations/<id>/messages``: send, and stream the reply."""

    @web.authenticated
    @authorized("execute")
    @gated(FEATURE)
    async def post(self, conversation_id: str) -> None:
        """Start the turn, then write its events as NDJSON until it ends.

        The turn does not depend on this connection: if the page goes away, the agent
        finishes and ``GET conversations/<id>`` shows the reply.
        """
        conversation = self._conversation(conversation_id)
        message = bodies.message(self.json_body())
        turn = await self.conversations.send(
            conversation,
            message,
            may_read_files=await self.may("read"),
            may_write_files=await self.may("write"),
            user=self.current_user,
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


class VariablesHandler(_ConversationHandler):
    """``GET copilot/api/variables``: the active notebook's variable names, for ``@``."""

    @web.authenticated
    @authorized("execute")
    @gated(FEATURE)
    async def get(self) -> None:
        """Names, types and shapes of the person's variables, for the composer to offer;
        what an agent gets of one is read again when the message is sent, under its
        conversation's grants (docs/conversations.md, "Context chips")."""
        if KERNEL_VARIABLES not in self.conversations.host.policy().context_refs:
            raise Refusal(
                "not-permitted", "Your administrator does not allow kernel variables to be read."
            )
        variables = self.conversations.host.variables
        if variables is None:
            raise Refusal("no-active-session", "This server has no kernels to read.")
        listed = await variables.list()
        keys = ("name", "type", "shape", "length")
        self.reply(
            {
                "variables": [
                    {k: v[k] for k in keys if k in v}
                    for v in listed.get("variables", [])
                    if isinstance(v, dict) and isinstance(v.get("name"), str)
                ]
            }
        )


class CancelHandler(_ConversationHandler):
    """``POST copilot/api/conversations/<id>/cancel``: Stop."""

    @web.authenticated
    @authorized("execute")
    @gated(FEATURE)
    async def post(self, conversation_id: str) -> None:
        """Ask the agent to stop its turn; waiting approvals of the conversation end."""
        cancelled = await self.conversations.cancel(self._conversation(conversation_id))
        self.reply({"cancelled": cancelled})


class ArchiveHandler(_ConversationHandler):
    """``POST copilot/api/conversations/<id>/archive``."""

    @web.authenticated
    @authorized("execute")
    @gated(FEATURE)
    async def post(self, conversation_id: str) -> None:
        """Archive: the turn stops, the token stops working, the agent stops."""
        conversation = self._conversation(conversation_id)
        await self.conversations.archive(conversation)
        self.reply({"conversation": conversation.to_json()})


class FileReviewHandler(_ConversationHandler):
    """``POST copilot/api/file-reviews/<id>``: Keep or Undo an agent's proposed file write."""

    @web.authenticated
    @authorized("execute")
    @gated(FEATURE)
    async def post(self, review_id: str) -> None:
        """``{"decision": "keep" | "undo"}``; Keep writes only an unchanged file."""
        decision = bodies.file_decision(self.json_body())
        if decision == "keep" and not await self.may("write"):
            raise Refusal("read-only", "You may not write files on this server.")
        taken = await self.file_reviews.decide(review_id, self.principal, decision)
        self.reply({"decision": taken})


def conversation_routes(
    switches: Switches, conversations: Conversations, file_reviews: FileReviews
) -> list[tuple[str, type, dict[str, Any]]]:
    """The routes of the conversation API."""
    kwargs = {"switches": switches, "conversations": conversations, "file_reviews": file_reviews}
    one = r"/copilot/api/conversations/(?P<conversation_id>[0-9a-f]{32})"
    return [
        (r"/copilot/api/agents", AgentsHandler, kwargs),
        (r"/copilot/api/personal-keys", PersonalKeysHandler, kwargs),
        (r"/copilot/api/personal-keys/(?P<model_id>[^/]{1,64})", PersonalKeyHandler, kwargs),
        (r"/copilot/api/conversations", ConversationsHandler, kwargs),
        (one, ConversationHandler, kwargs),
        (one + "/messages", MessagesHandler, kwargs),
        (r"/copilot/api/variables", VariablesHandler, kwargs),
        (one + "/cancel", CancelHandler, kwargs),
        (one + "/archive", ArchiveHandler, kwargs),
        (r"/copilot/api/file-reviews/(?P<review_id>[0-9a-f]{32})", FileReviewHandler, kwargs),
    ]
