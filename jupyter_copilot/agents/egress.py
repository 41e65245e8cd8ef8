"""The only network a sandboxed agent has: what it needs, forwarded, and nothing else.

Inside the sandbox the agent has a loopback of its own and nothing more; ``netbridge.py``
carries connections to ports on it to Unix sockets that this module serves, one folder of
sockets per agent process (docs/security.md, "The sandbox"):

- ``mcp``: our MCP endpoint, and only it. The requests go to the Jupyter server's own
  application in this process, without a TCP hop; any other path is answered 404, so the
  agent reaches neither the rest of Jupyter's API nor the kernels.
- ``connect``: an HTTPS proxy (``CONNECT`` only) to the hosts the agent's profile and the
  administrator allow (``CopilotApp.agent_network_hosts``), and the hosts of ``https://``
  URLs in the agent's configured environment (``ANTHROPIC_BASE_URL`` and the like). A name
  that resolves to a loopback or unspecified address is refused unless it is one literally.
- ``tcp-<port>``: a plain ``http://`` URL in the agent's configured environment (a local
  model server, a team's endpoint), forwarded to exactly that host and port. A loopback URL
  keeps its port, so the URL the agent was given still works; another host gets a port on
  the agent's loopback and its URL in the environment is rewritten to it.

:func:`plan` is pure; :class:`Egress` serves a plan.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import os
import shutil
import socket
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from tornado import httputil
from tornado.httpserver import HTTPServer
from tornado.netutil import bind_unix_socket

#: Ports the agent's loopback offers our endpoint and the proxy on (the first free ones).
FIRST_PORT = 39100
#: Variables the proxy is named in; clients read one case or the other.
PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy")
NO_PROXY = "localhost,127.0.0.1,::1"
#: The longest ``CONNECT`` request head read.
_HEAD_BYTES = 8192
_CHUNK = 64 * 1024


@dataclass(frozen=True)
class Forward:
    """One port on the agent's loopback and what it reaches."""

    port: int
    #: ``mcp``, ``connect`` or ``tcp``.
    kind: str
    #: For ``tcp``: the host and port outside.
    target: tuple[str, int] | None = None

    @property
    def name(self) -> str:
        """The socket's file name."""
        return self.kind if self.kind != "tcp" else f"tcp-{self.port}"


@dataclass(frozen=True)
class Plan:
    """What one agent may reach, and how its environment names it."""

    forwards: tuple[Forward, ...]
    #: ``(host, port)`` pairs the proxy lets through.
    hosts: frozenset[tuple[str, int]]
    #: Variables to set in the agent's environment.
    env: Mapping[str, str] = field(default_factory=dict)

    @property
    def mcp_port(self) -> int | None:
        """The port of our endpoint on the agent's loopback, if it has one."""
        return next((f.port for f in self.forwards if f.kind == "mcp"), None)


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine's loopback."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_host(spec: str) -> tuple[str, int] | None:
    """``host`` or ``host:port`` (port 443 by default) as a pair; None when malformed."""
    spec = spec.strip().lower()
    if not spec or "/" in spec or "@" in spec:
        return None
    host, port = spec, 443
    if spec.startswith("["):
        end = spec.find("]")
        if end < 0:
            return None
        host, rest = spec[1:end], spec[end + 1 :]
        if rest:
            if not rest.startswith(":") or not rest[1:].isdigit():
                return None
            port = int(rest[1:])
    elif spec.count(":") == 1:
        host, _, number = spec.partition(":")
        if not number.isdigit():
            return None
        port = int(number)
    if not host or not 0 < port < 65536:
        return None
    return host, port


