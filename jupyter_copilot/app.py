"""The Jupyter server extension: settings, collaborators and routes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jupyter_server.extension.application import ExtensionApp
from traitlets import Bool, Float, Int, default

from ._version import __version__
from .actions import ActionRunner
from .bridge import PageSession
from .dispatcher import Dispatcher
from .handlers import handler_routes
from .registry import CopilotRegistry, load_registry
from .telemetry import Telemetry


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

    @default("config_file_name")
    def _config_file_name_default(self) -> str:
        # The default would be jupyter_jupyter_copilot_config.
        return "jupyter_copilot_config"

    def initialize_settings(self) -> None:
        """Load the registry (refusing to start on bad data) and build the collaborators."""
        self.registry: CopilotRegistry = load_registry()
        self.dispatcher = Dispatcher()
        self.telemetry = Telemetry(getattr(self.serverapp, "event_logger", None))
        self.runner = ActionRunner(
            self.dispatcher, self.telemetry, self._artifact_id, self._action_settings
        )
        self.log.info(
            "jupyter-copilot %s: enabled=%s, tools_enabled=%s",
            __version__,
            self.enabled,
            self.tools_enabled,
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

    def status(self) -> dict[str, Any]:
        """The body of ``GET copilot/api/status``."""
        engaged = not self.tools_enabled
        return {
            "version": __version__,
            "enabled": self.enabled,
            "toolsEnabled": not engaged,
            "killSwitch": {"engaged": engaged, "source": "config" if engaged else None},
            "pages": len(self.dispatcher.pages()),
            "rtc": self._rtc_enabled(),
        }

    def new_page_session(self, send: Callable[[dict[str, Any]], None]) -> PageSession:
        """A session for a page that just connected."""
        return PageSession(send, self._welcome, self.dispatcher.attach, self._on_state)

    def end_page_session(self, session: PageSession) -> None:
        """A page disconnected: fail its requests and forget it."""
        session.close()
        self.dispatcher.detach(session)

    # -- internals ---------------------------------------------------------------------------

    def _welcome(self) -> dict[str, Any]:
        return {
            "toolsEnabled": self.tools_enabled,
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
        }

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
