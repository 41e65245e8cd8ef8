"""Holding an agent's own session mode where it asks before acting (docs/security.md).

An ACP agent has session modes of its own (``default``, ``plan``, ``bypassPermissions``,
...). A conversation wants the agent in the mode that matches its own: a read-only one in
Plan and Chat-only, otherwise one in which the agent asks before acting. A change the agent
makes itself is put back, and an agent that cannot be held in such a mode gets no prompt.
"""

from __future__ import annotations

import asyncio
import logging

import acp

from ..protocol.callers import PLAN
from .conversation import Conversation
from .policy import UNSAFE_AGENT_MODES, agent_mode
from .process import AgentExited


class AgentModes:
    """Sets and holds the agents' own session modes."""

    def __init__(self, log: logging.Logger) -> None:
        self.log = log

    def wanted(self, conversation: Conversation) -> str | None:
        """The agent's mode for the conversation's, or None when it offers no such mode."""
        spec = conversation.agent
        read_only = conversation.chat_only or conversation.mode == PLAN
        return agent_mode(conversation.agent_modes, spec.ask_mode, spec.plan_mode, read_only)

    def held(self, conversation: Conversation) -> bool:
        """Whether the agent is in the mode we want, or (with none we know) a safe one.

        Modes are the agent's own names: one we do not recognise is left as it is, unless
        it is one that acts without asking.
        """
        if not conversation.agent_modes:
            return True
        wanted = self.wanted(conversation)
        if wanted is not None:
            return conversation.agent_mode == wanted
        return (conversation.agent_mode or "").lower() not in UNSAFE_AGENT_MODES

    def changed(self, conversation: Conversation, mode_id: str) -> None:
        """The agent changed its own session mode: put it back if it left ours."""
        if conversation.agent_mode is None or mode_id == conversation.agent_mode:
            return
        if conversation.running is not None:
            conversation.running.notice(
                f"{conversation.agent.label} switched itself to its '{mode_id}' mode; it was "
                f"put back into '{conversation.agent_mode}'."
            )
        self.hold(conversation, force=True)

    def hold(self, conversation: Conversation, force: bool = False) -> None:
        """Set the agent's own mode for ours, in the background (the agent may be busy)."""
        if force:
            conversation.agent_mode = None
        process = conversation.process
        if process is not None and not process.exited and conversation.agent_modes:
            asyncio.ensure_future(self.set(conversation))

    async def set(self, conversation: Conversation) -> None:
        """Ask the agent to switch to the mode we want, when it is not in it."""
        wanted = self.wanted(conversation)
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
            self.log.warning("Copilot agent '%s' did not accept its mode", conversation.agent.id)
            return
        conversation.agent_mode = wanted