def plan(env: Mapping[str, str], hosts: Iterable[str], mcp: bool) -> Plan:
    """The network of an agent with environment ``env`` that may reach ``hosts``."""
    allowed = {pair for spec in hosts if (pair := parse_host(spec)) is not None}
    rewritten: dict[str, str] = {}
    tcp: dict[int, tuple[str, int]] = {}
    others: list[tuple[str, tuple[str, int]]] = []
    for name, value in env.items():
        if name in PROXY_VARIABLES or not value.startswith(("http://", "https://")):
            continue
        try:
            url = urlsplit(value)
            port = url.port or (443 if url.scheme == "https" else 80)
        except ValueError:
            continue
        host = url.hostname
        if not host:
            continue
        if is_loopback(host):
            tcp[port] = (host, port)
        elif url.scheme == "https":
            allowed.add((host.lower(), port))
        else:
            others.append((name, (host, port)))
    used = set(tcp)
    free = (p for p in range(FIRST_PORT, 65536) if p not in used)
    forwards = [Forward(p, "tcp", target) for p, target in sorted(tcp.items())]
    for name, target in others:
        inner = next((f.port for f in forwards if f.target == target), None)
        if inner is None:
            inner = next(free)
            forwards.append(Forward(inner, "tcp", target))
        url = urlsplit(env[name])
        rewritten[name] = urlunsplit(url._replace(netloc=f"127.0.0.1:{inner}"))
    if mcp:
        forwards.append(Forward(next(free), "mcp"))
    if allowed:
        proxy = Forward(next(free), "connect")
        forwards.append(proxy)
        for variable in PROXY_VARIABLES:
            rewritten[variable] = f"http://127.0.0.1:{proxy.port}"
    if forwards:
        rewritten["NO_PROXY"] = rewritten["no_proxy"] = NO_PROXY
    return Plan(tuple(forwards), frozenset(allowed), rewritten)


def inner_url(outer: str, port: int) -> str:
    """``outer`` as the agent reaches it: on its own loopback, at ``port``, over HTTP."""
    url = urlsplit(outer)
    return urlunsplit(url._replace(scheme="http", netloc=f"127.0.0.1:{port}"))


