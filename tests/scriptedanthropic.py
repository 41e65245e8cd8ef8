"""A scripted Anthropic Messages API for driving Claude Code's ACP adapter offline in tests.

It answers ``POST /v1/messages`` (server-sent events as the Anthropic API streams them, or a
whole message), ``POST /v1/messages/count_tokens`` and ``GET /v1/models`` from a script, step
by step, and records every request so a test can assert exactly what the model saw.

Claude Code sends more than its main loop to the same endpoint: session titles, quota probes,
permission classifiers, summaries. Only a *main-loop* request (one that offers the agent's own
tools) takes a script step; every other request is a *side request*, answered with a short
harmless text and recorded in ``side_requests``. Point the agent at ``ScriptedAnthropic.url``
with ``ANTHROPIC_BASE_URL``.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tornado import httpserver, web

MODEL_NAME = "claude-sonnet-4-5"

#: Tool names that only the agent's main loop offers the model.
MAIN_LOOP_TOOLS = frozenset({"Bash", "Read", "Write", "Edit", "Glob", "Grep", "NotebookEdit"})

#: How the last user message of a side request that carries the main loop's tools begins.
SIDE_MARKERS = ("[SUGGESTION MODE",)

#: What a side request (title, classifier, quota probe) is answered with.
SIDE_REPLY = "ok"


@dataclass
class ToolUse:
    """An assistant turn that calls one tool (``name`` as the request's ``tools`` list it)."""

    name: str
    input: dict[str, Any] = field(default_factory=dict)


@dataclass
class Failure:
    """An answer with an HTTP error status and the Messages API's error body, not a reply.

    ``type`` is the body's ``error.type`` (``authentication_error``, ``not_found_error``,
    ``rate_limit_error`` ...), as the real API names it.
    """

    status: int
    type: str
    message: str = "scripted failure"

    def body(self) -> dict[str, Any]:
        """The error body the real API answers with."""
        return {"type": "error", "error": {"type": self.type, "message": self.message}}


Reply = str | ToolUse | Failure
Step = Reply | Callable[[dict[str, Any]], Reply]


# -- reading requests -----------------------------------------------------------------------


def block_text(content: Any) -> str:
    """The text of a message's (or a tool result's) content: a string or a list of blocks."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(block.get("text", ""))
        elif block.get("type") == "tool_result":
            parts.append(block_text(block.get("content")))
    return "".join(parts)


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    """Every ``tool_result`` block of the request's messages, oldest first."""
    found = []
    for message in request.get("messages") or []:
        content = message.get("content")
        if isinstance(content, list):
            found += [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
    return found


def last_tool_result(request: dict[str, Any]) -> str:
    """The text of the most recent ``tool_result`` (what the last tool call returned)."""
    results = tool_results(request)
    if not results:
        raise AssertionError("no tool result in the conversation so far")
    return block_text(results[-1].get("content"))


def last_tool_result_is_error(request: dict[str, Any]) -> bool:
    """Whether the most recent ``tool_result`` is flagged ``is_error``."""
    results = tool_results(request)
    if not results:
        raise AssertionError("no tool result in the conversation so far")
    return bool(results[-1].get("is_error"))


def user_text(request: dict[str, Any]) -> str:
    """All text the user role sent in the request (prompts, context, reminders), joined."""
    return "\n".join(
        block_text(m.get("content"))
        for m in request.get("messages") or []
        if m.get("role") == "user"
    )


def system_text(request: dict[str, Any]) -> str:
    """The request's system prompt as one string."""
    return block_text(request.get("system"))


def tool_names(request: dict[str, Any]) -> list[str]:
    """The names of the tools offered to the model in one request."""
    return [tool.get("name", "") for tool in request.get("tools") or []]


def last_user_text(request: dict[str, Any]) -> str:
    """The text of the request's last ``user`` message."""
    for message in reversed(request.get("messages") or []):
        if message.get("role") == "user":
            return block_text(message.get("content"))
    return ""


def is_main_loop(request: dict[str, Any]) -> bool:
    """Whether ``request`` comes from the agent's main loop.

    A main-loop request offers the agent's own tools. Claude Code also sends the main loop's
    tools with its prompt-suggestion request (the last user message starts with one of
    ``SIDE_MARKERS``): that one is a side request.
    """
    names = set(tool_names(request))
    if not (names & MAIN_LOOP_TOOLS or any(n.startswith("mcp__") for n in names)):
        return False
    return not last_user_text(request).lstrip().startswith(SIDE_MARKERS)


# -- the server -----------------------------------------------------------------------------


class ScriptedAnthropic:
    """An Anthropic Messages API whose main-loop answers follow ``script``.

    Each main-loop request takes the next step: a reply, or a function of the whole request
    body that returns one. ``requests`` holds every main-loop request body in order,
    ``side_requests`` every other one. A step that raises, or a main-loop request after the
    script ran out, is answered with a short text (so the agent's turn ends) and recorded in
    ``errors``; ``check()`` raises them in the test.

    ``start()`` listens on the current event loop (call it inside a running loop, or from a
    fixture driven by ``jp_asyncio_loop``); ``start_in_thread()`` runs its own loop in a
    daemon thread, for synchronous tests and scripts. ``stop()`` ends either.
    """

    def __init__(
        self,
        script: list[Step] | None = None,
        *,
        classify: Callable[[dict[str, Any]], bool] = is_main_loop,
    ) -> None:
        self.script: list[Step] = list(script or [])
        self.requests: list[dict[str, Any]] = []
        self.side_requests: list[dict[str, Any]] = []
        #: Every request in arrival order as ``(method, path, body or None)``.
        self.log: list[tuple[str, str, Any]] = []
        self.errors: list[str] = []
        self.port = 0
        self.classify = classify
        self._ids = itertools.count(1)
        self._server: httpserver.HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def url(self) -> str:
        """The base URL for ``ANTHROPIC_BASE_URL`` (no ``/v1``: the client adds it)."""
        return f"http://127.0.0.1:{self.port}"

    def _listen(self) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        sock.setblocking(False)
        self.port = sock.getsockname()[1]
        app = web.Application(
            [
                (r"/v1/messages", _MessagesHandler, {"model": self}),
                (r"/v1/messages/count_tokens", _CountTokensHandler, {"model": self}),
                (r"/v1/models(?:/(.*))?", _ModelsHandler, {"model": self}),
                (r"/.*", _FallbackHandler, {"model": self}),
            ]
        )
        self._server = httpserver.HTTPServer(app)
        self._server.add_sockets([sock])

    def start(self) -> None:
        """Listen on a free local port, on the running (or current) event loop."""
        self._listen()

    def start_in_thread(self) -> None:
        """Listen on a free local port from a loop of its own in a daemon thread."""
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            self._loop = loop
            self._listen()
            ready.set()
            loop.run_forever()
            loop.close()

        self._thread = threading.Thread(target=run, name="scripted-anthropic", daemon=True)
        self._thread.start()
        ready.wait(10)

    def stop(self) -> None:
        """Stop listening (and end the thread's loop, if there is one)."""
        if self._loop is not None:
            loop, self._loop = self._loop, None
            server, self._server = self._server, None

            def close() -> None:
                if server is not None:
                    server.stop()
                loop.stop()

            loop.call_soon_threadsafe(close)
            if self._thread is not None:
                self._thread.join(5)
            return
        if self._server is not None:
            self._server.stop()
            self._server = None

    def __enter__(self) -> ScriptedAnthropic:
        self.start_in_thread()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def check(self) -> None:
        """Raise what went wrong in the script, if anything did."""
        if self.errors:
            raise AssertionError("scripted anthropic: " + "; ".join(self.errors))

    @property
    def remaining(self) -> int:
        """How many script steps no request has taken yet."""
        return max(0, len(self.script) - len(self.requests))

    def answer(self, body: dict[str, Any]) -> Reply:
        """The reply to one ``/v1/messages`` request (a main-loop one takes the next step)."""
        if not self.classify(body):
            self.side_requests.append(body)
            return SIDE_REPLY
        self.requests.append(body)
        index = len(self.requests)
        if index > len(self.script):
            self.errors.append(f"request {index} came after the script's {len(self.script)} steps")
            return "(the scripted model has nothing more to say)"
        step = self.script[index - 1]
        try:
            return step(body) if callable(step) else step
        except Exception as err:  # noqa: BLE001 (reported through check())
            self.errors.append(f"step {index} failed: {err!r}")
            return "(the scripted model's step failed)"

    def _content(self, reply: Reply) -> tuple[list[dict[str, Any]], str]:
        assert not isinstance(reply, Failure), "a failure is answered without a message"
        if isinstance(reply, ToolUse):
            block = {
                "type": "tool_use",
                "id": f"toolu_{next(self._ids):024d}",
                "name": reply.name,
                "input": reply.input,
            }
            return [block], "tool_use"
        return [{"type": "text", "text": reply}], "end_turn"

    def message(self, reply: Reply, model: str) -> dict[str, Any]:
        """A whole Messages API response (for a request without ``stream: true``)."""
        content, stop = self._content(reply)
        return {
            "id": f"msg_{next(self._ids):024d}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": _usage(),
        }

    def events(self, reply: Reply, model: str) -> list[tuple[str, dict[str, Any]]]:
        """``(event, data)`` pairs for one reply, as the Messages API streams them."""
        content, stop = self._content(reply)
        start = {
            "type": "message_start",
            "message": {
                "id": f"msg_{next(self._ids):024d}",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {**_usage(), "output_tokens": 1},
            },
        }
        out: list[tuple[str, dict[str, Any]]] = [("message_start", start)]
        for index, block in enumerate(content):
            if block["type"] == "tool_use":
                opening = {**block, "input": {}}
                arguments = json.dumps(block["input"])
                half = len(arguments) // 2
                pieces = [arguments[:half], arguments[half:]]
                deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces]
            else:
                opening = {"type": "text", "text": ""}
                words = block["text"].split(" ")
                pieces = [w + " " for w in words[:-1]] + words[-1:]
                deltas = [{"type": "text_delta", "text": p} for p in pieces if p]
            out.append(
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": opening},
                )
            )
            out += [
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
                for delta in deltas
            ]
            out.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        out.append(
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": 5},
                },
            )
        )
        out.append(("message_stop", {"type": "message_stop"}))
        return out


