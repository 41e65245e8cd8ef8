"""HTTP and WebSocket handlers. They parse, authorize and delegate; no logic lives here."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from jupyter_core.utils import ensure_async
from jupyter_server.auth.decorator import authorized, ws_authenticated
from jupyter_server.base.handlers import APIHandler, JupyterHandler
from jupyter_server.base.websocket import WebSocketMixin
from tornado import web, websocket

from . import jsontext
from .actions import ABORT, GET_CONTEXT, INVOKE, Caller, parse_body
from .agents import bodies
from .bridge import PageSession
from .mcp.grants import principal_of
from .mcp.transport import AsgiExchange
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

    async def _may_write(self) -> bool:
        """Whether the server's authorizer lets this user write notebooks."""
        return bool(
            await ensure_async(
                self.authorizer.is_authorized(self, self.current_user, "write", "contents")
            )
        )


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
            # The tool checks the input before the switches (docs/protocol.md section 5).
            body = parse_body(self.request.body)
            return await self.copilot.edit_tool.invoke(Caller(may_write=self._may_write), body)
        if not self.copilot.enabled:
            raise Refusal("feature-disabled")
        body = parse_body(self.request.body)
        if action == GET_CONTEXT:
            return await self.copilot.runner.get_context(Caller(may_write=self._may_write), body)
        raise Refusal("unknown-action", "This action is not available in this version.")


class ApprovalHandler(CopilotAPIHandler):
    """``POST copilot/api/approvals/<requestId>``: the person allows or denies a tool call."""

    @web.authenticated
    @authorized("execute")
    def post(self, request_id: str) -> None:
        """Decide one waiting approval request; only the call's owner may."""
        try:
            body = jsontext.parse(self.request.body or b"{}")
        except jsontext.BadJson:
            body = None
        principal = principal_of(self.identity_provider, self.current_user)
        try:
            decision = bodies.decision(body)
            outcome = self.copilot.approvals.decide(
                request_id, principal, decision.allow, decision.option_id
            )
        except Refusal as refusal:
            self.refuse(refusal)
            return
        self.finish(json.dumps({"requestId": request_id, "outcome": outcome}))


class McpHandler(CopilotAPIHandler):
    """``copilot/mcp``: the MCP endpoint (streamable HTTP) behind Jupyter's authentication.

    Jupyter authenticates and authorizes the request; the MCP SDK serves it. Outside MCP
    clients authenticate with the person's Jupyter token. A side-panel agent authenticates
    with its conversation's bearer token, which acts as the conversation's owner and only
    while the conversation lives.
    """

    def initialize(self, app: CopilotApp) -> None:  # type: ignore[override]
        """Receive the extension app that owns the endpoint."""
        super().initialize(app)
        self._exchange: AsgiExchange | None = None
        self._conversation: Any = None

    async def prepare(self) -> None:  # type: ignore[override]
        """Accept a conversation token in place of Jupyter's authentication.

        A bearer header cannot be sent by a browser on its own, so the XSRF check that
        cookie-authenticated requests need does not apply to it.
        """
        token = _conversation_token(self.request.headers.get("Authorization", ""))
        if token is None:
            await super().prepare()
            return
        if not self.check_host():
            raise web.HTTPError(403)
        conversation = self.copilot.conversations.by_token(token)
        if conversation is None:
            raise web.HTTPError(403, "This conversation token is not valid.")
        self._conversation = conversation
        self.current_user = self._jupyter_current_user = conversation.user

    def compute_etag(self) -> None:
        """Streamed answers have no ETag (tornado would otherwise hash the body)."""
        return None

    def on_connection_close(self) -> None:
        """Tell the SDK that the client went away."""
        if self._exchange is not None:
            self._exchange.client_gone()

    @web.authenticated
    @authorized("execute")
    async def get(self) -> None:
        """Open the server-to-client event stream of a session."""
        await self._serve()

    @web.authenticated
    @authorized("execute")
    async def post(self) -> None:
        """One JSON-RPC message from the client."""
        await self._serve()

    @web.authenticated
    @authorized("execute")
    async def delete(self) -> None:
        """End a session."""
        await self._serve()

    async def _serve(self) -> None:
        if not self.copilot.enabled:
            self.refuse(Refusal("feature-disabled"))
            return
        if self._conversation is not None:
            caller = self.copilot.conversation_caller(self._conversation, self._may_write)
        else:
            caller = self.copilot.external_caller(
                principal_of(self.identity_provider, self.current_user), self._may_write
            )
        self._exchange = AsgiExchange(self)
        try:
            await self.copilot.mcp.serve(caller, self._exchange)
        except Refusal as refusal:
            self.refuse(refusal)


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
        # Small messages both ways: without it a request after a message the page does not
        # answer (a verdict, say) waits for the page's delayed acknowledgement.
        self.set_nodelay(True)
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


def _conversation_token(header: str) -> str | None:
    """The conversation token of an ``Authorization: Bearer jcc-...`` header, if any."""
    scheme, _, value = header.strip().partition(" ")
    value = value.strip()
    if scheme.lower() == "bearer" and value.startswith("jcc-"):
        return value
    return None


def handler_routes(app: CopilotApp) -> list[tuple[str, type, dict[str, Any]]]:
    """Every route of the extension, with its collaborators."""
    from .agents.handlers import conversation_routes  # imports this module's base class

    kwargs = {"app": app}
    return [
        (r"/copilot/api/status", StatusHandler, kwargs),
        (r"/copilot/api/manifest", ManifestHandler, kwargs),
        (r"/copilot/api/tools", ToolsHandler, kwargs),
        (r"/copilot/api/actions/(?P<action>[^/]+)", ActionHandler, kwargs),
        (r"/copilot/api/bridge", BridgeHandler, kwargs),
        (r"/copilot/api/approvals/(?P<request_id>[^/]+)", ApprovalHandler, kwargs),
        (r"/copilot/mcp", McpHandler, kwargs),
        *conversation_routes(app),
    ]
