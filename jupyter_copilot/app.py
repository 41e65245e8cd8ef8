"""The Jupyter server extension: settings, collaborators and routes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from jupyter_core.paths import jupyter_path
from jupyter_core.utils import ensure_async
from jupyter_server.extension.application import ExtensionApp
from jupyter_server.services.contents.filemanager import (
    AsyncFileContentsManager,
    FileContentsManager,
)
from traitlets import Bool, Enum, Float, Int, List, Unicode, default

from ._version import __version__
from .actions import ActionRunner
from .agents.settings import AgentSettings
from .approvals import Approvals
from .bridge import PageSession
from .callers import APPROVAL_MODES, EXTERNAL_AGENT, NOTEBOOK_REFS, Caller
from .collaboration import live_cell_data
from .dispatcher import Dispatcher
from .edit_tool import NO_LIVE_DOCUMENT, EditHost, EditTool
from .edits import ServedCells
from .killswitch import KillSwitch, KillSwitchState, config_directories, config_engaged
from .mcp.endpoint import McpEndpoint
from .mcp.tools import CopilotTools, ToolsHost
from .notebook import NotebookReader
from .registry import CopilotRegistry, load_registry
from .routes import handler_routes
from .sessions import TOOL, Registrations, hook_kernel_manager, hook_session_manager
from .skills import SkillLibrary, skill_roots
from .switches import Switches
from .telemetry import Telemetry

#: ``get`` of the contents managers whose ``writable`` is exactly ``is_writable(path)``.
_STOCK_GETS = (FileContentsManager.get, AsyncFileContentsManager.get)

CONTENTS_EVENTS = "https://events.jupyter.org/jupyter_server/contents_service/v1"


class CopilotApp(AgentSettings, ExtensionApp):
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

    external_context_refs = List(
        Enum(NOTEBOOK_REFS),
        default_value=["selected_cell"],
        config=True,
        help="""What outside MCP clients may read, as context references.

        Outside clients are MCP clients that authenticate with the person's Jupyter token
        (Claude Code, Codex, Cursor, VS Code, ...). `selected_cell`: the one cell the person
        has selected; `active_notebook`: every cell of the active notebook, in pages;
        `cell_outputs`: cell outputs (rich outputs summarised as type and size). A read
        without its reference ends with `blocked`. Checked on every call.
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

    @default("config_file_name")
    def _config_file_name_default(self) -> str:
        # The default would be jupyter_jupyter_copilot_config.
        return "jupyter_copilot_config"

    def initialize_settings(self) -> None:
        """Load the registry (refusing to start on bad data) and build the collaborators."""
        assert self.serverapp is not None
        self.registry: CopilotRegistry = load_registry()
        self.switches = Switches(
            enabled=lambda: self.enabled,
            tools_engaged=lambda: self.kill_switch_state().engaged,
        )
        self.dispatcher = Dispatcher()
        self.telemetry = Telemetry(getattr(self.serverapp, "event_logger", None))
        self.served_cells = ServedCells()
        self.notebook = NotebookReader(
            self.dispatcher, self._artifact_id, self._action_settings, self.served_cells
        )
        self.runner = ActionRunner(self.notebook, self.telemetry)
        self.registrations = Registrations(self._artifact_id)
        hook_session_manager(self.serverapp.session_manager, self.registrations)
        hook_kernel_manager(self.serverapp.kernel_manager, self.registrations)
        event_logger = getattr(self.serverapp, "event_logger", None)
        if event_logger is not None:
            event_logger.add_listener(schema_id=CONTENTS_EVENTS, listener=self._on_contents_event)
        self.edit_tool = EditTool(
            self.registry.tool(TOOL)["parameters"],
            self.dispatcher,
            self.registrations,
            self.telemetry,
            EditHost(
                switches=self.switches,
                artifact_id=self._artifact_id,
                file_writable=self._file_writable,
                live_cell=self._live_cell,
                served_type=self.served_cells.type_of,
                settings=self._action_settings,
            ),
        )
        self.approvals = Approvals(
            self.telemetry,
            lambda: self.approval_timeout_seconds,
            lambda: self.agent_max_pending_cards,
        )
        self.skills = SkillLibrary.load(skill_roots(jupyter_path(), self.skills_paths), self.log)
        self.mcp_tools = CopilotTools(
            self.registry.tool(TOOL),
            self.notebook,
            self.edit_tool,
            self.approvals,
            ToolsHost(switches=self.switches, skills=lambda: self.skills),
        )
        self.mcp = McpEndpoint(
            self.mcp_tools, self.skills.summary, __version__, self.telemetry, self.log
        )
        self.kill_switch = KillSwitch(
            config_engaged=config_engaged(self),
            directories=config_directories(self),
            log=self.log,
        )
        self.kill_switch.start(self._on_kill_switch_change)
        self.conversations = self.build_conversations(self)
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

    # -- what handlers ask of the app --------------------------------------------------------

    def manifest(self) -> dict[str, list[dict[str, Any]]]:
        """The registry as served, empty when the feature switch is off."""
        if not self.enabled:
            return {"pages": [], "tools": []}
        return self.registry.manifest()

    def tools(self) -> dict[str, list[dict[str, Any]]]:
        """The body of ``GET copilot/api/tools``: definitions and per-session registrations."""
        if not self.enabled:
            return {"tools": [], "registrations": []}
        return {
            "tools": list(self.registry.tools),
            "registrations": [r.to_json() for r in self.registrations.all()],
        }

    def kill_switch_state(self) -> KillSwitchState:
        """The kill switch now, with every JSON config file re-checked."""
        return self.kill_switch.state()

    def status(self) -> dict[str, Any]:
        """The body of ``GET copilot/api/status``."""
        kill_switch = self.kill_switch_state()
        return {
            "version": __version__,
            "enabled": self.enabled,
            "toolsEnabled": not kill_switch.engaged,
            "killSwitch": kill_switch.to_json(),
            "pages": len(self.dispatcher.pages()),
            "rtc": self._rtc_enabled(),
            "agentSandbox": self.sandbox.to_json(),
        }

    def external_caller(self, principal: str, may_write: Callable[[], Awaitable[bool]]) -> Caller:
        """An outside MCP client's caller, with the grants configured now."""
        return Caller(
            kind="external",
            principal=principal,
            agent=EXTERNAL_AGENT,
            context_refs=frozenset(self.external_context_refs),
            approval_mode=self.external_approval_mode,
            may_write=may_write,
        )

    def new_page_session(self, send: Callable[[dict[str, Any]], None]) -> PageSession:
        """A session for a page that just connected."""
        return PageSession(
            send,
            self._welcome,
            self.dispatcher.attach,
            self._on_state,
            on_keep=self.edit_tool.keep_verdict,
            on_review=self.edit_tool.review_decided,
        )

    def end_page_session(self, session: PageSession) -> None:
        """A page disconnected: fail its requests, end its reviews and forget it."""
        session.close()
        self.dispatcher.detach(session)
        self.edit_tool.page_closed(session)
        self.approvals.page_closed(session)
        self.conversations.host.file_reviews.page_closed(session)

    async def stop_extension(self) -> None:
        """Deny waiting approvals, stop the agents, end MCP sessions, stop watching files."""
        self.approvals.stop()
        await self.conversations.stop()
        await self.mcp.stop()
        self.kill_switch.stop()

    # -- internals ---------------------------------------------------------------------------

    def _welcome(self) -> dict[str, Any]:
        return {
            "toolsEnabled": not self.kill_switch_state().engaged,
            "budgetBytes": self.context_budget_bytes,
            "toolInputBudgetBytes": self.tool_input_budget_bytes,
        }

    def _on_state(self, session: PageSession, accepted: bool) -> None:
        self.telemetry.context_refresh(
            page_ref=session.ref,
            accepted=accepted,
            received=session.counts.received,
            deduplicated=session.counts.deduplicated,
            coalesced=session.counts.coalesced,
        )

    def _action_settings(self) -> dict[str, Any]:
        return {
            "page_timeout_seconds": self.page_timeout_seconds,
            "context_budget_bytes": self.context_budget_bytes,
            "tool_input_budget_bytes": self.tool_input_budget_bytes,
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

    async def _on_contents_event(self, logger: Any, schema_id: str, data: dict[str, Any]) -> None:
        if data.get("action") == "rename" and isinstance(data.get("source_path"), str):
            self.registrations.renamed(data["source_path"], data["path"])

    async def _file_writable(self, path: str) -> bool:
        assert self.serverapp is not None
        manager: Any = self.serverapp.contents_manager
        if type(manager).get in _STOCK_GETS:
            # The stock file managers answer `writable` with is_writable(); asking it
            # directly saves a thread hop and the model (about 1 ms a call).
            return bool(manager.is_writable(path))
        try:
            model = await ensure_async(manager.get(path, content=False))
        except Exception:
            # Gone or unreadable: not something we may write.
            self.log.debug("jupyter-copilot: cannot stat the notebook", exc_info=True)
            return False
        return bool(model.get("writable"))

    async def _live_cell(self, artifact_id: str, cell_id: str) -> Any:
        ydoc = self._ydoc_extension()
        if ydoc is None:
            return NO_LIVE_DOCUMENT
        # The room is named after the file ID, which the caller has already checked: asking
        # by room saves get_document() a second look-up in the file-ID database.
        from jupyter_server_ydoc.utils import encode_file_path, room_id_from_encoded_path

        room_id = room_id_from_encoded_path(encode_file_path("json", "notebook", artifact_id))
        document = await ydoc.get_document(room_id=room_id, copy=False)
        if document is None:
            # Nobody has the room open: the page's model is the live one.
            return NO_LIVE_DOCUMENT
        return live_cell_data(document, cell_id)

    def _ydoc_extension(self) -> Any:
        if not self._rtc_enabled():
            return None
        assert self.serverapp is not None
        return self.serverapp.web_app.settings.get("jupyter_server_ydoc")

    def _artifact_id(self, path: str) -> str | None:
        # Read at call time: the file-ID extension may load after this one.
        assert self.serverapp is not None
        manager = self.serverapp.web_app.settings.get("file_id_manager")
        if manager is None:
            self.log.warning(
                "jupyter-copilot needs the jupyter_server_fileid extension to identify "
                "notebooks; no context is served without it."
            )
            return None
        return manager.index(path)

    def _rtc_enabled(self) -> bool:
        manager = getattr(self.serverapp, "extension_manager", None)
        if manager is None:
            return False
        extension = manager.extensions.get("jupyter_server_ydoc")
        return bool(extension is not None and extension.enabled)