def _usage() -> dict[str, Any]:
    return {
        "input_tokens": 10,
        "output_tokens": 5,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


class _Handler(web.RequestHandler):
    def initialize(self, model: ScriptedAnthropic) -> None:
        self.model = model

    def check_xsrf_cookie(self) -> None:
        """No cookies here."""

    def _body(self) -> Any:
        try:
            return json.loads(self.request.body) if self.request.body else None
        except ValueError:
            return self.request.body.decode("utf-8", "replace")

    def prepare(self) -> None:
        self.model.log.append((self.request.method or "", self.request.uri or "", self._body()))
        self.set_header("request-id", f"req_{next(self.model._ids):024d}")


class _MessagesHandler(_Handler):
    """``POST /v1/messages``: streamed as server-sent events, or whole."""

    async def post(self) -> None:
        body = json.loads(self.request.body)
        reply = self.model.answer(body)
        name = body.get("model", MODEL_NAME)
        if isinstance(reply, Failure):
            self.set_status(reply.status)
            self.finish(reply.body())
            return
        if not body.get("stream"):
            self.finish(self.model.message(reply, name))
            return
        self.set_header("Content-Type", "text/event-stream")
        self.set_header("Cache-Control", "no-cache")
        for event, data in self.model.events(reply, name):
            self.write(f"event: {event}\ndata: {json.dumps(data)}\n\n")
            await self.flush()
        self.finish()


class _CountTokensHandler(_Handler):
    """``POST /v1/messages/count_tokens``: a rough count (four characters a token)."""

    def post(self) -> None:
        self.finish({"input_tokens": max(1, len(self.request.body) // 4)})


class _ModelsHandler(_Handler):
    """``GET /v1/models`` and ``GET /v1/models/<id>``: one model, the one asked for."""

    def get(self, ident: str | None = None) -> None:
        entry = {
            "type": "model",
            "id": ident or MODEL_NAME,
            "display_name": "Scripted model",
            "created_at": "2025-01-01T00:00:00Z",
        }
        if ident:
            self.finish(entry)
            return
        self.finish({"data": [entry], "has_more": False, "first_id": entry["id"], "last_id": None})


class _FallbackHandler(_Handler):
    """Anything else: an empty JSON object (recorded in ``log``)."""

    def get(self) -> None:
        self.finish({})

    def post(self) -> None:
        self.finish({})
