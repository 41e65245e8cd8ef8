"""The MCP endpoint ``{base}copilot/mcp``: the MCP SDK's streamable HTTP server, per agent.

The SDK does the protocol (sessions, both protocol eras, server-sent events); this module
gives it our tools and, per agent, the ``<available-skills>`` summary as its instructions.
Each agent id gets its own SDK server, so that the instructions list only that agent's
skills. Every MCP session is bound to the caller that opened it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from ..admin.telemetry import Telemetry
from ..protocol.callers import Caller
from ..protocol.refusals import Refusal
from .tools import CopilotTools
from .transport import AsgiExchange

SERVER_NAME = "jupyter-copilot"
CALLER_KEY = "copilot_caller"


def tool_result(structured: dict[str, Any], is_error: bool = False) -> types.CallToolResult:
    """A tool answer: the object as structured content and as JSON text."""
    text = json.dumps(structured, separators=(",", ":"), ensure_ascii=False)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=structured,
        is_error=is_error,
    )


class _Running:
    """One SDK server and its session manager, running until :meth:`stop`."""

    def __init__(self, server: Server[Any]) -> None:
        self.manager = StreamableHTTPSessionManager(
            app=server,
            json_response=False,
            # Jupyter checks Host and Origin itself (allow_origin, XSRF, token); the SDK's
            # own localhost-only check would refuse a JupyterHub or a remote server.
            security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        async with self.manager.run():
            self._ready.set()
            await self._stop.wait()

    async def ready(self) -> None:
        await self._ready.wait()

    async def stop(self) -> None:
        self._stop.set()
        with contextlib.suppress(Exception):
            await self._task


class McpEndpoint:
    """The SDK servers of the endpoint, one per agent id, started on first use."""

    def __init__(
        self,
        tools: CopilotTools,
        instructions: Callable[[str], str],
        version: str,
        telemetry: Telemetry,
        log: logging.Logger,
    ) -> None:
        self.tools = tools
        self._instructions = instructions
        self._version = version
        self.telemetry = telemetry
        self.log = log
        self._running: dict[str, _Running] = {}
        self._stopped = False
        self._calls_in_flight = 0
        self._idle = asyncio.Event()
        self._idle.set()

    async def serve(self, caller: Caller, exchange: AsgiExchange) -> None:
        """Serve one HTTP request of ``caller`` through the agent's SDK server."""
        if self._stopped:
            raise Refusal("feature-disabled", "The server is stopping.")
        running = self._running.get(caller.agent)
        if running is None:
            running = self._running[caller.agent] = _Running(self._server(caller.agent))
        await running.ready()
        # The SDK binds a session to the principal of the request that opened it.
        user = AuthenticatedUser(AccessToken(token="-", client_id=caller.session_key, scopes=[]))
        await exchange.run(running.manager.handle_request, {CALLER_KEY: caller}, {"user": user})

    async def stop(self, grace_seconds: float = 2.0) -> None:
        """Stop every SDK server (their open sessions end).

        Tool calls still running get ``grace_seconds`` to answer first: a call whose
        approval the stop has just denied must be able to say so.
        """
        self._stopped = True
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._idle.wait(), grace_seconds)
        # The answers of those calls are written after the handlers return.
        await asyncio.sleep(0.1)
        running, self._running = self._running, {}
        for server in running.values():
            await server.stop()

    def _server(self, agent: str) -> Server[Any]:
        return Server(
            SERVER_NAME,
            version=self._version,
            title="Jupyter Copilot",
            instructions=self._instructions(agent),
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )

    async def _list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=d["name"],
                    title=d["title"],
                    description=d["description"],
                    input_schema=d["inputSchema"],
                    annotations=types.ToolAnnotations(
                        title=d["title"],
                        read_only_hint=d["readOnly"],
                        destructive_hint=d.get("destructive", False),
                        idempotent_hint=d["readOnly"],
                        open_world_hint=False,
                    ),
                )
                for d in self.tools.listed()
            ]
        )

    async def _call_tool(
        self, ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        self._calls_in_flight += 1
        self._idle.clear()
        try:
            return await self._answer(ctx, params)
        finally:
            self._calls_in_flight -= 1
            if not self._calls_in_flight:
                self._idle.set()

    async def _answer(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        started = time.perf_counter()
        caller: Caller = ctx.request.state.copilot_caller
        name = params.name
        known = name if name in self.tools.definitions_by_name else None
        try:
            result = await self.tools.call(caller, name, dict(params.arguments or {}))
        except Refusal as refusal:
            answer = tool_result(refusal.to_json(), is_error=True)
            outcome = refusal.code
        else:
            answer = tool_result(result)
            outcome = "ok"
        self.telemetry.mcp_tool_call(
            tool=known,
            caller_kind=caller.kind,
            outcome=outcome,
            latency_ms=(time.perf_counter() - started) * 1000.0,
            size=len(answer.content[0].text.encode("utf-8", "surrogatepass")),  # type: ignore[union-attr]
        )
        return answer
