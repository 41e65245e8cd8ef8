"""HTTP and WebSocket handlers. They parse, authorize and delegate; no logic lives here."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from jupyter_server.auth.decorator import authorized, ws_authenticated
from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.base.websocket import WebSocketMixin
from tornado import web, websocket

from ..admin.switches import FEATURE, Switches, action_gate
from ..agents import bodies
from ..mcp.endpoint import McpEndpoint
from ..mcp.transport import AsgiExchange
from ..page.bridge import PageSession
from ..protocol.callers import Caller
from ..protocol.refusals import Refusal
from ..protocol.registry import GET_CONTEXT
from ..tools.approvals import Approvals
from ..tools.proposals import ProposalTool
from .actions import ActionBody, ActionRunner
from .adapters import authenticate
from .web import AUTH_RESOURCE, CopilotHandler, RefusalAnswers, gated

#: What a GET of status, manifest or tools answers with, built at call time.
Answer = Callable[[], dict[str, Any]]


class _ReadHandler(CopilotHandler):
    """Base of the GET endpoints that answer whatever the switches say."""

    def initialize(self, answer: Answer) -> None:  # type: ignore[override]
        """Receive what builds the answer."""
        self._answer = answer


class StatusHandler(_ReadHandler):
    """``GET copilot/api/status``: switches, kill-switch source and connected pages."""

    @web.authenticated
    @authorized
    def get(self) -> None:
        """Report the extension's state; answers even when the feature switch is off."""
        self.reply(self._answer())


class ManifestHandler(_ReadHandler):
    """``GET copilot/api/manifest``: the page manifests and tool definitions."""

    @web.authenticated
    @authorized
    def get(self) -> None:
        """The registry, or empty lists when the feature switch is off."""
        self.reply(self._answer())


class ToolsHandler(_ReadHandler):
    """``GET copilot/api/tools``: tool definitions and one registration per kernel session."""

    @web.authenticated
    @authorized
    def get(self) -> None:
        """The tools and their live registrations, empty when the feature switch is off."""
        self.reply(self._answer())


class ActionHandler(CopilotHandler):
    """``POST copilot/api/actions/<action>``: run one registry action."""

    def initialize(  # type: ignore[override]
        self,
        switches: Switches,
        actions: frozenset[str],
        runner: ActionRunner,
        tools: Iterable[ProposalTool],
    ) -> None:
        """Receive the switches, the registry's actions, and what runs them: the read
        action's runner and the proposal tools, each answering its spec's two actions."""
        self.switches = switches
        self._actions = actions
        self._runner = runner
        self._invokes: dict[str, ProposalTool] = {}
        self._aborts: dict[str, ProposalTool] = {}
        for tool in tools:
            self._invokes[tool.spec.invoke_action] = tool
            self._aborts[tool.spec.abort_action] = tool

    @web.authenticated
    @authorized
    @gated(action_gate)
    async def post(self, action: str) -> None:
        """Run ``action`` for the current user; every refusal is a contract error body."""
        if action not in self._actions:
            raise Refusal("unknown-action", "There is no action by that name.")
        body = ActionBody.parse(self.json_body())
        # A run asks the person even here: the card's owner is this request's principal.
        caller = Caller(may_write=self.may_write, principal=self.principal)
        result: Any
        if action in self._aborts:
            result = await self._aborts[action].abort(body.data)
        elif action in self._invokes:
            tool = self._invokes[action]
            result = await tool.invoke(caller, body.data, body.call_id, body.page_id)
        elif action == GET_CONTEXT:
            result = await self._runner.get_context(caller, body)
        else:
            raise Refusal("unknown-action", "This action is not available in this version.")
        self.finish(json.dumps({"result": result}, ensure_ascii=False))


class ApprovalHandler(CopilotHandler):
    """``POST copilot/api/approvals/<requestId>``: the person allows or denies a tool call."""

    def initialize(self, approvals: Approvals) -> None:  # type: ignore[override]
        """Receive the waiting approvals."""
        self._approvals = approvals

    @web.authenticated
    @authorized("execute")
    def post(self, request_id: str) -> None:
        """Decide one waiting approval request; only the call's owner may."""
        decision = bodies.decision(self.json_body())
        outcome = self._approvals.decide(
            request_id, self.principal, decision.allow, decision.option_id
        )
        self.reply({"requestId": request_id, "outcome": outcome})


