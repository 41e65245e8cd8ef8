"""The conversations of this server and the agents that answer them.

Each conversation gets its own agent process, started at its first message (and again at
the next message after a crash), under the sandbox where it works. The agent speaks ACP to
:class:`AgentClient`, which turns its updates into the turn's stream and hands its file,
shell and permission requests to :class:`OwnTools`, under the conversation's mode. The
agent's own session mode is held where it asks before acting (docs/security.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import acp

from ..approvals import Approvals
from ..callers import CONTEXT_REFS, FILES, INTERACTIVE, PLAN, SELECTED_CELL
from ..dispatcher import Dispatcher
from ..refusals import Refusal
from ..telemetry import Telemetry
from . import bodies
from .catalog import AgentSpec
from .client import AgentClient
from .conversation import CANCELLED, END_TURN, ERROR, TITLE_CHARS, Conversation, Turn, TurnLimits
from .conversation import token_key as _token_key
from .filereviews import FileReviews
from .own_tools import OwnTools, OwnToolsHost
from .policy import UNSAFE_AGENT_MODES, agent_mode, mcp_servers, prompt_blocks, tools_offered
from .process import AgentExited, AgentProcess, AgentStartError
from .sandbox import Sandbox

#: What a new conversation starts with, and what "Restore defaults" brings back.
DEFAULT_CONTEXT_REFS = (SELECTED_CELL,)
DEFAULT_MODE = INTERACTIVE
#: How long Stop waits for the agent to end its turn before the agent is stopped.
CANCEL_GRACE_SECONDS = 5.0
#: How long an agent offered our tools may take to connect before the panel says it did not.
CONNECT_GRACE_SECONDS = 10.0

_REF_TEXTS = {
    "selected_cell": ("Selected cell", "Read the one cell you have selected, with its hash."),
    "active_notebook": ("Active notebook", "Read every cell of the active notebook, in pages."),
    "cell_outputs": ("Cell outputs", "Read summaries of outputs of the cells it may read."),
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


@dataclass
class ConversationsHost:
    """What the conversations need from the server."""

    approvals: Approvals
    dispatcher: Dispatcher
    #: Read one cell of the active notebook live (an attachment).
    read_cell: Callable[[str, str], Awaitable[dict[str, Any]]]
    #: The MCP endpoint's URL as seen from an agent process.
    mcp_url: Callable[[], str]
    #: Whether tools are enabled now (the kill switch is released).
    tools_enabled: Callable[[], bool]
    #: Seconds an agent may sit idle before its process is stopped; 0 keeps it.
    idle_timeout: Callable[[], float]
    #: The directory agents start in: the server's root.
    cwd: str
    telemetry: Telemetry
    log: logging.Logger
    file_reviews: FileReviews
    #: ``CopilotApp.agent_shell`` now: ``ask`` or ``never``.
    shell_policy: Callable[[], str]
    #: Seconds an allowed shell command may run.
    shell_timeout: Callable[[], float]
    sandbox: Sandbox
    #: The names of our MCP tools.
    our_tools: frozenset[str] = frozenset()
    #: The caps on one turn, as configured now.
    limits: Callable[[], TurnLimits] = TurnLimits
    #: How many archived conversations each person keeps, as configured now.
    max_archived: Callable[[], int] = lambda: 50


class Conversations:
    """Every conversation of this server, by id, and their agents."""

    def __init__(self, host: ConversationsHost, catalog: list[AgentSpec]) -> None:
        self.host = host
        self.catalog = {spec.id: spec for spec in catalog}
        self._by_id: dict[str, Conversation] = {}
        self._by_token: dict[str, Conversation] = {}
        self._stopped = False
        #: Checks that run after an agent started; kept so that they are not collected.
        self._background: set[asyncio.Future[None]] = set()

    # -- what the panel asks -----------------------------------------------------------------

    def agents_json(self) -> dict[str, Any]:
        """The body of ``GET copilot/api/agents``."""
        agents = [spec.to_json() for spec in self.catalog.values()]
        return {
            "agents": agents,
            "defaultAgent": agents[0]["id"] if agents else None,
            "contextRefs": [
                {"id": ref, "label": _REF_TEXTS[ref][0], "allows": _REF_TEXTS[ref][1]}
                for ref in CONTEXT_REFS
            ],
            "modes": [
                {"id": mode, "label": label, "description": description}
                for mode, (label, description) in _MODE_TEXTS.items()
            ],
            "defaults": {"contextRefs": list(DEFAULT_CONTEXT_REFS), "mode": DEFAULT_MODE},
            "toolsEnabled": self.host.tools_enabled(),
            "sandbox": self.host.sandbox.to_json(),
        }

    def create(self, owner: str, user: Any, body: dict[str, Any]) -> Conversation:
        """A new conversation; its agent starts at the first message."""
        if not self.catalog:
            raise Refusal("invalid-input", "No agent is configured on this server.")
        settings = bodies.settings(body, self.catalog)
        conversation = Conversation(
            owner=owner,
            user=user,
            agent=self.catalog[settings.agent_id or next(iter(self.catalog))],
            chat_only=bool(settings.chat_only),
            context_refs=(
                settings.context_refs
                if settings.context_refs is not None
                else list(DEFAULT_CONTEXT_REFS)
            ),
            mode=settings.mode or DEFAULT_MODE,
        )
        self._by_id[conversation.id] = conversation
        self._by_token[_token_key(conversation.token)] = conversation
        return conversation

    def listed(self, owner: str) -> list[Conversation]:
        """The owner's conversations, newest first."""
        mine = [c for c in self._by_id.values() if c.owner == owner]
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
            conversation.agent = self.catalog[settings.agent_id]
        if settings.chat_only is not None:
            conversation.chat_only = settings.chat_only
        if settings.context_refs is not None:
            conversation.context_refs = settings.context_refs
        if settings.mode is not None:
            conversation.mode = settings.mode
        if settings.mode is not None or settings.chat_only is not None:
            self._hold_agent_mode(conversation)

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
    ) -> Turn:
        """Start a turn with the person's message; the agent's reply streams into it.

        The attached cell is read from the live notebook first, so that a cell that has
        gone refuses the message before anything reaches the agent. ``may_read_files`` and
        ``may_write_files`` are the server authorizer's answers for the person now: the
        agent's own file tools act as the person.
        """
        self._writable(conversation)
        if conversation.running is not None:
            raise Refusal(
                "conversation-busy", "The agent is still replying; stop it or wait for it."
            )
        cell = None
        label = None
        if message.attachment is not None:
            cell = await self.host.read_cell(
                message.attachment["artifactId"], message.attachment["cellId"]
            )
            label = f"{'Markdown' if cell['cellType'] == 'markdown' else 'Code'} cell"
            label = f"{label} {cell['index'] + 1}" if isinstance(cell.get("index"), int) else label
        if conversation.running is not None:
            raise Refusal(
                "conversation-busy", "The agent is still replying; stop it or wait for it."
            )
        attachment = None if cell is None else {"cellId": cell["cellId"], "label": label}
        turn = Turn(message.text, attachment, self.host.limits())
        conversation.turns.append(turn)
        conversation.running = turn
        conversation.page_id = message.page_id
        conversation.may_read_files = may_read_files
        conversation.may_write_files = may_write_files
        if conversation.title is None:
            conversation.title = message.text.strip().splitlines()[0][:TITLE_CHARS]
        if conversation.tools_offered is None:
            conversation.tools_offered = tools_offered(
                conversation.chat_only, conversation.context_refs
            )
        process = conversation.process
        # A crashed or stopped agent starts again without the conversation's history.
        turn.restarted = process is not None and process.exited
        turn.emit(
            {
                "type": "turn",
                "turnId": turn.turn_id,
                "toolsAttached": conversation.tools_attached,
                "restarted": turn.restarted,
            }
        )
        if conversation.next_notice is not None:
            turn.notice(conversation.next_notice)
            conversation.next_notice = None
        language = self.host.dispatcher.active_language(conversation.page_id)
        blocks = prompt_blocks(message.text, cell, language)
        if conversation.idle is not None:
            conversation.idle.cancel()
        conversation.task = asyncio.ensure_future(self._run(conversation, turn, blocks))
        return turn

    async def cancel(self, conversation: Conversation) -> bool:
        """Stop: ask the agent to cancel; stop the agent if it does not within a grace."""
        turn = conversation.running
        if turn is None:
            return False
        turn.cancel_requested = True
        self.host.approvals.end_group(conversation.id)
        process = conversation.process
        if process is not None and process.conn is not None and conversation.session_id:
            with contextlib.suppress(Exception):
                await process.call(process.conn.cancel(session_id=conversation.session_id), 2.0)
        asyncio.ensure_future(self._stop_if_still_running(conversation, turn))
        return True

    async def archive(self, conversation: Conversation) -> None:
        """Archive: cancel the turn, revoke the token and stop the agent."""
        if conversation.archived:
            return
        conversation.archived = True
        conversation.archived_at = time.monotonic()
        self._by_token.pop(_token_key(conversation.token), None)
        await self._end(conversation)
        for turn in conversation.turns:
            turn.release()
        self._forget_oldest_archived(conversation.owner)

    def _forget_oldest_archived(self, owner: str) -> None:
        """Keep at most ``max_archived`` archived conversations of a person."""
        archived = sorted(
            (c for c in self._by_id.values() if c.owner == owner and c.archived),
            key=lambda c: c.archived_at,
        )
        for old in archived[: max(0, len(archived) - self.host.max_archived())]:
            del self._by_id[old.id]

    async def stop(self) -> None:
        """The server is stopping: end every turn and stop every agent, and wait."""
        self._stopped = True
        self._by_token.clear()
        await asyncio.gather(*(self._end(c) for c in self._by_id.values()))

    # -- the agent's own mode -----------------------------------------------------------------

    def agent_mode_changed(self, conversation: Conversation, mode_id: str) -> None:
        """The agent changed its own session mode: put it back if it left ours."""
        if conversation.agent_mode is None or mode_id == conversation.agent_mode:
            return
        if conversation.running is not None:
            conversation.running.notice(
                f"{conversation.agent.label} switched itself to its '{mode_id}' mode; it was "
                f"put back into '{conversation.agent_mode}'."
            )
        self._hold_agent_mode(conversation, force=True)

    # -- internals ---------------------------------------------------------------------------

    def _writable(self, conversation: Conversation) -> None:
        if conversation.archived:
            raise Refusal("invalid-input", "This conversation is archived; start a new one.")
        if self._stopped:
            raise Refusal("feature-disabled", "The server is stopping.")

    async def _run(self, conversation: Conversation, turn: Turn, blocks: list[Any]) -> None:
        started = time.monotonic()
        try:
            if conversation.process is None or conversation.process.exited:
                await self._start_agent(conversation)
            process = conversation.process
            assert process is not None and process.conn is not None
            await self._set_agent_mode(conversation)
            if not self._agent_mode_held(conversation):
                # Fail closed: an agent left in a mode that acts without asking gets no prompt.
                turn.end(
                    ERROR,
                    f"{conversation.agent.label} could not be put into the mode in which it "
                    "asks before acting; nothing was sent to it.",
                )
                return
            if len(blocks) > 1 and not process.accepts_embedded_context:
                turn.end(
                    ERROR,
                    f"{conversation.agent.label} does not accept attached cells. Detach the "
                    "cell, or choose another agent in a new conversation.",
                )
                return
            prompt = asyncio.ensure_future(
                process.call(
                    process.conn.prompt(session_id=conversation.session_id or "", prompt=blocks),
                    self.host.limits().turn_seconds,
                )
            )
            limit = asyncio.ensure_future(turn.limit_hit.wait())
            try:
                await asyncio.wait({prompt, limit}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                limit.cancel()
            if not prompt.done():
                # A cap was hit: the agent's turn is cancelled, and stopped if it goes on.
                await self._cut_short(conversation, prompt)
                turn.end(ERROR, turn.limit_message)
                return
            try:
                response = prompt.result()
            except asyncio.TimeoutError:
                await self._cut_short(conversation, prompt)
                turn.end(
                    ERROR,
                    f"{conversation.agent.label} took longer than "
                    f"{self.host.limits().turn_seconds:g} seconds for this message; it was "
                    "stopped.",
                )
                return
            turn.end(CANCELLED if turn.cancel_requested else str(response.stop_reason))
        except AgentStartError as e:
            turn.end(ERROR, str(e))
        except AgentExited as e:
            if turn.cancel_requested:
                turn.end(CANCELLED)
            elif conversation.process is not None and conversation.process.line_overrun:
                turn.end(
                    ERROR,
                    f"{conversation.agent.label} sent a message longer than "
                    f"{conversation.process.line_max_bytes} bytes; it was stopped. Send a "
                    "message to start it again; it will not remember this conversation.",
                )
            else:
                turn.end(
                    ERROR,
                    f"{conversation.agent.label} stopped unexpectedly ({e}). Send a message to "
                    "start it again; it will not remember this conversation.",
                )
        except acp.RequestError as e:
            self.host.log.debug("Copilot agent '%s' answered: %s", conversation.agent.id, e)
            turn.end(
                CANCELLED if turn.cancel_requested else ERROR,
                None if turn.cancel_requested else f"{conversation.agent.label} reported an error.",
            )
        except asyncio.CancelledError:
            turn.end(CANCELLED)
            raise
        except Exception:
            self.host.log.warning(
                "Copilot agent '%s': the turn failed", conversation.agent.id, exc_info=True
            )
            turn.end(ERROR, "The turn failed on the server; see the server log.")
        finally:
            if not turn.ended:
                turn.end(END_TURN)
            # Cards of a turn that ended can no longer be allowed.
            self.host.approvals.end_group(conversation.id)
            if conversation.running is turn:
                conversation.running = None
                if self.host.idle_timeout() > 0 and not conversation.archived:
                    conversation.idle = asyncio.ensure_future(self._stop_when_idle(conversation))
            self.host.telemetry.conversation_turn(
                conversation_ref=conversation.ref,
                agent_kind=conversation.agent.kind,
                tools_attached=conversation.tools_attached,
                attachment=turn.attachment is not None,
                restarted=turn.restarted,
                stop_reason=turn.stop_reason or ERROR,
                tool_calls=len(turn.tool_calls),
                latency_ms=(time.monotonic() - started) * 1000,
            )

    async def _cut_short(self, conversation: Conversation, prompt: asyncio.Future[Any]) -> None:
        """Cancel the agent's turn; stop the agent if it does not end within the grace."""
        process = conversation.process
        if process is not None and process.conn is not None and conversation.session_id:
            with contextlib.suppress(Exception):
                await process.call(process.conn.cancel(session_id=conversation.session_id), 2.0)
        await asyncio.wait({prompt}, timeout=CANCEL_GRACE_SECONDS)
        if not prompt.done():
            prompt.cancel()
            if process is not None:
                await process.stop()
        with contextlib.suppress(BaseException):
            await prompt

    async def _start_agent(self, conversation: Conversation) -> None:
        if conversation.process is not None:
            await conversation.process.stop()
        tools = OwnTools(
            OwnToolsHost(
                approvals=self.host.approvals,
                dispatcher=self.host.dispatcher,
                file_reviews=self.host.file_reviews,
                root=self.host.cwd,
                tools_engaged=lambda: not self.host.tools_enabled(),
                shell_policy=self.host.shell_policy,
                shell_timeout=self.host.shell_timeout,
                our_tools=self.host.our_tools,
            ),
            conversation,
        )
        process = AgentProcess(
            conversation.agent,
            lambda _conn: AgentClient(self, conversation, tools),
            self.host.cwd,
            self.host.log,
            sandbox=self.host.sandbox,
            line_max_bytes=self.host.limits().line_bytes,
            # Agents that read files themselves find an empty folder without the grant.
            hide_root=conversation.chat_only or FILES not in conversation.context_refs,
        )
        conversation.process = process
        await process.start()
        assert process.conn is not None
        servers = mcp_servers(
            bool(conversation.tools_offered), self.host.mcp_url(), conversation.token
        )
        try:
            session = await process.call(
                process.conn.new_session(cwd=self.host.cwd, mcp_servers=servers), 60.0
            )
        except (asyncio.TimeoutError, acp.RequestError) as e:
            await process.stop()
            raise AgentStartError(f"{conversation.agent.label} could not open a session.") from e
        conversation.session_id = session.session_id
        if conversation.tools_offered and not conversation.tools_attached:
            self._background.add(asyncio.ensure_future(self._check_attached(conversation)))
        modes = session.modes
        conversation.agent_modes = (
            tuple(m.id for m in modes.available_modes) if modes is not None else ()
        )
        conversation.agent_mode = modes.current_mode_id if modes is not None else None
        if (
            not self._agent_mode_held(conversation)
            and self._wanted_agent_mode(conversation) is None
        ):
            await process.stop()
            raise AgentStartError(
                f"{conversation.agent.label} offers no mode in which it asks before acting; "
                "it cannot be used here."
            )

    async def _stop_when_idle(self, conversation: Conversation) -> None:
        # A message cancels this task; without one the agent's resources go back.
        await asyncio.sleep(self.host.idle_timeout())
        if conversation.running is None and conversation.process is not None:
            self.host.log.debug("Copilot agent '%s' idle: stopping it", conversation.agent.id)
            await conversation.process.stop()

    async def _stop_if_still_running(self, conversation: Conversation, turn: Turn) -> None:
        await asyncio.sleep(CANCEL_GRACE_SECONDS)
        if conversation.running is turn and conversation.process is not None:
            await conversation.process.stop()

    async def _check_attached(self, conversation: Conversation) -> None:
        """Tell the person once when an agent offered our tools has not connected to them."""
        try:
            await asyncio.sleep(CONNECT_GRACE_SECONDS)
            if conversation.tools_attached or conversation.told_not_attached:
                return
            conversation.told_not_attached = True
            text = (
                f"{conversation.agent.label} was offered the notebook tools but has not "
                "connected to them: it cannot read or propose edits through jupyter-copilot."
            )
            if conversation.running is not None:
                conversation.running.notice(text)
            else:
                conversation.next_notice = text
        finally:
            self._background = {t for t in self._background if not t.done()}

    def _wanted_agent_mode(self, conversation: Conversation) -> str | None:
        spec = conversation.agent
        read_only = conversation.chat_only or conversation.mode == PLAN
        return agent_mode(conversation.agent_modes, spec.ask_mode, spec.plan_mode, read_only)

    def _agent_mode_held(self, conversation: Conversation) -> bool:
        """Whether the agent is in the mode we want, or (with none we know) a safe one.

        Modes are the agent's own names: one we do not recognise is left as it is, unless
        it is one that acts without asking.
        """
        if not conversation.agent_modes:
            return True
        wanted = self._wanted_agent_mode(conversation)
        if wanted is not None:
            return conversation.agent_mode == wanted
        return (conversation.agent_mode or "").lower() not in UNSAFE_AGENT_MODES

    def _hold_agent_mode(self, conversation: Conversation, force: bool = False) -> None:
        """Set the agent's own mode for ours, in the background (the agent may be busy)."""
        if force:
            conversation.agent_mode = None
        process = conversation.process
        if process is not None and not process.exited and conversation.agent_modes:
            asyncio.ensure_future(self._set_agent_mode(conversation))

    async def _set_agent_mode(self, conversation: Conversation) -> None:
        wanted = self._wanted_agent_mode(conversation)
        process = conversation.process
        if (
            wanted is None
            or wanted == conversation.agent_mode
            or process is None
            or process.conn is None
            or conversation.session_id is None
        ):
            return
        try:
            await process.call(
                process.conn.set_session_mode(session_id=conversation.session_id, mode_id=wanted),
                10.0,
            )
        except (asyncio.TimeoutError, acp.RequestError, AgentExited):
            self.host.log.warning(
                "Copilot agent '%s' did not accept its mode", conversation.agent.id
            )
            return
        conversation.agent_mode = wanted

    async def _end(self, conversation: Conversation) -> None:
        self.host.approvals.end_group(conversation.id)
        self.host.file_reviews.end_group(conversation.id)
        if conversation.terminals is not None:
            conversation.terminals.close()
        if conversation.idle is not None:
            conversation.idle.cancel()
        task = conversation.task
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        if conversation.process is not None:
            await conversation.process.stop()
