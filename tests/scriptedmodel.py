"""A scripted OpenAI-compatible model endpoint for driving real agents offline in tests.

It answers ``POST /v1/chat/completions`` (streamed ``chat.completion.chunk`` events ending
in ``[DONE]``, or a whole completion) from a script, step by step, and records every
request so a test can assert exactly what the model saw.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tornado import httpserver, iostream, web

MODEL_NAME = "scripted"


@dataclass
class ToolCall:
    """An assistant turn that calls one tool (``name`` as the agent lists it)."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass
class Failure:
    """An answer with an HTTP error status and an OpenAI-style error body, not a reply."""

    status: int
    message: str = "scripted failure"
    code: str = "scripted"


@dataclass
class Slow:
    """A text reply streamed one word every ``delay`` seconds (for cancel and time limits)."""

    text: str
    delay: float


Reply = str | ToolCall | Failure | Slow
Step = Reply | Callable[[list[dict[str, Any]]], Reply]


def message_text(message: dict[str, Any]) -> str:
    """The text of a chat message, whether its content is a string or a list of parts."""
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


def last_tool_result(messages: list[dict[str, Any]]) -> str:
    """The text of the most recent ``role: tool`` message (what the last tool call returned)."""
    for message in reversed(messages):
        if message.get("role") == "tool":
            return message_text(message)
    raise AssertionError("no tool result in the conversation so far")


def edit_args(cell: dict[str, Any], new_source: str) -> dict[str, Any]:
    """The edit tool's arguments for a cell as the read tool returned it: its ids and hash."""
    return {
        "artifactId": cell["artifactId"],
        "cellId": cell["cellId"],
        "expectedSourceHash": cell["expectedSourceHash"],
        "newSource": new_source,
    }


def read_then_edit(read: str, edit: str, new_source: str) -> list[Step]:
    """A script: read the selected cell, edit it with the hash the read returned, then say
    whether the review opened ("Review opened: True.")."""

    def edit_the_cell_read(messages: list[dict[str, Any]]) -> ToolCall:
        return ToolCall(edit, edit_args(json.loads(last_tool_result(messages))["cell"], new_source))

    def report(messages: list[dict[str, Any]]) -> str:
        return f"Review opened: {json.loads(last_tool_result(messages))['diffReviewOpened']}."

    return [ToolCall(read), edit_the_cell_read, report]


def tool_names(request: dict[str, Any]) -> list[str]:
    """The names of the tools offered to the model in one request."""
    return [tool["function"]["name"] for tool in request.get("tools") or []]