#: A caller from the principal (or conversation) and the authorizer's write check.
CallerOf = Callable[[Any, Callable[[], Awaitable[bool]]], Any]


class McpHandler(CopilotHandler):
    """``copilot/mcp``: the MCP endpoint (streamable HTTP) behind Jupyter's authentication.

    Jupyter authenticates and authorizes the request; the MCP SDK serves it. Outside MCP
    clients authenticate with the person's Jupyter token. A side-panel agent authenticates
    with its conversation's bearer token, which acts as the conversation's owner and only
    while the conversation lives.
    """

    def initialize(  # type: ignore[override]
        self,
        switches: Switches,
        endpoint: McpEndpoint,
        by_token: Callable[[str], Any],
        conversation_caller: CallerOf,
        external_caller: CallerOf,
    ) -> None:
        """Receive the endpoint and what makes callers of outside clients and conversations."""
        self.switches = switches
        self._endpoint = endpoint
        self._by_token = by_token
        self._conversation_caller = conversation_caller
        self._external_caller = external_caller
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
        conversation = self._by_token(token)
        if conversation is None:
            raise web.HTTPError(403, "This conversation token is not valid.")
        self._conversation = conversation
        authenticate(self, conversation.user)

    def compute_etag(self) -> None:
        """Streamed answers have no ETag (tornado would otherwise hash the body)."""
        return None

    def on_connection_close(self) -> None:
        """Tell the SDK that the client went away."""
        if self._exchange is not None:
            self._exchange.client_gone()

    @web.authenticated
    @authorized("execute")
    @gated(FEATURE)
    async def get(self) -> None:
        """Open the server-to-client event stream of a session."""
        await self._serve()

    @web.authenticated
    @authorized("execute")
    @gated(FEATURE)
    async def post(self) -> None:
        """One JSON-RPC message from the client."""
        await self._serve()

    @web.authenticated
    @authorized("execute")
    @gated(FEATURE)
    async def delete(self) -> None:
        """End a session."""
        await self._serve()

    async def _serve(self) -> None:
        if self._conversation is not None:
            caller = self._conversation_caller(self._conversation, self.may_write)
        else:
            caller = self._external_caller(self.principal, self.may_write)
        self._exchange = AsgiExchange(self)
        await self._endpoint.serve(caller, self._exchange)


class BridgeHandler(RefusalAnswers, WebSocketMixin, websocket.WebSocketHandler, JupyterHandler):  # type: ignore[misc]
    """``copilot/api/bridge``: the one WebSocket of a JupyterLab page."""

    auth_resource = AUTH_RESOURCE

    def initialize(  # type: ignore[override]
        self,
        switches: Switches,
        open_page: Callable[[Callable[[dict[str, Any]], None]], PageSession],
        close_page: Callable[[PageSession], None],
    ) -> None:
        """Receive what starts and ends a page's session."""
        self.switches = switches
        self._open_page = open_page
        self._close_page = close_page
        self.session: PageSession | None = None

    @ws_authenticated
    @authorized("execute")
    @gated(FEATURE)
    async def get(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        """Authorize the upgrade, then hand over to tornado's WebSocket handshake."""
        await super().get(*args, **kwargs)

    def open(self, *args: Any, **kwargs: Any) -> None:
        """Start the page's session; it registers with the dispatcher on ``hello``."""
        super().open(*args, **kwargs)
        # Small messages both ways: without it a request after a message the page does not
        # answer (a verdict, say) waits for the page's delayed acknowledgement.
        self.set_nodelay(True)
        self.session = self._open_page(self._write)

    def on_message(self, message: str | bytes) -> None:
        """Pass one message to the session."""
        if self.session is not None:
            self.session.receive(message)

    def on_close(self) -> None:
        """Fail the page's pending requests and forget the page."""
        if self.session is not None:
            self._close_page(self.session)
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
