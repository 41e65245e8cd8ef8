"""The conversations of this server, by id and by token, and what the panel asks of them.

A conversation belongs to the person who created it; its turns (``turns.py``), its agent
process (``processes.py``) and the agent's own session mode (``permissions.py``) are run by
the objects this one owns.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any

from ..protocol.callers import (
    APPROVAL_MODES,
    CONTEXT_REFS,
    CONVERSATION,
    INTERACTIVE,
    SELECTED_CELL,
    Caller,
)
from ..protocol.refusals import Refusal
from . import bodies
from .catalog import AgentSpec, available
from .conversation import Conversation, Turn
from .conversation import token_key as _token_key
from .export import active_notebook_path
from .host import ConversationsHost
from .modelprobe import ModelProbes
from .permissions import AgentModes
from .personalkeys import PersonalKeys, checked_key, takes_personal_key
from .processes import AgentProcesses
from .turns import Turns

#: What a new conversation starts with, and what "Restore defaults" brings back, unless the
#: administrator configured other defaults (``CopilotApp.default_context_refs``, ...).
DEFAULT_CONTEXT_REFS = (SELECTED_CELL,)
DEFAULT_MODE = INTERACTIVE

_REF_TEXTS = {
    "selected_cell": ("Selected cell", "Read the one cell you have selected, with its hash."),
    "active_notebook": ("Active notebook", "Read every cell of the active notebook, in pages."),
    "cell_outputs": (
        "Cell outputs",
        "Read summaries of outputs of the cells it may read; an attached cell's plots go with "
        "your message as images.",
    ),
    "kernel_variables": (
        "Kernel variables",
        "List the notebook's variables and describe one (DataFrames, arrays); runs no agent code.",
    ),
    "files": (
        "Files in the server's folder",
        "Read files in the server's folder through the agent's own tools (never notebooks).",
    ),
}
_MODE_TEXTS = {
    "plan": ("Plan", "Read only: the agent can suggest but not propose edits."),
    "interactive": ("Ask before edits", "Each proposed edit waits for your approval first."),
    "autopilot": ("Autopilot", "Edits open a diff review at once; you still Keep or Undo."),
}


class Conversations:
    """Every conversation of this server, by id, and their agents."""

    def __init__(self, host: ConversationsHost, catalog: list[AgentSpec]) -> None:
        self.host = host
        self.catalog = {spec.id: spec for spec in catalog}
        self._by_id: dict[str, Conversation] = {}
        self._by_token: dict[str, Conversation] = {}
        self._stopped = False
        self.modes = AgentModes(host.log)
        self.processes = AgentProcesses(host, self.modes, self._secret_env)
        self.turns = Turns(host, self.processes, self.modes, self._save)
        #: Whether each model endpoint answers, asked before the agents are listed.
        self.model_probes = ModelProbes()
        self._restore()

    # -- what the panel asks -----------------------------------------------------------------

    async def probe_models(self) -> None:
        """Ask the endpoints of the model agents that could run whether they answer
        (agents/modelprobe.py), so that the Agent menu says so before the person types."""
        await self.model_probes.refresh(s for s in self.catalog.values() if s.unavailable is None)

    def agents_json(self) -> dict[str, Any]:
        """The body of ``GET copilot/api/agents``: only what the administrator's policy
        allows is offered, and ``policy`` says what that is. A model whose endpoint did not
        answer the last probe says so in its description."""
        policy = self.host.policy()
        offered = list(self.catalog)
        allowed = set(policy.allowed_agents(offered))
        return {
            "agents": [self._shown(spec) for spec in self.catalog.values() if spec.id in allowed],
            "defaultAgent": policy.default_agent(available(self.catalog.values())),
            "contextRefs": [
                {"id": ref, "label": _REF_TEXTS[ref][0], "allows": _REF_TEXTS[ref][1]}
                for ref in policy.context_refs
            ],
            "modes": [
                {"id": mode, "label": _MODE_TEXTS[mode][0], "description": _MODE_TEXTS[mode][1]}
                for mode in policy.modes
            ],
            "defaults": {
                "contextRefs": policy.default_context_refs(),
                "mode": policy.default_mode(),
            },
            "policy": policy.to_json(offered),
            "toolsEnabled": self.host.tools_enabled(),
            "sandbox": self.host.sandbox.to_json(),
        }

    def _shown(self, spec: AgentSpec) -> dict[str, Any]:
        shown = spec.to_json()
        warning = None if spec.unavailable else self.model_probes.reason(spec)
        if warning is not None:
            shown["description"] = warning
        return shown

    def create(self, owner: str, user: Any, body: dict[str, Any]) -> Conversation:
        """A new conversation; its agent starts at the first message.

        What the body leaves out comes from the policy's defaults; what it asks for outside
        the policy ends ``not-permitted``.
        """
        if not self.catalog:
            raise Refusal("invalid-input", "No agent is configured on this server.")
        settings = bodies.settings(body, self.catalog)
        policy = self.host.policy()
        agent_id = settings.agent_id or policy.default_agent(available(self.catalog.values()))
        mode = settings.mode or policy.default_mode()
        if agent_id is None:
            if policy.allowed_agents(self.catalog):
                raise Refusal(
                    "invalid-input",
                    "None of the agents this server allows is installed: the Agent menu says "
                    "how to install them.",
                )
            raise Refusal("not-permitted", "This server's administrator allows none of its agents.")
        if mode is None:
            raise Refusal("not-permitted", "This server's administrator allows no mode.")
        context_refs = (
            settings.context_refs
            if settings.context_refs is not None
            else policy.default_context_refs()
        )
        policy.check(agent_id, mode, context_refs)
        self._startable(agent_id)
        conversation = Conversation(
            owner=owner,
            user=user,
            agent=self.catalog[agent_id],
            chat_only=bool(settings.chat_only),
            context_refs=context_refs,
            mode=mode,
        )
        self._by_id[conversation.id] = conversation
        self._by_token[_token_key(conversation.token)] = conversation
        self._save(conversation)
        return conversation

    # -- personal keys (docs/admin.md, "Personal keys") --------------------------------------

    def _personal_models(self) -> list[AgentSpec]:
        """The model agents a person may bring a key for: allowed, able to start, keyed."""
        policy = self.host.policy()
        return [
            s for s in self.catalog.values() if takes_personal_key(s) and policy.allows_agent(s.id)
        ]

    def _keys(self) -> PersonalKeys:
        keys = self.host.personal_keys
        if keys is None or not self.host.allow_personal_models():
            raise Refusal(
                "not-permitted", "This server's administrator does not allow personal keys."
            )
        return keys

    def personal_keys_json(self, owner: str) -> dict[str, Any]:
        """The body of ``GET copilot/api/personal-keys``: whether keys are allowed and, per
        model, whether the person set one; never a key."""
        keys = self.host.personal_keys
        if keys is None or not self.host.allow_personal_models():
            return {"allowed": False, "models": []}
        return {"allowed": True, "models": keys.listing(owner, self._personal_models())}

    def _personal_model(self, model_id: str) -> AgentSpec:
        spec = next((s for s in self._personal_models() if s.id == model_id), None)
        if spec is None:
            raise Refusal(
                "invalid-input",
                "That is not a model of this server that takes a personal key "
                "(GET copilot/api/personal-keys).",
            )
        return spec

    def set_personal_key(self, owner: str, model_id: str, body: Any) -> dict[str, Any]:
        """Store or replace the person's key for a model; the answer says only that it is set."""
        keys = self._keys()
        spec = self._personal_model(model_id)
        keys.set(owner, spec.id, checked_key(body))
        return {"id": spec.id, "keySet": True}

    def remove_personal_key(self, owner: str, model_id: str) -> dict[str, Any]:
        """Forget the person's key for a model."""
        keys = self._keys()
        spec = self._personal_model(model_id)
        keys.remove(owner, spec.id)
        return {"id": spec.id, "keySet": False}

    def personal_key(self, owner: str, spec: AgentSpec) -> str | None:
        """The key a conversation's model agent starts with, when its owner set one and
        the administrator allows personal keys now."""
        keys = self.host.personal_keys
        if keys is None or not self.host.allow_personal_models() or not takes_personal_key(spec):
            return None
        return keys.key(owner, spec.id)

    def _secret_env(self, conversation: Conversation) -> dict[str, str]:
        key = self.personal_key(conversation.owner, conversation.agent)
        return {} if key is None else {"COPILOT_MODEL_API_KEY": key}

    def _startable(self, agent_id: str) -> None:
        """Refuse an agent that is listed but cannot start (not installed, say) with the
        reason the Agent menu shows for it."""
        spec = self.catalog[agent_id]
        if spec.unavailable is not None:
            raise Refusal(
                "invalid-input", f"The agent '{spec.label}' cannot be used. {spec.unavailable}"
            )

    def listed(self, owner: str) -> list[Conversation]:
        """The owner's conversations, newest first.

        ``createdAt`` counts whole seconds: conversations created in the same second keep
        the order they were created (or stored) in, newest first too, since a reverse sort
        keeps equal items in the order given."""
        mine = [c for c in reversed(self._by_id.values()) if c.owner == owner]
        return sorted(mine, key=lambda c: c.created_at, reverse=True)

    def get(self, owner: str, conversation_id: str) -> Conversation:
        """The owner's conversation by id; another person's is not found either."""
        conversation = self._by_id.get(conversation_id)
        if conversation is None or conversation.owner != owner:
            raise Refusal("unknown-conversation", "There is no such conversation.")
        return conversation

    def patch(self, conversation: Conversation, body: dict[str, Any]) -> None:
        """Change the mode or grants; the agent and Chat-only only before the first message."""
        self._writable(conversation)
        settings = bodies.settings(body, self.catalog)
        self.host.policy().check(settings.agent_id, settings.mode, settings.context_refs)
        if conversation.started and (
            settings.agent_id not in (None, conversation.agent.id)
            or settings.chat_only not in (None, conversation.chat_only)
        ):
            raise Refusal(
                "invalid-input",
                "The agent and Chat-only are fixed at the first message; start a new "
                "conversation to change them.",
            )
        if settings.agent_id is not None:
            self._startable(settings.agent_id)
            conversation.agent = self.catalog[settings.agent_id]
        if settings.chat_only is not None:
            conversation.chat_only = settings.chat_only
        if settings.context_refs is not None:
            conversation.context_refs = settings.context_refs
        if settings.mode is not None:
            conversation.mode = settings.mode
        if settings.mode is not None or settings.chat_only is not None:
            self.modes.hold(conversation)
        self._save(conversation)

    def by_token(self, token: str) -> Conversation | None:
        """The live conversation a bearer token belongs to, if any.

        A request with a valid token is the agent connecting to our tools: from then on the
        conversation says ``toolsAttached``.
        """
        conversation = self._by_token.get(_token_key(token))
        if (
            conversation is None
            or conversation.archived
            or not conversation.tools_offered
            or self._stopped
        ):
            return None
        conversation.tools_attached = True
        return conversation

    async def send(
        self,
        conversation: Conversation,
        message: bodies.Message,
        may_read_files: bool = False,
        may_write_files: bool = False,
        user: Any = None,
    ) -> Turn:
        """Start a turn with the person's message (``Turns.send``).

        ``user`` is the Jupyter user sending it: a conversation read back from the store
        learns here whom its agent's tool calls act as.
        """
        self._writable(conversation)
        if conversation.user is None:
            conversation.user = user
        # The policy may have been tightened since the conversation was set up.
        self.host.policy().check(
            conversation.agent.id, conversation.mode, conversation.context_refs
        )
        turn = await self.turns.send(conversation, message, may_read_files, may_write_files)
        self._note_notebook(conversation, turn)
        return turn

    def _note_notebook(self, conversation: Conversation, turn: Turn) -> None:
        """Remember the notebook the message came from (the panel's per-notebook history),
        and link the attached cell to it (an export's links)."""
        path = active_notebook_path(self.host.dispatcher, conversation.page_id)
        if path is None:
            return
        if turn.attachment is not None:
            turn.attachment["notebook"] = path
        if path not in conversation.notebooks:
            conversation.notebooks.append(path)
            self._save(conversation)

    def resume(self, conversation: Conversation) -> None:
        """Pick an archived conversation up again: its agent will load its earlier session
        at the next message (``session/load``). Refused unless it is ``resumable`` and the
        administrator's policy still allows its agent, mode and grants."""
        if not conversation.archived:
            return
        if not conversation.resumable or conversation.agent.id not in self.catalog:
            raise Refusal(
                "invalid-input",
                f"{conversation.agent.label} cannot pick up an earlier session; open the "
                "conversation read only, or start a new one.",
            )
        self.host.policy().check(
            conversation.agent.id, conversation.mode, conversation.context_refs
        )
        if self._stopped:
            raise Refusal("feature-disabled", "The server is stopping.")
        conversation.archived = False
        conversation.archived_at = 0.0
        # The archived token was revoked for good; the resumed conversation gets a new one.
        conversation.token = "jcc-" + secrets.token_urlsafe(32)
        conversation.tools_attached = False
        self._by_token[_token_key(conversation.token)] = conversation
        self._save(conversation)

    async def cancel(self, conversation: Conversation) -> bool:
        """Stop: ask the agent to cancel; stop the agent if it does not within a grace."""
        return await self.turns.cancel(conversation)

    def caller(
        self, conversation: Conversation, may_write: Callable[[], Awaitable[bool]]
    ) -> Caller:
        """A side-panel agent's caller, with its conversation's grants and mode now, as far
        as the policy allows them now (a tightened policy applies to the next tool call)."""
        policy = self.host.policy()
        return Caller(
            kind=CONVERSATION,
            principal=conversation.owner,
            agent=conversation.agent.id,
            context_refs=frozenset(conversation.context_refs) & set(policy.context_refs),
            approval_mode=policy.caller_mode(conversation.mode),
            may_write=may_write,
            scope=conversation.id,
        )

    async def archive(self, conversation: Conversation) -> None:
        """Archive: cancel the turn, revoke the token and stop the agent."""
        if conversation.archived:
            return
        conversation.archived = True
        conversation.archived_at = time.monotonic()
        self._by_token.pop(_token_key(conversation.token), None)
        await self.processes.end(conversation)
        for turn in conversation.turns:
            turn.release()
        self._save(conversation)
        self._forget_oldest_archived(conversation.owner)

    async def delete(self, conversation: Conversation) -> None:
        """Delete: end the conversation as archiving does, and forget it, in the store too."""
        await self.archive(conversation)
        self._forget(conversation)

    def _forget_oldest_archived(self, owner: str) -> None:
        """Keep at most ``max_archived`` archived conversations of a person."""
        archived = sorted(
            (c for c in self._by_id.values() if c.owner == owner and c.archived),
            key=lambda c: c.archived_at,
        )
        for old in archived[: max(0, len(archived) - self.host.max_archived())]:
            self._forget(old)

    def _forget(self, conversation: Conversation) -> None:
        self._by_id.pop(conversation.id, None)
        if self.host.store is not None:
            self.host.store.delete(conversation.owner, conversation.id)

    async def stop(self) -> None:
        """The server is stopping: end every turn and stop every agent, and wait."""
        self._stopped = True
        self._by_token.clear()
        await asyncio.gather(*(self.processes.end(c) for c in self._by_id.values()))

    # -- the store ---------------------------------------------------------------------------

    def stored(self) -> bool:
        """Whether conversations are being stored (the store opened and writes work)."""
        return self.host.store is not None and self.host.store.available

    def _save(self, conversation: Conversation, turn: Turn | None = None) -> None:
        """Write the conversation's settings, and the turn if given, to the store."""
        store = self.host.store
        if store is None:
            return
        rows = [] if turn is None else [(conversation.turns.index(turn), turn.to_json())]
        store.save(conversation.owner, conversation.stored_json(), rows)

    def _restore(self) -> None:
        """Read the stored conversations back (the server starts)."""
        store = self.host.store
        if store is None:
            return
        for stored in store.load():
            conversation = self._restored(stored.owner, stored.data, stored.turns)
            if conversation is None:
                continue
            self._by_id[conversation.id] = conversation
            if not conversation.archived:
                self._by_token[_token_key(conversation.token)] = conversation
        for owner in {c.owner for c in self._by_id.values()}:
            self._forget_oldest_archived(owner)

    def _restored(
        self, owner: str, data: dict[str, Any], turns: list[dict[str, Any]]
    ) -> Conversation | None:
        """A conversation as stored; one whose agent is no longer on offer is archived."""
        conversation_id = data.get("id")
        if not isinstance(conversation_id, str) or conversation_id in self._by_id:
            return None
        agent = self.catalog.get(str(data.get("agentId")))
        gone = agent is None
        if agent is None:
            label = str(data.get("agentLabel") or data.get("agentId") or "Agent")
            agent = AgentSpec(id=str(data.get("agentId")), label=label, description="", command=())
        refs = data.get("contextRefs")
        conversation = Conversation(
            owner=owner,
            user=None,
            agent=agent,
            chat_only=bool(data.get("chatOnly")),
            context_refs=[r for r in CONTEXT_REFS if isinstance(refs, list) and r in refs],
            mode=data["mode"] if data.get("mode") in APPROVAL_MODES else DEFAULT_MODE,
            id=conversation_id,
            archived=bool(data.get("archived")) or gone,
            title=data.get("title") if isinstance(data.get("title"), str) else None,
            tools_offered=data.get("toolsOffered")
            if isinstance(data.get("toolsOffered"), bool)
            else None,
            session_id=data.get("sessionId") if isinstance(data.get("sessionId"), str) else None,
            loads_sessions=data.get("loadsSessions") is True,
            notebooks=[p for p in data.get("notebooks") or [] if isinstance(p, str)],
        )
        if isinstance(data.get("createdAt"), str):
            conversation.created_at = data["createdAt"]
        if isinstance(data.get("ref"), str):
            conversation.ref = data["ref"]
        # Archived ones are forgotten oldest first; the order they were created will do.
        conversation.archived_at = time.monotonic() if conversation.archived else 0.0
        conversation.turns = [Turn.restored(t) for t in turns if isinstance(t, dict)]
        return conversation

    # -- internals ---------------------------------------------------------------------------

    def _writable(self, conversation: Conversation) -> None:
        if conversation.archived:
            raise Refusal("invalid-input", "This conversation is archived; start a new one.")
        if self._stopped:
            raise Refusal("feature-disabled", "The server is stopping.")