async def _splice(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(_CHUNK):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (OSError, RuntimeError):
        # One side went away: the copy ends, and _join closes both.
        return


async def _join(
    a: tuple[asyncio.StreamReader, asyncio.StreamWriter],
    b: tuple[asyncio.StreamReader, asyncio.StreamWriter],
) -> None:
    try:
        await asyncio.gather(_splice(a[0], b[1]), _splice(b[0], a[1]))
    finally:
        for _, writer in (a, b):
            writer.close()


class _OnlyPath(httputil.HTTPServerConnectionDelegate):
    """Hands requests for one path to an application, and answers 404 to every other."""

    def __init__(self, app: httputil.HTTPServerConnectionDelegate, path: str) -> None:
        self.app = app
        self.path = path

    def start_request(
        self, server_conn: object, request_conn: httputil.HTTPConnection
    ) -> httputil.HTTPMessageDelegate:
        return _PathGate(self.app.start_request(server_conn, request_conn), request_conn, self)

    def on_close(self, server_conn: object) -> None:
        self.app.on_close(server_conn)


class _PathGate(httputil.HTTPMessageDelegate):
    """One request: refused with 404 at its first line unless it is for the one path."""

    def __init__(
        self,
        inner: httputil.HTTPMessageDelegate,
        conn: httputil.HTTPConnection,
        gate: _OnlyPath,
    ) -> None:
        self.inner = inner
        self.conn = conn
        self.gate = gate
        self.refused = False

    def headers_received(
        self,
        start_line: httputil.RequestStartLine | httputil.ResponseStartLine,
        headers: httputil.HTTPHeaders,
    ) -> Any:
        assert isinstance(start_line, httputil.RequestStartLine)
        if start_line.path.split("?", 1)[0] != self.gate.path:
            self.refused = True
            self.conn.write_headers(
                httputil.ResponseStartLine("HTTP/1.1", 404, "Not Found"),
                httputil.HTTPHeaders({"Content-Length": "0", "Connection": "close"}),
            )
            self.conn.finish()
            return None
        return self.inner.headers_received(start_line, headers)

    def data_received(self, chunk: bytes) -> Any:
        return None if self.refused else self.inner.data_received(chunk)

    def finish(self) -> None:
        if not self.refused:
            self.inner.finish()

    def on_connection_close(self) -> None:
        if not self.refused:
            self.inner.on_connection_close()


class Egress:
    """The sockets of one agent process, served while it runs."""

    def __init__(
        self,
        the_plan: Plan,
        app: Callable[[], httputil.HTTPServerConnectionDelegate] | None,
        mcp_path: str,
        log: logging.Logger,
    ) -> None:
        self.plan = the_plan
        self._app = app
        self._mcp_path = mcp_path
        self.log = log
        self.folder = tempfile.mkdtemp(prefix="jupyter-copilot-net-")
        self._servers: list[asyncio.AbstractServer] = []
        self._http: HTTPServer | None = None
        self._connections: set[asyncio.Task[None]] = set()

    def bridge_args(self, inside: str) -> list[str]:
        """``netbridge.py``'s options, with the socket folder at ``inside``."""
        args: list[str] = []
        for forward in self.plan.forwards:
            args += ["--forward", f"{forward.port}={os.path.join(inside, forward.name)}"]
        return args

    def mcp_url(self, outer: str) -> str:
        """Our endpoint's URL as the agent reaches it."""
        port = self.plan.mcp_port
        return inner_url(outer, port) if port is not None else outer

    async def open(self) -> None:
        """Serve every forward of the plan."""
        for forward in self.plan.forwards:
            path = os.path.join(self.folder, forward.name)
            if forward.kind == "mcp":
                if self._app is None:
                    continue
                self._http = HTTPServer(_OnlyPath(self._app(), self._mcp_path))
                self._http.add_socket(bind_unix_socket(path, mode=0o600))
            elif forward.kind == "connect":
                self._servers.append(await asyncio.start_unix_server(self._connect, path=path))
            else:
                assert forward.target is not None
                self._servers.append(
                    await asyncio.start_unix_server(self._forwarder(forward.target), path=path)
                )

    def _forwarder(
        self, target: tuple[str, int]
    ) -> Callable[[asyncio.StreamReader, asyncio.StreamWriter], None]:
        def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self._track(self._tcp(reader, writer, target))

        return accept

    def _track(self, coroutine: Any) -> None:
        task = asyncio.ensure_future(coroutine)
        self._connections.add(task)
        task.add_done_callback(self._connections.discard)

    async def _tcp(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, target: tuple[str, int]
    ) -> None:
        try:
            upstream = await asyncio.wait_for(asyncio.open_connection(*target), 10)
        except (OSError, asyncio.TimeoutError):
            writer.close()
            return
        await _join((reader, writer), upstream)

    def _connect(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._track(self._proxy(reader, writer))

    async def _proxy(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One ``CONNECT host:port``: through when allowed, else a plain refusal."""

        def answer(status: str) -> None:
            writer.write(f"HTTP/1.1 {status}\r\nContent-Length: 0\r\n\r\n".encode("ascii"))
            writer.close()

        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, asyncio.TimeoutError):
            answer("400 Bad Request")
            return
        except OSError:
            writer.close()
            return
        words = head.split(b"\r\n", 1)[0].decode("latin-1").split()
        if len(words) != 3 or words[0] != "CONNECT":
            answer("405 Method Not Allowed")
            return
        target = parse_host(words[1])
        if target is None or target not in self.plan.hosts:
            self.log.debug("Copilot agent network: a connection to an unlisted host refused")
            answer("403 Forbidden")
            return
        try:
            upstream = await asyncio.wait_for(self._open(*target), 15)
        except (OSError, asyncio.TimeoutError):
            answer("502 Bad Gateway")
            return
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await _join((reader, writer), upstream)

    async def _open(
        self, host: str, port: int
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """Connect to an allowed host, never through a name that points at this machine."""
        loop = asyncio.get_running_loop()
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        literal = is_loopback(host)
        for family, _, proto, _, address in infos:
            ip = ipaddress.ip_address(address[0])
            if (ip.is_loopback or ip.is_unspecified) and not literal:
                continue
            return await asyncio.open_connection(
                host=str(address[0]), port=int(address[1]), family=family, proto=proto
            )
        raise PermissionError(host)

    async def close(self) -> None:
        """Stop serving and end every connection; remove the sockets."""
        if self._http is not None:
            self._http.stop()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._http.close_all_connections(), 2)
        for server in self._servers:
            server.close()
        for task in list(self._connections):
            task.cancel()
        self._servers.clear()
        shutil.rmtree(self.folder, ignore_errors=True)


@dataclass
class Network:
    """What the server gives every sandboxed agent's network."""

    #: The Jupyter server's web application, where our MCP endpoint lives.
    app: Callable[[], httputil.HTTPServerConnectionDelegate] | None
    #: The endpoint's path, with the server's base URL.
    mcp_path: str
    #: Hosts the administrator allows every agent (``CopilotApp.agent_network_hosts``).
    hosts: Callable[[], Iterable[str]]
    log: logging.Logger

    async def open(self, env: Mapping[str, str], profile_hosts: Iterable[str]) -> Egress:
        """Serve the network of one agent process."""
        egress = Egress(
            plan(env, [*profile_hosts, *self.hosts()], self.app is not None),
            self.app,
            self.mcp_path,
            self.log,
        )
        try:
            await egress.open()
        except BaseException:
            await egress.close()
            raise
        return egress
