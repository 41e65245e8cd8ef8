"""The agent processes of a server's conversations: start, idle out, end.

Each conversation gets its own agent process (``process.py``), started at its first message
(and again at the next message after a crash), under the sandbox where it works, with the
agent's own tools (``own_tools.py``) held to the conversation's mode. The agent's own
session mode must be one in which it asks before acting (``permissions.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

import acp

from ..protocol.callers import FILES
from .client import AgentClient
from .conversation import Conversation
from .host import ConversationsHost
from .own_tools import OwnTools, OwnToolsHost
from .permissions import AgentModes
from .policy import mcp_servers
from .process import AgentProcess, AgentStartError

#: What the person is told when the agent cannot bring its earlier session back.
FRESH_SESSION = (
    "{agent} could not bring back its earlier session: it starts fresh and no longer "
    "remembers the earlier messages."
)

#: How long an agent offered our tools may take to connect before the panel says it did not.
CONNECT_GRACE_SECONDS = 10.0


class AgentProcesses:
    """Starts and stops the agents of a server's conversations."""

    def __init__(
        self,
        host: ConversationsHost,
        modes: AgentModes,
        secret_env: Callable[[Conversation], dict[str, str]] = lambda _c: {},
    ) -> None:
        self.host = host
        self.modes = modes
        #: Environment only this conversation's agent gets: its owner's own key.
        self.secret_env = secret_env

    async def start(self, conversation: Conversation) -> None:
        """Start the conversation's agent (stopping an old one) and open its session."""
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
                allowed_refs=lambda: self.host.policy().context_refs,
                allowed_mode=lambda mode: self.host.policy().caller_mode(mode),
            ),
            conversation,
        )
        process = AgentProcess(
            conversation.agent,
            lambda _conn: AgentClient(self.modes, conversation, tools),
            self.host.cwd,
            self.host.log,
            sandbox=self.host.sandbox,
            network=self.host.network,
            line_max_bytes=self.host.limits().line_bytes,
            # Agents that read files themselves find an empty folder without the grant.
            hide_root=conversation.chat_only or FILES not in conversation.context_refs,
            secret_env=self.secret_env(conversation),
        )
        conversation.process = process
        await process.start()
        assert process.conn is not None
        servers = mcp_servers(
            bool(conversation.tools_offered),
            process.mcp_url(self.host.mcp_url()),
            conversation.token,
        )
        caps = process.init.agent_capabilities if process.init is not None else None
        # The turn said the agent would come back with its session (``Turns.send``).
        expected = conversation.loads_sessions and conversation.session_id is not None
        conversation.loads_sessions = bool(caps is not None and caps.load_session)
        session: Any = None
        if conversation.loads_sessions and conversation.session_id is not None:
            session = await self._load(conversation, process, servers)
        elif expected and conversation.running is not None:
            # The agent no longer offers session/load (another version, say).
            conversation.running.notice(FRESH_SESSION.format(agent=conversation.agent.label))
        if session is None:
            try:
                session = await process.call(
                    process.conn.new_session(
                        cwd=self.host.cwd,
                        mcp_servers=servers,
                        **dict(conversation.agent.session_meta),
                    ),
                    60.0,
                )
            except (asyncio.TimeoutError, acp.RequestError) as e:
                await process.stop()
                raise AgentStartError(
                    f"{conversation.agent.label} could not open a session."
                ) from e
            conversation.session_id = session.session_id
        if conversation.tools_offered and not conversation.tools_attached:
            if conversation.attach_check is not None:
                conversation.attach_check.cancel()
            conversation.attach_check = asyncio.ensure_future(self._check_attached(conversation))
        modes = session.modes
        conversation.agent_modes = (
            tuple(m.id for m in modes.available_modes) if modes is not None else ()
        )
        conversation.agent_mode = modes.current_mode_id if modes is not None else None
        if not self.modes.held(conversation) and self.modes.wanted(conversation) is None:
            await process.stop()
            raise AgentStartError(
                f"{conversation.agent.label} offers no mode in which it asks before acting; "
                "it cannot be used here."
            )

    async def _load(
        self, conversation: Conversation, process: AgentProcess, servers: list[Any]
    ) -> Any:
        """Bring the agent's earlier session back (ACP ``session/load``); None if it cannot,
        and then the person is told that the agent starts fresh."""
        assert process.conn is not None and conversation.session_id is not None
        conversation.loading_session = True
        try:
            return await process.call(
                process.conn.load_session(
                    cwd=self.host.cwd,
                    session_id=conversation.session_id,
                    mcp_servers=servers,
                    **dict(conversation.agent.session_meta),
                ),
                60.0,
            )
        except (asyncio.TimeoutError, acp.RequestError):
            self.host.log.info(
                "Copilot agent '%s' could not load its earlier session", conversation.agent.id
            )
            if conversation.running is not None:
                conversation.running.notice(FRESH_SESSION.format(agent=conversation.agent.label))
            return None
        finally:
            conversation.loading_session = False

    def stop_when_idle(self, conversation: Conversation) -> None:
        """Stop the agent once it has been idle for the configured time."""
        conversation.idle = asyncio.ensure_future(self._stop_when_idle(conversation))

    async def _stop_when_idle(self, conversation: Conversation) -> None:
        # A message cancels this task; without one the agent's resources go back.
        await asyncio.sleep(self.host.idle_timeout())
        if conversation.running is None and conversation.process is not None:
            self.host.log.debug("Copilot agent '%s' idle: stopping it", conversation.agent.id)
            await conversation.process.stop()

    async def _check_attached(self, conversation: Conversation) -> None:
        """Tell the person once when an agent offered our tools has not connected to them."""
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

    async def end(self, conversation: Conversation) -> None:
        """End the conversation's turn, cards, reviews, terminals and agent, and wait."""
        self.host.approvals.end_group(conversation.id)
        self.host.file_reviews.end_group(conversation.id)
        if conversation.terminals is not None:
            conversation.terminals.close()
        for waiting in (conversation.idle, conversation.attach_check):
            if waiting is not None:
                waiting.cancel()
        task = conversation.task
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        if conversation.process is not None:
            await conversation.process.stop()
