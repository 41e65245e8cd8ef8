"""The Jupyter server extension: settings, collaborators and routes."""

from __future__ import annotations

import os
import shutil
from typing import Any

from jupyter_core.paths import jupyter_data_dir, jupyter_path
from jupyter_server.extension.application import ExtensionApp
from jupyter_server.utils import url_path_join
from traitlets import Bool, Dict, Enum, Float, Int, List, TraitError, Unicode, default
from traitlets.config import Config

from .._version import __version__
from ..admin.configcheck import screen, unique, without_own_settings
from ..admin.killswitch import KillSwitch, KillSwitchState, config_directories, config_engaged
from ..admin.switches import Switches
from ..admin.telemetry import Telemetry
from ..agents.adminpolicy import AdminPolicy, Policy
from ..agents.catalog import AgentConfigError, AgentSpec, available, build_catalog
from ..agents.conversations import DEFAULT_CONTEXT_REFS, DEFAULT_MODE, Conversations
from ..agents.egress import Network
from ..agents.filereviews import FileReviews
from ..agents.files import SHELL_ASK, SHELL_POLICIES
from ..agents.host import ConversationsHost
from ..agents.limits import TurnLimits
from ..agents.models import (
    OLLAMA_URL,
    ModelEntries,
    ollama_models,
    parse_model,
    unavailable_reason,
)
from ..agents.personalkeys import PersonalKeys
from ..agents.policy import mcp_url
from ..agents.sandbox import AUTO, SANDBOX_MODES, Sandbox
from ..agents.store import ConversationStore
from ..mcp.endpoint import McpEndpoint
from ..mcp.skills import SkillLibrary, skill_roots
from ..mcp.tools import CopilotTools, ToolsHost
from ..page.context import ServedCells
from ..page.dispatcher import Dispatcher
from ..page.kernelvars import KernelVariables
from ..page.notebook import NotebookReader
from ..page.sessions import Registrations
from ..protocol.callers import APPROVAL_MODES, CONTEXT_REFS, NOTEBOOK_REFS, ExternalGrants
from ..protocol.registry import CopilotRegistry, load_registry
from ..tools.approvals import Approvals
from ..tools.proposals import ProposalDesk
from ..tools.run_tool import RUN_POLICIES
from ..tools.service import ProposalHost
from ..tools.toolspecs import build_proposal_tools, mcp_definitions
from .actions import ActionRunner
from .adapters import JupyterServer
from .overview import Overview
from .pages import Pages
from .routes import handler_routes


