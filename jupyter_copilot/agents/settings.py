"""The agent settings of ``CopilotApp`` and how it builds its conversations.

A mixin, so that the app module stays about settings shared by every subsystem; the traits
are still ``c.CopilotApp.agents`` and ``c.CopilotApp.discover_agents``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Awaitable, Callable
from typing import Any

from traitlets import Bool, Dict, Enum, Float, HasTraits, Int

from ..callers import Caller
from .catalog import build_catalog
from .conversation import Conversation, TurnLimits
from .filereviews import FileReviews
from .files import SHELL_ASK, SHELL_POLICIES
from .host import Conversations, ConversationsHost
from .policy import mcp_url
from .sandbox import AUTO, SANDBOX_MODES, Sandbox


class AgentSettings(HasTraits):
    """Which ACP agents the side panel offers."""

    agents = Dict(
        config=True,
        help="""Agent Client Protocol agents offered in the Copilot side panel, by id.

        Each value is a dict with `command` (a list of strings, or one string split like a
        shell would), `label`, `description` (one line is shown), `env` (extra environment
        variables: a string, or `{"fromEnv": "NAME"}` to pass the server's own variable NAME
        through, which keeps keys out of config files) and `guarded` (default true; false
        marks an agent that acts without asking the client, with a warning in the panel).
        Example: `{"claude": {"label": "Claude Code", "command": ["claude-agent-acp"],
        "env": {"ANTHROPIC_API_KEY": {"fromEnv": "ANTHROPIC_API_KEY"}}}}`.
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

        Known commands: `claude-agent-acp` (or the older `claude-code-acp`), `gemini` (with
        `--acp`), and, only with `allow_unguarded_agents`, `codex-acp` and `goose` (with
        `acp`). A configured agent with the same id replaces the known one. Set to False to
        offer only the configured agents.
        """,
    )

    allow_unguarded_agents = Bool(
        False,
        config=True,
        help="""Also offer known agents that jupyter-copilot cannot hold to its rules.

        Such an agent acts on files or runs commands with its own tools without asking
        jupyter-copilot first, so its changes are not reviewed. When True they are offered
        with a plain warning in the Agent menu. The sandbox (`agent_sandbox`) still keeps
        the server's folder read-only for them where it works.
        """,
    )

    agent_shell = Enum(
        SHELL_POLICIES,
        default_value=SHELL_ASK,
        config=True,
        help="""Whether agents may ask to run shell commands.

        `ask`: a command an agent sends through ACP shows a card with the exact command and
        folder, and runs only after the person allows it (never automatically, not even in
        Autopilot; never in Plan or Chat-only). `never`: every command ends with
        `not-permitted`.
        """,
    )

    agent_shell_timeout_seconds = Float(
        120.0,
        min=1.0,
        config=True,
        help="""Seconds an allowed shell command may run before its process group is killed.""",
    )

    agent_turn_timeout_seconds = Float(
        1800.0,
        min=1.0,
        config=True,
        help="""Seconds an agent may take to answer one message.

        Past it the agent's turn is cancelled (and the agent stopped if it goes on), and the
        turn ends with an error that says so.
        """,
    )

    agent_reply_max_bytes = Int(
        1024 * 1024,
        min=1024,
        config=True,
        help="""Largest reply one turn may stream, in UTF-8 bytes; past it the turn is stopped.""",
    )

    agent_turn_max_events = Int(
        10_000,
        min=100,
        config=True,
        help="""Most updates (reply chunks, tool call updates) one turn may send; past it the
        turn is stopped.""",
    )

    agent_max_archived_conversations = Int(
        50,
        min=1,
        config=True,
        help="""Archived conversations kept per person (read only, in the panel's list);
        archiving one more forgets the oldest. Kept in memory only, until the server stops.""",
    )

    agent_line_max_bytes = Int(
        TurnLimits.line_bytes,
        min=64 * 1024,
        config=True,
        help="""Longest line (one Agent Client Protocol message) an agent may write on its
        output, in bytes; past it the agent is stopped and its turn ends with an error.""",
    )

    agent_max_pending_cards = Int(
        20,
        min=1,
        config=True,
        help="""Most approval cards one conversation may have waiting at once; a further
        request is refused without a card. A turn's cards end with the turn.""",
    )

    agent_sandbox = Enum(
        SANDBOX_MODES,
        default_value=AUTO,
        config=True,
        help="""Run agent processes with the server's folder read-only (bubblewrap).

        `auto`: when `bwrap` works on this machine (tried once at start). `required`: no
        agent starts without it. `off`: never. Under the sandbox even an agent tool that is
        not routed through jupyter-copilot cannot change the person's files; the agent's
        own state folders (for example `~/.claude`) stay writable. `copilot/api/status` and
        the Agent menu say whether it is in force.
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
        catalog = build_catalog(
            self.agents,
            self.discover_agents,
            shutil.which,
            app.log.warning,
            self.allow_unguarded_agents,
        )
        root = os.path.abspath(os.path.expanduser(server.root_dir))
        self.sandbox = Sandbox.detect(self.agent_sandbox, root)
        app.log.info("jupyter-copilot agent sandbox: %s", self.sandbox.text)
        host = ConversationsHost(
            approvals=app.approvals,
            dispatcher=app.dispatcher,
            read_cell=app.notebook.read_cell,
            mcp_url=lambda: mcp_url(
                secure=bool(server.certfile),
                ip=server.ip,
                port=server.port,
                base_url=server.base_url,
            ),
            tools_enabled=lambda: not app.kill_switch_state().engaged,
            idle_timeout=lambda: self.agent_idle_timeout_seconds,
            cwd=root,
            telemetry=app.telemetry,
            log=app.log,
            file_reviews=FileReviews(
                lambda: server.contents_manager,
                lambda: app.kill_switch_state().engaged,
            ),
            shell_policy=lambda: self.agent_shell,
            shell_timeout=lambda: self.agent_shell_timeout_seconds,
            sandbox=self.sandbox,
            our_tools=frozenset(d["name"] for d in app.mcp_tools.definitions),
            max_archived=lambda: self.agent_max_archived_conversations,
            limits=lambda: TurnLimits(
                reply_bytes=self.agent_reply_max_bytes,
                events=self.agent_turn_max_events,
                turn_seconds=self.agent_turn_timeout_seconds,
                line_bytes=self.agent_line_max_bytes,
            ),
        )
        return Conversations(host, catalog)

    def conversation_caller(
        self, conversation: Conversation, may_write: Callable[[], Awaitable[bool]]
    ) -> Caller:
        """A side-panel agent's caller, with its conversation's grants and mode now."""
        return Caller(
            kind="conversation",
            principal=conversation.owner,
            agent=conversation.agent.id,
            context_refs=frozenset(conversation.context_refs),
            approval_mode=conversation.mode,
            may_write=may_write,
            scope=conversation.id,
        )
