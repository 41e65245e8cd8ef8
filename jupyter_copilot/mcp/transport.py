"""Serving an ASGI application from a tornado request, for the MCP SDK's HTTP transport.

The MCP SDK's streamable HTTP transport is an ASGI application. Jupyter is a tornado server,
and the endpoint must live on Jupyter's own port behind Jupyter's own authentication, so
the handler authenticates with tornado and then hands the request to the SDK through
:func:`serve_asgi`: no second web server, no second port.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from tornado import web
from tornado.iostream import StreamClosedError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
AsgiApp = Callable[
    [Scope, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]],
    Awaitable[None],
]


def asgi_scope(
    handler: web.RequestHandler, state: dict[str, Any], extra: dict[str, Any] | None = None
) -> Scope:
    """The ASGI HTTP scope of the handler's request, with ``state`` and ``extra`` keys."""
    request = handler.request
    host, _, port = (request.host or "").partition(":")
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": request.version.removeprefix("HTTP/") or "1.1",
        "method": request.method or "GET",
        "scheme": request.protocol,
        "path": request.path,
        "raw_path": request.path.encode("latin-1"),
        "query_string": request.query.encode("latin-1"),
        "root_path": "",
        "headers": [
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in request.headers.get_all()
        ],
        "client": (request.remote_ip or "", 0),
        "server": (host, int(port) if port.isdigit() else None),
        "state": dict(state),
        **(extra or {}),
    }


class AsgiExchange:
    """One tornado request served by an ASGI app; tell it when the client goes away.

    The request body is handed over at once (tornado has read it); the response is written
    as the app sends it, flushing each chunk so that server-sent events reach the client as
    they happen.
    """

    def __init__(self, handler: web.RequestHandler) -> None:
        self._handler = handler
        self._body_sent = False
        self._gone = asyncio.Event()
        self._started = False
        #: Whether the response is complete, told by this exchange itself since tornado keeps
        #: it private (``RequestHandler._finished``): only the exchange finishes the response.
        self._finished = False

    def client_gone(self) -> None:
        """The client closed the connection: the app's next ``receive`` says so."""
        self._gone.set()

    async def run(
        self, app: AsgiApp, state: dict[str, Any], extra: dict[str, Any] | None = None
    ) -> None:
        """Run ``app`` for the request until it has sent its whole response."""
        await app(asgi_scope(self._handler, state, extra), self._receive, self._send)
        if self._finished or self._gone.is_set():
            return
        if not self._started:
            raise web.HTTPError(500, "The MCP endpoint sent no response.")
        self._finish()

    async def _receive(self) -> Message:
        if not self._body_sent:
            self._body_sent = True
            return {"type": "http.request", "body": self._handler.request.body, "more_body": False}
        await self._gone.wait()
        return {"type": "http.disconnect"}

    async def _send(self, message: Message) -> None:
        handler = self._handler
        if self._gone.is_set() or self._finished:
            return
        if message["type"] == "http.response.start":
            self._started = True
            handler.set_status(message["status"])
            # The app says exactly what the response is; tornado's defaults would contradict it.
            handler.clear_header("Content-Type")
            for name, value in message.get("headers", []):
                handler.add_header(name.decode("latin-1"), value.decode("latin-1"))
            return
        if message["type"] != "http.response.body":
            return
        body = message.get("body", b"")
        if body:
            handler.write(body)
        try:
            if message.get("more_body", False):
                await handler.flush()
            else:
                self._finish()
        except StreamClosedError:
            self._gone.set()

    def _finish(self) -> None:
        self._finished = True
        self._handler.finish()
