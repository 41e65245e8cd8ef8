"""The agent settings of ``CopilotApp`` and how it builds its conversations.

A mixin, so that the app module stays about settings shared by every subsystem; the traits
are still ``c.CopilotApp.agents`` and ``c.CopilotApp.discover_agents``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Awaitable, Callable
from typing import Any

from traitlets import Bool, Dict, Float, HasTraits

from ..mcp.grants import McpCaller
from .catalog import build_catalog
from .conversation import Conversation
from .host import Conversations, ConversationsHost
from .policy import mcp_url


class AgentSettings(HasTraits):
    """Which ACP agents the side panel offers."""

    agents = Dict(
        config=True,
        help="""Agent Client Protocol agents offered in the Copilot side panel, by id.

        Each value is a dict with `command` (a list of strings, or one string split like a
        shell would), `label`, `description` (one line is shown) and `env` (extra
        environment variables, strings only). Example:
        `{"claude": {"label": "Claude Code", "command": ["claude-code-acp"],
        "env": {"ANTHROPIC_API_KEY": "..."}}}`.
        An agent starts when a conversation sends its first message, one process per
        conversation, in the server's root directory, with a trimmed environment (HOME,
        PATH, USER, SHELL, TERM, LOGNAME) plus `env`. The first agent is the default.
        When this is empty, the shipped rule-based demo agent is offered. A malformed entry
        is skipped with a warning.
        """,
    )

    discover_agents = Bool(
        True,
        config=True,
        help="""Offer known ACP agents found on PATH without configuration.

        Known commands: `claude-code-acp`, `codex-acp`, `gemini` (with
        `--experimental-acp`) and `goose` (with `acp`). A configured agent with the same id
        replaces the known one. Set to False to offer only the configured agents.
        """,
    )

    agent_idle_timeout_seconds = Float(
        1800.0,
        min=0.0,
        config=True,
        help="""Seconds a conversation's agent process may sit idle before it is stopped.

        Each conversation has its own agent process; one that has not had a message for
        this long is stopped to give its memory back, and the next message starts it again
        (it then no longer remembers the earlier messages, and the panel says so).
        0 keeps agents running until their conversation is archived or the server stops.
        """,
    )

    def build_conversations(self, app: Any) -> Conversations:
        """The conversations of this server, with the agents on offer now."""
        server = app.serverapp
        catalog = build_catalog(self.agents, self.discover_agents, shutil.which, app.log.warning)
        host = ConversationsHost(
            approvals=app.approvals,
            dispatcher=app.dispatcher,
            read_cell=app.mcp_tools.read_cell,
            mcp_url=lambda: mcp_url(
                secure=bool(server.certfile),
                ip=server.ip,
                port=server.port,
                base_url=server.base_url,
            ),
            tools_enabled=lambda: not app.kill_switch_state().engaged,
            idle_timeout=lambda: self.agent_idle_timeout_seconds,
            cwd=os.path.abspath(os.path.expanduser(server.root_dir)),
            telemetry=app.telemetry,
            log=app.log,
        )
        return Conversations(host, catalog)

    def conversation_caller(
        self, conversation: Conversation, may_write: Callable[[], Awaitable[bool]]
    ) -> McpCaller:
        """A side-panel agent's caller, with its conversation's grants and mode now."""
        return McpCaller(
            kind="conversation",
            principal=conversation.owner,
            agent=conversation.agent.id,
            context_refs=frozenset(conversation.context_refs),
            approval_mode=conversation.mode,
            may_write=may_write,
            scope=conversation.id,
        )