class ScriptedModel:
    """An OpenAI-compatible ``/v1/chat/completions`` whose answers follow ``script``.

    Each request takes the next step: a reply, or a function of the request's messages
    that returns one. ``requests`` holds every request body in order. A step that raises,
    or a request after the script ran out, is answered with a short text (so the agent's
    turn ends) and recorded in ``errors``; ``check()`` raises them in the test.
    """

    def __init__(self, script: list[Step] | None = None) -> None:
        self.script: list[Step] = list(script or [])
        self.requests: list[dict[str, Any]] = []
        self.errors: list[str] = []
        #: How many streamed replies the client stopped reading before their end.
        self.hung_up = 0
        #: The ``Authorization`` header of every request, in order.
        self.authorizations: list[str | None] = []
        self.port = 0
        self._ids = itertools.count(1)
        self._server: httpserver.HTTPServer | None = None

    @property
    def url(self) -> str:
        """The base URL the agent's provider is configured with."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> None:
        """Listen on a free local port, on the running (or current) event loop."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        sock.setblocking(False)
        self.port = sock.getsockname()[1]
        app = web.Application(
            [
                (r"/v1/chat/completions", _CompletionsHandler, {"model": self}),
                # Ollama lists its models here; its OpenAI-compatible API is under /v1.
                (r"/api/tags", _TagsHandler),
            ]
        )
        self._server = httpserver.HTTPServer(app)
        self._server.add_sockets([sock])

    def stop(self) -> None:
        """Stop listening."""
        if self._server is not None:
            self._server.stop()
            self._server = None

    def check(self) -> None:
        """Raise what went wrong in the script, if anything did."""
        if self.errors:
            raise AssertionError("scripted model: " + "; ".join(self.errors))

    def answer(self, body: dict[str, Any]) -> Reply:
        """The reply to one request (takes the next step)."""
        self.requests.append(body)
        index = len(self.requests)
        if index > len(self.script):
            self.errors.append(f"request {index} came after the script's {len(self.script)} steps")
            return "(the scripted model has nothing more to say)"
        step = self.script[index - 1]
        try:
            return step(body["messages"]) if callable(step) else step
        except Exception as err:  # noqa: BLE001 (reported through check())
            self.errors.append(f"step {index} failed: {err!r}")
            return "(the scripted model's step failed)"

    def chunks(self, reply: Reply, model: str) -> list[dict[str, Any]]:
        """``chat.completion.chunk`` objects for one reply, as OpenAI streams them."""
        ident = f"chatcmpl-{next(self._ids)}"

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {
                "id": ident,
                "object": "chat.completion.chunk",
                "created": 0,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }

        if isinstance(reply, Slow):
            reply = reply.text
        assert not isinstance(reply, Failure), "a failure is answered without a stream"
        if isinstance(reply, ToolCall):
            arguments = json.dumps(reply.arguments)
            half = len(arguments) // 2
            call = {
                "index": 0,
                "id": f"call_{ident}",
                "type": "function",
                "function": {"name": reply.name, "arguments": arguments[:half]},
            }
            out = [
                chunk({"role": "assistant", "content": None, "tool_calls": [call]}),
                chunk({"tool_calls": [{"index": 0, "function": {"arguments": arguments[half:]}}]}),
                chunk({}, "tool_calls"),
            ]
        else:
            words = reply.split(" ")
            pieces = [w + " " for w in words[:-1]] + words[-1:]
            out = [chunk({"role": "assistant", "content": ""})]
            out += [chunk({"content": piece}) for piece in pieces if piece]
            out.append(chunk({}, "stop"))
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        out.append({**chunk({}), "choices": [], "usage": usage})
        return out

    def completion(self, reply: Reply, model: str) -> dict[str, Any]:
        """A whole ``chat.completion`` (for a ``stream: false`` request)."""
        message: dict[str, Any] = {"role": "assistant", "content": None}
        if isinstance(reply, Slow):
            reply = reply.text
        assert not isinstance(reply, Failure), "a failure is answered without a completion"
        if isinstance(reply, ToolCall):
            message["tool_calls"] = [
                {
                    "id": f"call_chatcmpl-{next(self._ids)}",
                    "type": "function",
                    "function": {"name": reply.name, "arguments": json.dumps(reply.arguments)},
                }
            ]
            finish = "tool_calls"
        else:
            message["content"] = reply
            finish = "stop"
        return {
            "id": f"chatcmpl-{next(self._ids)}",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }


class _CompletionsHandler(web.RequestHandler):
    """``POST /v1/chat/completions``: streamed as server-sent events, or whole."""

    def initialize(self, model: ScriptedModel) -> None:
        self.model = model

    async def post(self) -> None:
        body = json.loads(self.request.body)
        self.model.authorizations.append(self.request.headers.get("Authorization"))
        reply = self.model.answer(body)
        name = body.get("model", MODEL_NAME)
        if isinstance(reply, Failure):
            self.set_status(reply.status)
            if reply.status == 429:
                self.set_header("Retry-After", "1")
            error = {"message": reply.message, "type": "invalid_request_error", "code": reply.code}
            self.finish({"error": error})
            return
        if not body.get("stream"):
            self.finish(self.model.completion(reply, name))
            return
        self.set_header("Content-Type", "text/event-stream")
        self.set_header("Cache-Control", "no-cache")
        delay = reply.delay if isinstance(reply, Slow) else 0.0
        try:
            for chunk in self.model.chunks(reply, name):
                self.write(f"data: {json.dumps(chunk)}\n\n")
                await self.flush()
                if delay:
                    await asyncio.sleep(delay)
        except iostream.StreamClosedError:
            self.model.hung_up += 1
            return
        self.finish("data: [DONE]\n\n")


class _TagsHandler(web.RequestHandler):
    """``GET /api/tags``: the one scripted model, as a local Ollama lists its models."""

    def get(self) -> None:
        self.finish({"models": [{"name": MODEL_NAME, "model": MODEL_NAME, "size": 1}]})
