"""A sandboxed agent's network (agents/egress.py): only what its plan allows gets through.

The sockets are spoken to directly, as the bridge inside the sandbox would, with a real
tornado application standing in for the Jupyter server's.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from typing import Any

import pytest
from tornado import web

from jupyter_copilot.agents.egress import Egress, Network, plan

MCP_PATH = "/base/copilot/mcp"


class Echo(web.RequestHandler):
    def post(self) -> None:
        self.write(b"mcp:" + self.request.body)

    def get(self) -> None:
        self.write("other")


def app() -> web.Application:
    return web.Application([(MCP_PATH, Echo), (r"/base/api/contents/.*", Echo)])


async def exchange(path: str, data: bytes, read: int = 4096) -> bytes:
    """Send ``data`` on the Unix socket at ``path``; what comes back before it closes."""
    reader, writer = await asyncio.open_unix_connection(path)
    writer.write(data)
    await writer.drain()
    try:
        return await asyncio.wait_for(reader.read(read), 10)
    finally:
        writer.close()


def run(jp_asyncio_loop: asyncio.AbstractEventLoop, coroutine: Any) -> Any:
    return jp_asyncio_loop.run_until_complete(coroutine)


@pytest.fixture
def serve(
    jp_asyncio_loop: asyncio.AbstractEventLoop,
) -> Any:
    opened: list[Egress] = []

    def open_plan(env: dict[str, str], hosts: list[str]) -> Egress:
        network = Network(app, MCP_PATH, lambda: hosts, logging.getLogger("test"))
        egress = run(jp_asyncio_loop, network.open(env, []))
        opened.append(egress)
        return egress

    yield open_plan
    for egress in opened:
        run(jp_asyncio_loop, egress.close())
        assert not os.path.exists(egress.folder)


def socket_of(egress: Egress, kind: str) -> str:
    forward = next(f for f in egress.plan.forwards if f.kind == kind)
    return os.path.join(egress.folder, forward.name)


def request(method: str, path: str, body: bytes = b"") -> bytes:
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(body)}\r\n"
    return head.encode() + b"Connection: close\r\n\r\n" + body


def test_the_mcp_socket_serves_the_endpoint_and_nothing_else_of_the_server(
    serve: Callable[..., Egress], jp_asyncio_loop: asyncio.AbstractEventLoop
) -> None:
    egress = serve({}, [])
    mcp = socket_of(egress, "mcp")
    answer = run(jp_asyncio_loop, exchange(mcp, request("POST", MCP_PATH, b"hi")))
    assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b"mcp:hi")
    for path in ("/base/api/contents/x", "/base/copilot/mcp/../../api/contents/x", "/"):
        answer = run(jp_asyncio_loop, exchange(mcp, request("GET", path)))
        assert answer.startswith(b"HTTP/1.1 404"), (path, answer)
    assert egress.mcp_url("https://example.org:8888/base/copilot/mcp") == (
        f"http://127.0.0.1:{egress.plan.mcp_port}/base/copilot/mcp"
    )


def test_the_proxy_lets_through_only_listed_hosts(
    serve: Callable[..., Egress], jp_asyncio_loop: asyncio.AbstractEventLoop
) -> None:
    egress = serve({}, ["localhost:9", "api.example.org"])
    proxy = socket_of(egress, "connect")
    refused = run(
        jp_asyncio_loop, exchange(proxy, b"CONNECT evil.example.org:443 HTTP/1.1\r\n\r\n")
    )
    assert refused.startswith(b"HTTP/1.1 403")
    wrong = run(jp_asyncio_loop, exchange(proxy, b"GET http://api.example.org/ HTTP/1.1\r\n\r\n"))
    assert wrong.startswith(b"HTTP/1.1 405")
    # A listed loopback name connects (nothing listens on port 9 here: a bad gateway).
    closed = run(jp_asyncio_loop, exchange(proxy, b"CONNECT localhost:9 HTTP/1.1\r\n\r\n"))
    assert closed.startswith(b"HTTP/1.1 502")


def test_a_loopback_model_url_is_forwarded_to_exactly_its_port(
    serve: Callable[..., Egress], jp_asyncio_loop: asyncio.AbstractEventLoop
) -> None:
    async def model(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"model:" + await reader.read(100))
        await writer.drain()
        writer.close()

    server = run(jp_asyncio_loop, asyncio.start_server(model, "127.0.0.1", 0))
    port = server.sockets[0].getsockname()[1]
    try:
        egress = serve({"ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}"}, [])
        forward = next(f for f in egress.plan.forwards if f.kind == "tcp")
        assert forward.port == port
        answer = run(jp_asyncio_loop, exchange(os.path.join(egress.folder, forward.name), b"hello"))
        assert answer == b"model:hello"
    finally:
        server.close()


def test_a_plan_without_mcp_serves_no_endpoint() -> None:
    assert plan({}, [], mcp=False).forwards == ()


def loopback_names() -> list[str]:
    """Names other than ``localhost`` that /etc/hosts points at the loopback."""
    try:
        with open("/etc/hosts", encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    names = []
    for line in lines:
        words = line.split("#", 1)[0].split()
        if words and (words[0].startswith("127.") or words[0] == "::1"):
            names += [w for w in words[1:] if w != "localhost"]
    return names


def test_a_listed_name_that_points_at_this_machine_is_not_connected(
    serve: Callable[..., Egress], jp_asyncio_loop: asyncio.AbstractEventLoop
) -> None:
    names = loopback_names()
    if not names:
        pytest.skip("/etc/hosts names no loopback host other than localhost here")

    async def jupyter(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        reached.append(True)
        writer.close()

    reached: list[bool] = []
    server = run(jp_asyncio_loop, asyncio.start_server(jupyter, "127.0.0.1", 0))
    port = server.sockets[0].getsockname()[1]
    try:
        egress = serve({}, [f"{names[0]}:{port}"])
        line = f"CONNECT {names[0]}:{port} HTTP/1.1\r\n\r\n".encode()
        answer = run(jp_asyncio_loop, exchange(socket_of(egress, "connect"), line))
        assert answer.startswith(b"HTTP/1.1 502") and not reached
    finally:
        server.close()
