"""A conversation and its turns, as the panel sees them; no I/O.

A turn collects what the agent streams (reply text and one-line tool calls) and replays it
to every listener, so a page that reloads mid-turn can read the rest with ``GET``.
"""

from __future__ import annotations

import asyncio
import datetime
import hashlib
import secrets
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..protocol.hiddenchars import escaped
from .catalog import AgentSpec
from .limits import TurnLimits

if TYPE_CHECKING:
    from .process import AgentProcess
    from .shell import Terminals

#: How much of the first message becomes the conversation's title.
TITLE_CHARS = 80
#: A failed tool call's error as the panel shows it, at most this long.
ERROR_CHARS = 300
#: A notice, and a shell command's output as its tool card shows it, at most this long.
NOTICE_CHARS = 500
OUTPUT_CHARS = 4000

END_TURN = "end_turn"
CANCELLED = "cancelled"
ERROR = "error"


def token_key(token: str) -> str:
    """What the server keeps of a conversation token: its SHA-256, not the token."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class Turn:
    """One message of the person and the agent's reply to it."""

    def __init__(
        self,
        text: str,
        attachment: dict[str, Any] | None,
        limits: TurnLimits | None = None,
    ) -> None:
        self.turn_id = uuid.uuid4().hex
        self.text = text
        self.attachment = attachment
        self.reply: list[str] = []
        #: What the server told the person about this turn (a refused request, say).
        self.notices: list[str] = []
        self.tool_calls: dict[str, dict[str, Any]] = {}
        #: The tokens the agent reported for this turn, with the conversation's totals.
        self.usage: dict[str, int] | None = None
        #: How full the agent's context is (ACP ``usage_update``): used and size, in tokens.
        self.context: tuple[int, int] | None = None
        self.stop_reason: str | None = None
        self.error: str | None = None
        self.cancel_requested = False
        self.restarted = False
        self.events: list[dict[str, Any]] = []
        self.limits = limits or TurnLimits()
        #: The attached cell's images until they are sent (``images.py``); never stored.
        self.images: list[dict[str, Any]] = []
        self._reply_bytes = 0
        #: Set once the turn hit one of its limits; what to tell the person.
        self.limit_hit = asyncio.Event()
        self.limit_message = ""
        self._wake = asyncio.Event()
        #: Streams reading this turn now; it is compacted only once none is.
        self._readers = 0
        self._release_when_read = False

    @property
    def ended(self) -> bool:
        """Whether the turn has ended."""
        return self.stop_reason is not None

    def emit(self, event: dict[str, Any]) -> None:
        """Record one stream event and wake the listeners."""
        if self.ended or (self.limit_hit.is_set() and event["type"] != "end"):
            return
        kind = event["type"]
        if kind != "end" and len(self.events) >= self.limits.events:
            self._over(f"The reply had more than {self.limits.events} updates; it was stopped.")
            return
        if kind == "text":
            size = len(event["text"].encode("utf-8", "surrogatepass"))
            if self._reply_bytes + size > self.limits.reply_bytes:
                self._over(
                    f"The reply was longer than {self.limits.reply_bytes} bytes; it was stopped."
                )
                return
            self._reply_bytes += size
            self.reply.append(event["text"])
        elif kind == "tool":
            call = self.tool_calls.setdefault(
                event["toolCallId"],
                {
                    "toolCallId": event["toolCallId"],
                    "title": "",
                    "status": "pending",
                    "error": None,
                },
            )
            call.update(
                {
                    k: v
                    for k, v in event.items()
                    if k in ("title", "status", "error", "output", "kind", "cellId")
                }
            )
            event = {"type": "tool", **call}
        elif kind == "notice":
            self.notices.append(event["text"])
        elif kind == "usage":
            self.usage = {k: v for k, v in event.items() if k != "type"}
        elif kind == "end":
            self.stop_reason = event["stopReason"]
            self.error = event.get("error")
        self.events.append(event)
        wake, self._wake = self._wake, asyncio.Event()
        wake.set()

    def _over(self, message: str) -> None:
        """A limit was hit: nothing more is kept, and the turn is to end with ``message``."""
        self.limit_message = message
        self.limit_hit.set()
        wake, self._wake = self._wake, asyncio.Event()
        wake.set()

    def notice(self, text: str) -> None:
        """Tell the person something about this turn, in its reply area. Notices quote the
        agent (a path, a title, the mode it switched to), so their hidden characters are
        escaped here, for every notice (docs/security.md, "Cards and diffs")."""
        self.emit({"type": "notice", "text": escaped(text[:NOTICE_CHARS])})

    def end(self, stop_reason: str, error: str | None = None) -> None:
        """End the turn (a second end is ignored)."""
        self.emit({"type": "end", "stopReason": stop_reason, "error": error})

    async def stream(self) -> AsyncIterator[dict[str, Any]]:
        """Every event from the start, then the new ones, up to and including ``end``."""
        index = 0
        self._readers += 1
        try:
            while True:
                wake = self._wake
                while index < len(self.events):
                    event = self.events[index]
                    index += 1
                    yield event
                    if event["type"] == "end":
                        return
                await wake.wait()
        finally:
            self._readers -= 1
            if self._readers == 0 and self._release_when_read:
                self._compact()

    def release(self) -> None:
        """Keep only what the transcript shows: the reply in one piece, each tool call's
        last state, the notices and the end; no stream events. For an ended turn of an
        archived conversation; done once its last reader has finished."""
        if not self.ended:
            return
        if self._readers:
            self._release_when_read = True
        else:
            self._compact()

    def _compact(self) -> None:
        self._release_when_read = False
        reply = "".join(self.reply)
        self.reply = [reply] if reply else []
        events: list[dict[str, Any]] = [{"type": "text", "text": reply}] if reply else []
        events += [{"type": "tool", **call} for call in self.tool_calls.values()]
        events += [{"type": "notice", "text": text} for text in self.notices]
        if self.usage is not None:
            events.append({"type": "usage", **self.usage})
        events.append({"type": "end", "stopReason": self.stop_reason, "error": self.error})
        self.events = events

    @classmethod
    def restored(cls, data: dict[str, Any]) -> Turn:
        """A turn read back from the store (``store.py``); one the server stopped during
        ends with an error that says so."""
        user = data.get("user")
        user = user if isinstance(user, dict) else {}
        turn = cls(str(user.get("text") or ""), _dict_or_none(user.get("attachment")))
        turn.turn_id = str(data.get("turnId") or turn.turn_id)
        turn.reply = [str(data.get("reply") or "")]
        turn.notices = [str(n) for n in data.get("notices") or [] if isinstance(n, str)]
        for call in data.get("toolCalls") or []:
            if isinstance(call, dict) and isinstance(call.get("toolCallId"), str):
                turn.tool_calls[call["toolCallId"]] = call
        usage = data.get("usage")
        if isinstance(usage, dict):
            turn.usage = {
                k: v for k, v in usage.items() if isinstance(k, str) and type(v) is int
            } or None
        stop_reason = data.get("stopReason")
        if isinstance(stop_reason, str):
            turn.stop_reason = stop_reason
            turn.error = data.get("error") if isinstance(data.get("error"), str) else None
        else:
            turn.stop_reason = ERROR
            turn.error = "The server stopped during this reply."
        turn._compact()
        return turn

    def to_json(self) -> dict[str, Any]:
        """The turn as ``GET conversations/<id>`` shows it."""
        return {
            "turnId": self.turn_id,
            "user": {"text": self.text, "attachment": self.attachment},
            "reply": "".join(self.reply),
            "notices": list(self.notices),
            "toolCalls": list(self.tool_calls.values()),
            "stopReason": self.stop_reason,
            "error": self.error,
            "usage": self.usage,
        }


