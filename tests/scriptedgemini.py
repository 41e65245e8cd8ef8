"""A scripted Gemini API for driving Gemini CLI (``gemini --acp``) offline in tests.

Gemini CLI talks to ``$GOOGLE_GEMINI_BASE_URL`` as the Gemini Developer API:
``POST /v1beta/models/<model>:streamGenerateContent?alt=sse`` (its main loop),
``:generateContent`` (JSON side calls), ``:countTokens`` and ``:embedContent``. This server
answers from a script, step by step, and records every request so a test can assert exactly
what the model saw.

Only a *main-loop* request (one that declares the agent's tools) takes a script step. Every
other request is a *side request* (the next-speaker check, the model router's classifier,
titles, summaries), recorded in ``side_requests`` and answered harmlessly: a request that
asks for JSON gets the smallest object its schema allows (the first value of every enum, so
the next-speaker check hears ``"user"`` and the turn ends), any other gets a short text.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from tornado import httpserver, web

MODEL_NAME = "gemini-2.5-flash"

#: What a side request that wants text is answered with.
SIDE_REPLY = "ok"


@dataclass
class FunctionCall:
    """A model turn that calls one function (``name`` as the request declares it)."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass
class Failure:
    """An answer with an HTTP error status and the Gemini API's error body, not a reply.

    ``status`` is the body's ``error.status`` (``UNAUTHENTICATED``, ``NOT_FOUND``,
    ``RESOURCE_EXHAUSTED`` ...), as the real API names it.
    """

    code: int
    status: str
    message: str = "scripted failure"

    def body(self) -> dict[str, Any]:
        """The error body the real API answers with."""
        return {"error": {"code": self.code, "message": self.message, "status": self.status}}


Reply = str | FunctionCall | Failure
Step = Reply | Callable[[dict[str, Any]], Reply]


# -- reading requests -----------------------------------------------------------------------


