"""HTTP and WebSocket handlers. They parse, authorize and delegate; no logic lives here."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from jupyter_core.utils import ensure_async
from jupyter_server.auth.decorator import authorized, ws_authenticated
from jupyter_server.base.handlers import APIHandler, JupyterHandler
from jupyter_server.base.websocket import WebSocketMixin
from tornado import web, websocket

from .actions import ABORT, GET_CONTEXT, INVOKE, Caller, parse_body
from .bridge import PageSession
from .refusals import Refusal

if TYPE_CHECKING:
    from .app import CopilotApp

AUTH_RESOURCE = "copilot"


class CopilotAPIHandler(APIHandler):
    """Base for the REST endpoints: holds the app and answers refusals as contract JSON."""

    auth_resource = AUTH_RESOURCE

    def initialize(self, app: CopilotApp) -> None:  # type: ignore[override]
        """Receive the extension app that owns the dispatcher and settings."""
        self.copilot = app

    def refuse(self, refusal: Refusal) -> None:
        """Finish the request with the refusal's status and body."""
        self.set_status(refusal.status)
        self.finish(json.dumps(refusal.to_json()))


class StatusHandler(CopilotAPIHandler):
    """``GET copilot/api/status``: switches, kill-switch source and connected pages."""

    @web.authenticated
    @authorized
    def get(self) -> None:
        """Report the extension's state; answers even when the feature switch is off."""
        self.finish(json.dumps(self.copilot.status()))


class ManifestHandler(CopilotAPIHandler):
    """``GET copilot/api/manifest``: the page manifests and tool definitions."""

    @web.authenticated
    @authorized
    def get(self) -> None:
        """The registry, or empty lists when the feature switch is off."""
        self.finish(json.dumps(self.copilot.manifest()))


class ToolsHandler(CopilotAPIHandler):
    """``GET copilot/api/tools``: tool definitions and one registration per kernel session."""

    @web.authenticated
    @authorized
    def get(self) -> None:
        """The tools and their live registrations, empty when the feature switch is off."""
        self.finish(json.dumps(self.copilot.tools()))


class ActionHandler(CopilotAPIHandler):
    """``POST copilot/api/actions/<action>``: run one registry action."""

    @web.authenticated
    @authorized
    async def post(self, action: str) -> None:
        """Run ``action`` for the current user; every refusal is a contract error body."""
        try:
            result = await self._run(action)
        except Refusal as refusal:
            self.refuse(refusal)
            return
        self.finish(json.dumps({"result": result}, ensure_ascii=False))

    async def _run(self, action: str) -> Any:
        if action not in self.copilot.registry.actions:
            raise Refusal("unknown-action", "There is no action by that name.")
        if action == ABORT:
            # Never refused by the switches: stopping must always be possible.
            return await self.copilot.edit_tool.abort(parse_body(self.request.body))
        if action == INVOKE:
            # The tool checks the input before the switches (CONTRACT.md section 5).
            body = parse_body(self.request.body)
            return await self.copilot.edit_tool.invoke(Caller(may_write=self._may_write), body)
        if not self.copilot.enabled:
            raise Refusal("feature-disabled", "Copilot is turned off on this server.")
        body = parse_body(self.request.body)
        if action == GET_CONTEXT:
            return await self.copilot.runner.get_context(Caller(may_write=self._may_write), body)
        raise Refusal("unknown-action", "This action is not available in this version.")

    async def _may_write(self) -> bool:
        return bool(
            await ensure_async(
                self.authorizer.is_authorized(self, self.current_user, "write", "contents")
            )
        )


class BridgeHandler(WebSocketMixin, websocket.WebSocketHandler, JupyterHandler):  # type: ignore[misc]
    """``copilot/api/bridge``: the one WebSocket of a JupyterLab page."""

    auth_resource = AUTH_RESOURCE

    def initialize(self, app: CopilotApp) -> None:  # type: ignore[override]
        """Receive the extension app that owns the dispatcher."""
        self.copilot = app
        self.session: PageSession | None = None

    @ws_authenticated
    async def get(self, *args: Any, **kwargs: Any) -> None:
        """Authorize the upgrade, then hand over to tornado's WebSocket handshake."""
        allowed = await ensure_async(
            self.authorizer.is_authorized(self, self.current_user, "execute", AUTH_RESOURCE)
        )
        if not allowed:
            raise web.HTTPError(403)
        if not self.copilot.enabled:
            raise web.HTTPError(503, "Copilot is turned off on this server.")
        await super().get(*args, **kwargs)

    def open(self, *args: Any, **kwargs: Any) -> None:
        """Start the page's session; it registers with the dispatcher on ``hello``."""
        super().open(*args, **kwargs)
        self.session = self.copilot.new_page_session(self._write)

    def on_message(self, message: str | bytes) -> None:
        """Pass one message to the session."""
        if self.session is not None:
            self.session.receive(message)

    def on_close(self) -> None:
        """Fail the page's pending requests and forget the page."""
        if self.session is not None:
            self.copilot.end_page_session(self.session)
            self.session = None
        if self.ping_callback is not None:
            self.ping_callback.stop()

    def _write(self, message: dict[str, Any]) -> None:
        try:
            self.write_message(json.dumps(message, ensure_ascii=False))
        except websocket.WebSocketClosedError:
            self.log.debug("Copilot bridge: page already gone")


def handler_routes(app: CopilotApp) -> list[tuple[str, type, dict[str, Any]]]:
    """Every route of the extension, with its collaborators."""
    kwargs = {"app": app}
    return [
        (r"/copilot/api/status", StatusHandler, kwargs),
        (r"/copilot/api/manifest", ManifestHandler, kwargs),
        (r"/copilot/api/tools", ToolsHandler, kwargs),
        (r"/copilot/api/actions/(?P<action>[^/]+)", ActionHandler, kwargs),
        (r"/copilot/api/bridge", BridgeHandler, kwargs),
    ]