def _dict_or_none(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


@dataclass
class Conversation:
    """One conversation of one person with one agent."""

    owner: str
    #: The Jupyter user that created it; the authorizer is asked about this user.
    user: Any
    agent: AgentSpec
    chat_only: bool
    context_refs: list[str]
    mode: str
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    #: The opaque id events carry instead of ``id``.
    ref: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    created_at: str = field(
        default_factory=lambda: (
            datetime.datetime.now(datetime.timezone.utc)
            .isoformat(timespec="seconds")
            .replace("+00:00", "Z")
        )
    )
    #: The bearer token that lets this conversation's agent call our MCP endpoint.
    token: str = field(default_factory=lambda: "jcc-" + secrets.token_urlsafe(32), repr=False)
    archived: bool = False
    #: When it was archived (``time.monotonic()``): the oldest archived are forgotten first.
    archived_at: float = 0.0
    title: str | None = None
    #: Whether the agent was offered our MCP endpoint; fixed at the first message.
    tools_offered: bool | None = None
    #: Whether the agent has connected to our MCP endpoint with its token.
    tools_attached: bool = False
    #: Whether the person was told that the agent has not connected (said once).
    told_not_attached: bool = False
    #: A notice for the next turn, when it came up between turns.
    next_notice: str | None = None
    #: What the server's authorizer lets the person do with files, as of the last message.
    may_read_files: bool = False
    may_write_files: bool = False
    #: The agent's own session mode we hold it in, and the modes it offers.
    agent_mode: str | None = None
    agent_modes: tuple[str, ...] = ()
    #: Shell commands the person allowed, while they run.
    terminals: Terminals | None = None
    turns: list[Turn] = field(default_factory=list)
    #: The notebooks its messages were sent from, by path, first one first (the panel's
    #: per-notebook history, and the links of an export).
    notebooks: list[str] = field(default_factory=list)
    #: The page that sent the latest message: the agent's permission cards go there.
    page_id: str | None = None
    process: AgentProcess | None = None
    #: The agent's ACP session id; kept in the store to bring the session back.
    session_id: str | None = None
    #: Whether the agent announced ``loadSession`` when it last started.
    loads_sessions: bool = False
    #: While ``session/load`` runs: the agent replays history the panel already has.
    loading_session: bool = False
    running: Turn | None = None
    task: asyncio.Task[None] | None = None
    #: Stops the agent process after a quiet period (``agent_idle_timeout_seconds``).
    idle: asyncio.Task[None] | None = None
    #: Tells the person once when the agent, offered our tools, has not connected to them.
    attach_check: asyncio.Task[None] | None = None

    @property
    def started(self) -> bool:
        """Whether the first message was sent (the tools are fixed from then on)."""
        return self.tools_offered is not None

    @property
    def resumable(self) -> bool:
        """Whether an archived conversation can be picked up again: its agent is still on
        offer and brings its earlier session back (ACP ``session/load``)."""
        return (
            self.archived
            and self.loads_sessions
            and self.session_id is not None
            and bool(self.agent.command)
        )

    def to_json(self) -> dict[str, Any]:
        """The conversation's metadata, as listed."""
        return {
            "id": self.id,
            "agentId": self.agent.id,
            "agentLabel": self.agent.label,
            "chatOnly": self.chat_only,
            "contextRefs": list(self.context_refs),
            "mode": self.mode,
            "toolsOffered": self.tools_offered,
            "toolsAttached": self.tools_attached,
            "state": "running" if self.running is not None else "idle",
            "archived": self.archived,
            "createdAt": self.created_at,
            "title": self.title,
            "notebooks": list(self.notebooks),
            "resumable": self.resumable,
        }

    def stored_json(self) -> dict[str, Any]:
        """What the store keeps of the conversation besides its turns; never its token."""
        return {
            **self.to_json(),
            "state": "idle",
            "ref": self.ref,
            "sessionId": self.session_id,
            "loadsSessions": self.loads_sessions,
        }

    def detail_json(self) -> dict[str, Any]:
        """The conversation with its turns."""
        return {"conversation": self.to_json(), "turns": [t.to_json() for t in self.turns]}


#: The most tokens a figure may say; a larger one is not believed.
MAX_TOKENS = 10**12


def tokens(value: Any) -> int | None:
    """A token count an agent reported, if it is one."""
    return value if type(value) is int and 0 <= value < MAX_TOKENS else None