def parts(request: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every ``(role, part)`` of the request's ``contents``, oldest first."""
    for content in request.get("contents") or []:
        for part in content.get("parts") or []:
            yield content.get("role", ""), part


def function_responses(request: dict[str, Any]) -> list[dict[str, Any]]:
    """Every ``functionResponse`` of the request, oldest first."""
    return [part["functionResponse"] for _, part in parts(request) if "functionResponse" in part]


def response_text(function_response: dict[str, Any]) -> str:
    """The text of one ``functionResponse``: its ``output`` or ``error``, else its JSON."""
    response = function_response.get("response")
    if isinstance(response, dict):
        for key in ("output", "error", "content"):
            value = response.get(key)
            if isinstance(value, str):
                return value
    return json.dumps(response)


def last_function_response(request: dict[str, Any]) -> str:
    """The text of the most recent ``functionResponse`` (what the last call returned)."""
    responses = function_responses(request)
    if not responses:
        raise AssertionError("no function response in the conversation so far")
    return response_text(responses[-1])


def user_text(request: dict[str, Any]) -> str:
    """All text of the request's ``user`` turns, joined."""
    return "\n".join(p.get("text", "") for role, p in parts(request) if role == "user")


def system_text(request: dict[str, Any]) -> str:
    """The request's system instruction as one string."""
    instruction = request.get("systemInstruction") or {}
    if isinstance(instruction, str):
        return instruction
    return "".join(p.get("text", "") for p in instruction.get("parts") or [])


def tool_names(request: dict[str, Any]) -> list[str]:
    """The names of the functions declared to the model in one request."""
    return [
        declaration.get("name", "")
        for tool in request.get("tools") or []
        for declaration in tool.get("functionDeclarations") or []
    ]


def is_main_loop(request: dict[str, Any]) -> bool:
    """Whether ``request`` comes from the agent's main loop (it declares functions)."""
    return bool(tool_names(request))


def sample_of(schema: Any) -> Any:
    """The smallest value ``schema`` (JSON Schema or Gemini's ``Schema``) accepts."""
    if not isinstance(schema, dict):
        return {}
    if schema.get("enum"):
        return schema["enum"][0]
    kind = str(schema.get("type", "object")).lower()
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties") or {}
        required = schema.get("required") or list(properties)
        return {name: sample_of(properties.get(name, {})) for name in required}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return 0
    if kind == "boolean":
        return False
    return SIDE_REPLY


# -- the server -----------------------------------------------------------------------------


class ScriptedGemini:
    """A Gemini API whose main-loop answers follow ``script``.

    Each main-loop request takes the next step: a reply, or a function of the whole request
    body that returns one. ``requests`` holds every main-loop request body in order,
    ``side_requests`` every other ``generateContent`` body, ``log`` every HTTP request. A
    step that raises, or a main-loop request after the script ran out, is answered with a
    short text and recorded in ``errors``; ``check()`` raises them in the test.

    ``start()`` listens on the current event loop; ``start_in_thread()`` on a loop of its
    own in a daemon thread (for synchronous tests). ``stop()`` ends either.
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
        #: Every request in arrival order as ``(method, uri, body or None)``.
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
        """The base URL for ``GOOGLE_GEMINI_BASE_URL`` (the client adds ``/v1beta/...``)."""
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
                (r"/[^/]+/models/([^/:]+):(\w+)", _ModelMethodHandler, {"model": self}),
                (r"/[^/]+/models(?:/([^/:]+))?", _ModelsHandler, {"model": self}),
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

        self._thread = threading.Thread(target=run, name="scripted-gemini", daemon=True)
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

    def __enter__(self) -> ScriptedGemini:
        self.start_in_thread()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def check(self) -> None:
        """Raise what went wrong in the script, if anything did."""
        if self.errors:
            raise AssertionError("scripted gemini: " + "; ".join(self.errors))

    @property
    def remaining(self) -> int:
        """How many script steps no request has taken yet."""
        return max(0, len(self.script) - len(self.requests))

    def answer(self, body: dict[str, Any]) -> Reply | dict[str, Any]:
        """The reply to one generate request (a main-loop one takes the next step).

        A side request that asks for JSON gets the object itself (a dict).
        """
        if not self.classify(body):
            self.side_requests.append(body)
            config = body.get("generationConfig") or {}
            if config.get("responseMimeType") == "application/json":
                schema = config.get("responseJsonSchema") or config.get("responseSchema") or {}
                return sample_of(schema)
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

    def response(self, reply: Reply | dict[str, Any], model: str) -> dict[str, Any]:
        """A whole ``GenerateContentResponse`` for one reply."""
        assert not isinstance(reply, Failure), "a failure is answered without a response"
        if isinstance(reply, FunctionCall):
            call = {"name": reply.name, "args": reply.args, "id": f"call-{next(self._ids)}"}
            part: dict[str, Any] = {"functionCall": call}
        elif isinstance(reply, dict):
            part = {"text": json.dumps(reply)}
        else:
            part = {"text": reply}
        return {
            "candidates": [
                {
                    "content": {"role": "model", "parts": [part]},
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": {
                "promptTokenCount": 10,
                "candidatesTokenCount": 5,
                "totalTokenCount": 15,
            },
            "modelVersion": model,
            "responseId": f"resp-{next(self._ids)}",
        }

    def chunks(self, reply: Reply | dict[str, Any], model: str) -> list[dict[str, Any]]:
        """Streamed ``GenerateContentResponse`` chunks for one reply (text in two halves)."""
        whole = self.response(reply, model)
        part = whole["candidates"][0]["content"]["parts"][0]
        if "text" not in part or len(part["text"]) < 2:
            return [whole]
        half = len(part["text"]) // 2
        first = json.loads(json.dumps(whole))
        first["candidates"][0]["content"]["parts"][0]["text"] = part["text"][:half]
        del first["candidates"][0]["finishReason"]
        first.pop("usageMetadata")
        whole["candidates"][0]["content"]["parts"][0]["text"] = part["text"][half:]
        return [first, whole]


class _Handler(web.RequestHandler):
    def initialize(self, model: ScriptedGemini) -> None:
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


class _ModelMethodHandler(_Handler):
    """``POST /<version>/models/<model>:<method>``."""

    async def post(self, model: str, method: str) -> None:
        body = self._body() or {}
        if method == "countTokens":
            self.finish({"totalTokens": max(1, len(self.request.body) // 4)})
            return
        if method in ("embedContent", "batchEmbedContents"):
            vector = {"values": [0.0] * 8}
            if method == "embedContent":
                self.finish({"embedding": vector})
            else:
                self.finish({"embeddings": [vector for _ in body.get("requests") or []]})
            return
        if method not in ("generateContent", "streamGenerateContent"):
            self.set_status(404)
            self.finish({"error": {"code": 404, "message": f"unknown method {method}"}})
            return
        reply = self.model.answer(body)
        if isinstance(reply, Failure):
            self.set_status(reply.code)
            self.finish(reply.body())
            return
        if method == "generateContent":
            self.finish(self.model.response(reply, model))
            return
        self.set_header("Content-Type", "text/event-stream")
        self.set_header("Cache-Control", "no-cache")
        for chunk in self.model.chunks(reply, model):
            self.write(f"data: {json.dumps(chunk)}\r\n\r\n")
            await self.flush()
        self.finish()


class _ModelsHandler(_Handler):
    """``GET /<version>/models`` and ``GET /<version>/models/<model>``."""

    def get(self, model: str | None = None) -> None:
        entry = {
            "name": f"models/{model or MODEL_NAME}",
            "displayName": "Scripted model",
            "inputTokenLimit": 1048576,
            "outputTokenLimit": 65536,
            "supportedGenerationMethods": ["generateContent", "countTokens"],
        }
        self.finish(entry if model else {"models": [entry]})


class _FallbackHandler(_Handler):
    """Anything else: an empty JSON object (recorded in ``log``)."""

    def get(self) -> None:
        self.finish({})

    def post(self) -> None:
        self.finish({})