class CopilotApp(ExtensionApp):
    """jupyter-copilot: serves the active notebook's context and the reviewable edit tool."""

    name = "jupyter_copilot"
    description = "Safe, reviewable AI agent tools for live JupyterLab notebooks."
    load_other_extensions = True

    enabled = Bool(
        True,
        config=True,
        help="""Feature switch for rollout.

        When False, the manifest and the tool list are empty, the JupyterLab side panel is
        not shown, pages cannot connect, and every action ends with `feature-disabled`.
        `copilot/api/status` still answers so that you can see the switch is off.
        """,
    )

    tools_enabled = Bool(
        True,
        config=True,
        help="""Invocation kill switch.

        When False, every tool invocation ends with `kill-switch` and open reviews can no
        longer be kept. Reading context is not affected. Any configuration source that says
        False engages it, so a user's own config cannot lift an administrator's.
        """,
    )

    context_budget_bytes = Int(
        8192,
        min=256,
        config=True,
        help="""Largest context entry served, in UTF-8 bytes of its JSON.

        A selected cell whose entry would exceed this is served without its source and says
        so (`omitted.reason = "over-budget"`); source is never truncated.
        """,
    )

    tool_input_budget_bytes = Int(
        65536,
        min=1,
        config=True,
        help="""Largest `newSource` a tool call may propose, in UTF-8 bytes.

        Larger proposals end with `over-budget` before anything reaches the page.
        """,
    )

    page_timeout_seconds = Float(
        10.0,
        min=0.1,
        config=True,
        help="""Seconds to wait for a JupyterLab page to answer a request.

        A page that does not answer in time ends the call with `timeout`; a page that
        disconnects ends its pending calls with `timeout` at once.
        """,
    )

    kernel_inspect_timeout_seconds = Float(
        2.0,
        min=0.1,
        config=True,
        help="""Seconds the kernel may spend listing or describing a variable.

        Reading the active notebook's kernel variables (the `kernel_variables` context
        reference) runs the product's own inspection code in the kernel while it is idle;
        an object whose `repr` takes longer is stopped there, and a kernel that does not
        answer within this time (plus one second) ends the call with `timeout`.
        """,
    )

    external_context_refs = List(
        Enum(NOTEBOOK_REFS),
        default_value=["selected_cell"],
        config=True,
        help="""What outside MCP clients may read, as context references.

        Outside clients are MCP clients that authenticate with the person's Jupyter token
        (Claude Code, Codex, Cursor, VS Code, ...). `selected_cell`: the one cell the person
        has selected; `active_notebook`: every cell of the active notebook, in pages;
        `cell_outputs`: cell outputs (rich outputs summarised as type and size; the PNG and
        JPEG outputs of a cell a person attaches go with the message as images, to agents
        that take images);
        `kernel_variables`: the names, types and sizes of the active notebook's kernel
        variables, and descriptions of single ones. A read without its reference ends with
        `blocked`. Checked on every call.
        """,
    )

    external_approval_mode = Enum(
        APPROVAL_MODES,
        default_value="interactive",
        config=True,
        help="""How edits proposed by outside MCP clients are approved.

        `plan`: read-only, every edit ends with `plan-mode`. `interactive`: every edit first
        shows an approval card (Allow once / Deny) in the Copilot side panel of the page that
        holds the notebook. `autopilot`: no card. In every mode the change itself still
        opens a diff review in the cell that the person keeps or undoes.
        """,
    )

    approval_timeout_seconds = Float(
        300.0,
        min=1.0,
        config=True,
        help="""Seconds an approval card waits for the person before the call is denied.""",
    )

    skills_paths = List(
        Unicode(),
        config=True,
        help="""Extra skill directories, each holding `<skill-id>/SKILL.md` folders.

        Skills are read at start from, in this order: the skills shipped with
        jupyter-copilot; `copilot/skills` in each Jupyter data directory (`jupyter --paths`),
        system directories first and the user's own last; then these paths in the order
        given. A later directory replaces an earlier skill of the same id. A malformed
        SKILL.md is skipped with a warning.
        """,
    )

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

    models = ModelEntries(
        config=True,
        help="""Model endpoints offered as agents, by id, run by the built-in model agent.

        Each value is a dict with `provider` (`openai-compatible` for vLLM, LM Studio, a
        LiteLLM proxy or OpenAI; `ollama`; `anthropic`; `gemini`), `model` (the endpoint's
        model name), `base_url` (required for `openai-compatible` and `ollama`; otherwise
        the provider's own API), `api_key` (`{"fromEnv": "NAME"}`: the server's variable
        NAME, passed to that agent's process only), `label`, `description`, and optionally
        `context_window` (tokens; default 32768), `max_output_tokens` (default 4096) and
        `turn_seconds` (default 300). Example: `{"team-qwen": {"label": "Team Qwen",
        "provider": "openai-compatible", "base_url": "http://llm.internal:8000/v1",
        "model": "Qwen/Qwen3-Coder-30B", "api_key": {"fromEnv": "TEAM_LLM_KEY"}}}`.
        Each entry is an agent of the Agent menu with its id, after `agents` and under
        `allowed_agents`. An invalid entry makes the whole setting invalid: agents and tools
        are off (docs/admin.md, "Invalid settings"). Needs Python 3.11 and the `models`
        extra; without them the entries are listed as not available.
        """,
    )

    allow_personal_models = Bool(
        False,
        config=True,
        help="""Let each person add their own key for the endpoints of `models`.

        When True, the Agent menu lets a person set, replace or remove their own key for each
        allowed `models` entry whose provider takes one (not Ollama). Their conversations
        with that model then use their key instead of the entry's `api_key`; other people's
        do not. Keys are kept on the server, readable by their owner only (a file of mode
        0600 per person under the Jupyter data directory; in memory only when
        `conversations_db_path` is empty), and never sent back to the browser, logged, or
        written to events or the conversation store. Turning this off stops using stored
        keys at once, without deleting them. See docs/admin.md ("Personal keys").
        """,
    )

    discover_models = Bool(
        None,
        allow_none=True,
        config=True,
        help="""Offer the models of a local Ollama when `models` is empty.

        At start the server asks `ollama_url` for its models (half a second at most) and
        offers each as an agent (`ollama-<name>`). None (the default): on, except in a
        JupyterHub single-user server (where `JUPYTERHUB_API_TOKEN` is set), whose admin
        configures `models` instead.
        """,
    )

    ollama_url = Unicode(
        OLLAMA_URL,
        config=True,
        help="""Where `discover_models` looks for a local Ollama (its default port).""",
    )

    allowed_agents = List(
        Unicode(),
        config=True,
        help="""Agents that side-panel conversations may use, by id (policy).

        Empty (the default): every configured or discovered agent. Otherwise only these are
        offered in the Agent menu, and a conversation asking for another ends with
        `not-permitted`. Ids that are not on offer are ignored with a warning at start.
        See docs/admin.md ("Policy") for how a change in a JSON config file applies to
        running conversations.
        """,
    )

    allowed_modes = List(
        Enum(APPROVAL_MODES),
        default_value=list(APPROVAL_MODES),
        config=True,
        help="""Approval modes that side-panel conversations may use (policy).

        A subset of `plan`, `interactive` (Ask before edits) and `autopilot`; default all.
        Only these are offered in the mode menu; creating a conversation in another mode,
        switching to one, or sending a message in one ends with `not-permitted`. Empty
        allows no conversation at all.
        """,
    )

    allowed_context_refs = List(
        Enum(CONTEXT_REFS),
        default_value=list(CONTEXT_REFS),
        config=True,
        help="""Context references that side-panel conversations may grant (policy).

        A subset of `selected_cell`, `active_notebook`, `cell_outputs`, `kernel_variables`
        and `files`; default all. Only these are offered in the context menu; a
        conversation created with, changed to, or sending a message with another ends with
        `not-permitted`, and an agent's
        notebook read needing a reference no longer allowed ends with `blocked`.
        """,
    )

    default_agent = Unicode(
        None,
        allow_none=True,
        config=True,
        help="""The agent a new conversation starts with, by id.

        None (the default): the first allowed agent on offer. An id that is not allowed or
        not on offer falls back to the first allowed agent, with a warning at start.
        """,
    )

    default_mode = Enum(
        APPROVAL_MODES,
        default_value=DEFAULT_MODE,
        config=True,
        help="""The approval mode a new conversation starts in.

        Outside `allowed_modes`, new conversations start in the first allowed mode in the
        order `plan`, `interactive`, `autopilot` (the strictest), with a warning at start.
        """,
    )

    default_context_refs = List(
        Enum(CONTEXT_REFS),
        default_value=list(DEFAULT_CONTEXT_REFS),
        config=True,
        help="""The context references a new conversation starts with (and "Restore
        defaults" brings back). References outside `allowed_context_refs` are left out, with
        a warning at start.""",
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

    agent_run_cells = Enum(
        RUN_POLICIES,
        default_value="ask",
        config=True,
        help="""Whether agents may ask to run notebook cells (`notebook_run_cell`).

        `ask`: each request shows a run card with the cell and the short form of the hash of
        the source the agent read; the cell runs in the notebook's own kernel only after the
        person allows it, and only if it still holds exactly that source (never
        automatically, not even in Autopilot; never in Plan). `never`: every request ends
        with `not-permitted`. Checked on every call. A cell whose metadata holds
        `{"jupyter_copilot": {"agent_run": false}}` is never run by an agent.
        """,
    )

    agent_run_timeout_seconds = Float(
        600.0,
        min=1.0,
        config=True,
        help="""Seconds a run the person allowed may take before the agent's call ends with
        `timeout`. The cell itself keeps running; the person can interrupt the kernel.""",
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

    agent_image_max_pixels = Int(
        1024,
        min=16,
        max=8192,
        config=True,
        help="""Longest side, in pixels, of a plot or image sent to an agent that takes images:
        with the "Cell outputs" reference granted, the PNG and JPEG outputs of an attached
        cell go with the message, resized to fit (PNG stays PNG, JPEG stays JPEG). Agents
        that take no images get each image's type, size and alt text instead.""",
    )

    agent_max_archived_conversations = Int(
        50,
        min=1,
        config=True,
        help="""Archived conversations kept per person (read only, in the panel's list);
        archiving one more forgets the oldest, in the conversation store too.""",
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
        help="""Run agent processes in a sandbox that denies by default (bubblewrap).

        Under it an agent sees the machine read-only, an empty HOME of its own instead of
        the person's, no Jupyter runtime, data or config folder (no token, no kernel keys),
        the server's folder only with the `files` grant, and no network but our MCP
        endpoint and its model API (`agent_network_hosts`); it has no capabilities, even
        as root, and a system call filter. A probe proves each of these at start.
        `auto`: the sandbox is used when every property held; agents whose own tools read
        files without asking (Claude Code, Gemini CLI) are then offered, and without it
        only with `allow_unguarded_agents`. `required`: no agent starts unless every
        property held. `off`: never. `copilot/api/status` lists each property.
        """,
    )

    agent_network_hosts = List(
        Unicode(),
        default_value=[],
        config=True,
        help="""Hosts every sandboxed agent may reach over HTTPS, as `host` or `host:port`
        (443 by default), on top of its own model API's (for example `api.anthropic.com`
        for Claude Code) and the hosts of `https://` URLs in its configured `env`.

        Nothing else is reachable from the sandbox: not the Jupyter server, not the
        kernels, not the rest of the network.
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

    conversations_db_path = Unicode(
        None,
        allow_none=True,
        config=True,
        help="""The SQLite file where side-panel conversations are stored.

        None (the default): `copilot/conversations.db` in the user's Jupyter data directory
        (`jupyter --data-dir`). Transcripts (messages, replies, tool cards, notices) are
        written as turns start and end and read back when the server starts, keyed by the
        person, so they survive a restart; tokens are never written. An empty string keeps
        conversations in memory only. A file that cannot be opened or written leaves them
        in memory with a warning; a damaged file is moved aside (`.corrupt-<time>` suffix)
        and a new one started.
        """,
    )

    config_errors = List(
        Unicode(),
        help="""The names of the settings that did not validate, in the order found (not
        configurable). When any did, agents and tools are off: see `update_config`.""",
    )

    @default("config_file_name")
    def _config_file_name_default(self) -> str:
        # The default would be jupyter_jupyter_copilot_config.
        return "jupyter_copilot_config"

    def update_config(self, config: Config) -> None:
        """Apply ``config`` without the settings that would not apply, remembering their names.

        jupyter_server applies an extension's config files, the server's config and the
        command line through this method. traitlets would drop every setting of a config
        for one invalid value (configcheck.py); here only that value is held back, and
        `initialize_settings` then turns agents and tools off (docs/admin.md, "Invalid
        settings").
        """
        screened, invalid = screen(self, config)
        try:
            super().update_config(screened)
        except TraitError:
            # Never logged as it is: a TraitError's message holds the value.
            screened, everything = without_own_settings(self, screened)
            invalid = [*invalid, *everything]
            super().update_config(screened)
        if invalid:
            self.config_errors = unique([*self.config_errors, *invalid])

    def initialize_settings(self) -> None:
        """Load the registry (refusing to start on bad data) and build the collaborators."""
        assert self.serverapp is not None
        if self.config_errors:
            self._fail_closed()
        self.registry: CopilotRegistry = load_registry()
        self.switches = Switches(
            enabled=lambda: self.enabled,
            tools_engaged=lambda: self.kill_switch_state().engaged,
        )
        #: The running server, through the adapters (adapters.py).
        self.jupyter_server = JupyterServer(self.serverapp, self.log)
        self.dispatcher = Dispatcher()
        self.telemetry = Telemetry(getattr(self.serverapp, "event_logger", None))
        self.served_cells = ServedCells()
        self.notebook = NotebookReader(
            self.dispatcher,
            self.jupyter_server.artifact_id,
            self.action_settings,
            self.served_cells,
        )
        self.runner = ActionRunner(self.notebook, self.telemetry)
        self.registrations = Registrations(self.jupyter_server.artifact_id)
        self.jupyter_server.follow_sessions(self.registrations)
        proposal_host = ProposalHost(
            switches=self.switches,
            artifact_id=self.jupyter_server.artifact_id,
            file_writable=self.jupyter_server.file_writable,
            live_cell=self.jupyter_server.live_cell,
            served_type=self.served_cells.type_of,
            settings=self.action_settings,
            run_policy=lambda: self.agent_run_cells,
            run_timeout=lambda: self.agent_run_timeout_seconds,
        )
        self.approvals = Approvals(
            self.telemetry,
            lambda: self.approval_timeout_seconds,
            lambda: self.agent_max_pending_cards,
        )
        #: Every tool a page serves, by name, each built from its spec (toolspecs.py).
        self.proposal_tools = build_proposal_tools(
            self.registry,
            self.dispatcher,
            self.registrations,
            self.telemetry,
            proposal_host,
            self.approvals,
        )
        # Keep and review decisions reach the tools whose page opens a review.
        self.proposals = ProposalDesk(
            [t for t in self.proposal_tools.values() if t.page.opens_review]
        )
        self.skills = SkillLibrary.load(skill_roots(jupyter_path(), self.skills_paths), self.log)
        self.mcp_tools = CopilotTools(
            mcp_definitions(self.registry),
            self.notebook,
            self.proposal_tools,
            ToolsHost(
                switches=self.switches,
                skills=lambda: self.skills,
                variables=KernelVariables(
                    self.dispatcher,
                    self.registrations,
                    self.serverapp.kernel_manager,
                    self.serverapp.kernel_spec_manager,
                    self.jupyter_server.artifact_id,
                    self.action_settings,
                ),
            ),
        )
        self.mcp = McpEndpoint(
            self.mcp_tools, self.skills.summary, __version__, self.telemetry, self.log
        )
        self.kill_switch = KillSwitch(
            config_engaged=config_engaged(self) or bool(self.config_errors),
            directories=config_directories(self),
            log=self.log,
        )
        self.kill_switch.start(self._on_kill_switch_change)
        self.admin_policy = AdminPolicy(self._policy_traits, config_directories(self), self.log)
        self.conversations = self._build_conversations()
        catalog = self.conversations.catalog
        self.admin_policy.warn_about_defaults(list(catalog), available(catalog.values()))
        self.pages = Pages(
            self.dispatcher, self.proposals, self.approvals, self.telemetry, self._welcome
        )
        self.pages.on_close.append(self.file_reviews.page_closed)
        self.external = ExternalGrants(
            context_refs=lambda: self.external_context_refs,
            approval_mode=lambda: self.external_approval_mode,
        )
        self.overview = Overview(
            self.registry,
            self.registrations,
            self.dispatcher,
            enabled=lambda: self.enabled,
            kill_switch=self.kill_switch_state,
            rtc=self.jupyter_server.rtc_enabled,
            sandbox=lambda: self.sandbox.to_json(),
            config_errors=lambda: list(self.config_errors),
        )
        state = self.kill_switch.state()
        self.log.info(
            "jupyter-copilot %s: enabled=%s, kill switch %s (source: %s)",
            __version__,
            self.enabled,
            "engaged" if state.engaged else "released",
            state.source or "none",
        )

    def initialize_handlers(self) -> None:
        """Register the REST and WebSocket routes."""
        self.handlers.extend(handler_routes(self))

    # -- what the other collaborators ask of the app -------------------------------------------

    def kill_switch_state(self) -> KillSwitchState:
        """The kill switch now, with every JSON config file re-checked."""
        return self.kill_switch.state()

    def action_settings(self) -> dict[str, Any]:
        """The settings that reading actions and the tools' checks read at each call."""
        return {
            "page_timeout_seconds": self.page_timeout_seconds,
            "context_budget_bytes": self.context_budget_bytes,
            "tool_input_budget_bytes": self.tool_input_budget_bytes,
            "kernel_inspect_timeout_seconds": self.kernel_inspect_timeout_seconds,
        }

    async def stop_extension(self) -> None:
        """Deny waiting approvals, stop the agents, end MCP sessions, stop watching files."""
        self.approvals.stop()
        await self.conversations.stop()
        if self.conversations.host.store is not None:
            self.conversations.host.store.close()
        await self.mcp.stop()
        self.kill_switch.stop()

    # -- internals ---------------------------------------------------------------------------

    def _build_conversations(self) -> Conversations:
        """The conversations of this server, with the agents on offer now."""
        server = self.serverapp
        assert server is not None
        root = os.path.abspath(os.path.expanduser(server.root_dir))
        store_path = self._conversations_db()
        self.sandbox = Sandbox.detect(
            self.agent_sandbox, root, [store_path] if store_path is not None else []
        )
        self.log.info("jupyter-copilot agent sandbox: %s", self.sandbox.text)
        if self.sandbox.reason is not None:
            self.log.warning("jupyter-copilot agent sandbox: %s", self.sandbox.reason)
        catalog = build_catalog(
            self.agents,
            self.discover_agents,
            shutil.which,
            self.log.warning,
            self.allow_unguarded_agents,
            sandboxed=self.sandbox.active,
            models=self._model_agents(),
        )
        self.file_reviews = FileReviews(
            lambda: server.contents_manager, lambda: self.kill_switch_state().engaged
        )
        host = ConversationsHost(
            approvals=self.approvals,
            dispatcher=self.dispatcher,
            read_cell=self.notebook.read_cell,
            read_images=self.notebook.read_images,
            image_max_pixels=lambda: self.agent_image_max_pixels,
            mcp_url=lambda: mcp_url(
                secure=bool(server.certfile),
                ip=server.ip,
                port=server.port,
                base_url=server.base_url,
            ),
            tools_enabled=lambda: not self.kill_switch_state().engaged,
            idle_timeout=lambda: self.agent_idle_timeout_seconds,
            cwd=root,
            telemetry=self.telemetry,
            log=self.log,
            file_reviews=self.file_reviews,
            shell_policy=lambda: self.agent_shell,
            shell_timeout=lambda: self.agent_shell_timeout_seconds,
            sandbox=self.sandbox,
            network=Network(
                app=lambda: server.web_app,
                mcp_path=url_path_join(server.base_url, "copilot/mcp"),
                hosts=lambda: self.agent_network_hosts,
                log=self.log,
            ),
            our_tools=frozenset(d["name"] for d in self.mcp_tools.definitions),
            max_archived=lambda: self.agent_max_archived_conversations,
            policy=self.admin_policy.current,
            store=ConversationStore(store_path, self.log),
            variables=self.mcp_tools.host.variables,
            context_budget=lambda: self.context_budget_bytes,
            personal_keys=PersonalKeys(self._personal_keys_dir(), self.log),
            allow_personal_models=lambda: self.allow_personal_models,
            limits=lambda: TurnLimits(
                reply_bytes=self.agent_reply_max_bytes,
                events=self.agent_turn_max_events,
                turn_seconds=self.agent_turn_timeout_seconds,
                line_bytes=self.agent_line_max_bytes,
            ),
        )
        return Conversations(host, catalog)

    def _model_agents(self) -> list[AgentSpec]:
        """The model endpoints on offer: the configured ones, else a local Ollama's."""
        entries = dict(self.models)
        discover = self.discover_models
        if discover is None:
            discover = "JUPYTERHUB_API_TOKEN" not in os.environ
        if not entries and discover:
            entries = ollama_models(self.ollama_url)
        unavailable = unavailable_reason()
        specs = []
        for model_id, entry in entries.items():
            try:
                specs.append(parse_model(model_id, entry, unavailable))
            except AgentConfigError:
                self.log.warning("jupyter-copilot: skipping a model Ollama listed")
        return specs

    def _fail_closed(self) -> None:
        """Agents and tools off for the life of this server: some settings did not validate.

        The feature switch is off and the kill switch engaged from the configuration, which no
        JSON file can lift; the conversation store is not opened. Names only are logged.
        """
        self.enabled = False
        self.tools_enabled = False
        self.log.error(
            "jupyter-copilot: these settings are invalid and were not applied: %s. Agents and "
            "tools are off until an administrator fixes them (docs/admin.md, "
            '"Invalid settings").',
            ", ".join(f"CopilotApp.{name}" for name in self.config_errors),
        )

    def _conversations_db(self) -> str | None:
        """The conversation store's file; None keeps conversations in memory only."""
        if self.config_errors:
            return None  # nothing is read or written under a configuration that failed
        if self.conversations_db_path is None:
            return os.path.join(jupyter_data_dir(), "copilot", "conversations.db")
        return self.conversations_db_path or None

    def _personal_keys_dir(self) -> str | None:
        """Where people's own keys are kept: next to the default conversation store, in
        the person's Jupyter data directory; None (memory only) when the store is off."""
        if self.config_errors or self.conversations_db_path == "":
            return None
        return os.path.join(jupyter_data_dir(), "copilot", "keys")

    def _policy_traits(self) -> Policy:
        """The policy as the traits say now (before the live JSON files narrow it)."""
        return Policy(
            agents=frozenset(self.allowed_agents) if self.allowed_agents else None,
            modes=tuple(m for m in APPROVAL_MODES if m in self.allowed_modes),
            context_refs=tuple(r for r in CONTEXT_REFS if r in self.allowed_context_refs),
            wanted_agent=self.default_agent,
            wanted_mode=self.default_mode,
            wanted_context_refs=tuple(self.default_context_refs),
        )

    def _welcome(self) -> dict[str, Any]:
        return {
            "toolsEnabled": not self.kill_switch_state().engaged,
            "budgetBytes": self.context_budget_bytes,
            "toolInputBudgetBytes": self.tool_input_budget_bytes,
        }

    def _on_kill_switch_change(self, state: KillSwitchState) -> None:
        # Paths and file contents stay out of logs at this level.
        self.log.warning(
            "jupyter-copilot kill switch %s (source: %s)",
            "engaged" if state.engaged else "released",
            state.source or "none",
        )
        for page in self.dispatcher.pages():
            page.send({"type": "tools-enabled", "enabled": not state.engaged})
