"""The page bridge, protocol v1 (docs/protocol.md section 9), without tornado.

A :class:`PageSession` is the server's side of one JupyterLab page. It parses what the page
sends, keeps the page's latest semantic state, and sends requests with deadlines. The
WebSocket handler only moves text in and out; everything testable lives here.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from ..protocol import jsontext, vocabulary
from ..protocol.refusals import Refusal
from ..protocol.registry import first_error

#: The bridge protocol version (docs/protocol.md section 9).
PROTOCOL = vocabulary.PROTOCOL

#: What the page may answer for a request (vocabulary ``pageCodes``, docs/protocol.md
#: section 9); any other code is not the page's to say and reaches the caller as
#: ``page-error``.
PAGE_CODES = vocabulary.PAGE_CODES


def server_message_problem(message: Any) -> str | None:
    """Why a message the server sends breaks the bridge-server-message schema, or None.

    The server's messages are checked against the schema in tests (docs/protocol.md
    section 9); the page's are checked on arrival by :meth:`PageSession.receive`.
    """
    kind = message.get("type") if isinstance(message, dict) else None
    if kind not in vocabulary.SERVER_MESSAGE_TYPES:
        return f"{kind!r} is not a server message type"
    return first_error("bridge-server-message", message, kind)


@dataclass
class RefreshCounts:
    """How many ``state`` messages a page sent, and how many changes they folded together."""

    received: int = 0
    deduplicated: int = 0
    coalesced: int = 0


class PageSession:
    """The server's side of one page's bridge connection.

    ``send`` writes one message to the page; ``on_hello`` is called once the page has said
    who it is (the dispatcher registers it then), ``on_state`` after each accepted or
    de-duplicated ``state`` message.
    """

    def __init__(
        self,
        send: Callable[[dict[str, Any]], None],
        welcome: Callable[[], dict[str, Any]],
        on_hello: Callable[[PageSession], None],
        on_state: Callable[[PageSession, bool], None],
        on_keep: Callable[[PageSession, str], dict[str, Any]] | None = None,
        on_review: Callable[[PageSession, str, str], None] | None = None,
    ) -> None:
        #: Opaque server-made id for events and logs; the page's own ``pageId`` is its choice.
        self.ref = uuid.uuid4().hex[:12]
        self.page_id: str | None = None
        self.url = ""
        self.state: dict[str, Any] | None = None
        self.fingerprint: str | None = None
        self.focused_at: float | None = None
        self.counts = RefreshCounts()
        self.closed = False
        self._send = send
        self._welcome = welcome
        self._hello_listener = on_hello
        self._state_listener = on_state
        self._keep_judge = on_keep
        self._review_listener = on_review
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}

    # -- incoming ---------------------------------------------------------------------------

    def receive(self, text: str | bytes) -> None:
        """Handle one message from the page; a bad one is answered and otherwise ignored."""
        try:
            message = jsontext.parse(text)
        except jsontext.BadJson as e:
            self._reject(str(e))
            return
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            self._reject("A message must be a JSON object with a string 'type'.")
            return
        kind = message["type"]
        handler = {
            "hello": self._on_hello,
            "state": self._on_state,
            "result": self._on_result,
            "keep": self._on_keep,
            "review": self._on_review,
        }.get(kind)
        if handler is None:
            self._reject(f"Unknown message type {kind[:40]!r}.")
            return
        problem = first_error("bridge-page-message", message, kind)
        if problem is not None:
            self._reject(f"Malformed {kind} message: {problem}")
            return
        if kind != "hello" and self.page_id is None:
            self._reject("Say hello before anything else.")
            return
        handler(message)

    def _on_hello(self, message: dict[str, Any]) -> None:
        if self.page_id is not None:
            self._reject("This page has already said hello.")
            return
        self.page_id = message["pageId"]
        self.url = message["url"]
        self._hello_listener(self)
        if not self.closed:
            self.send(
                {"type": "welcome", "protocol": PROTOCOL, "pageId": self.page_id, **self._welcome()}
            )

    def _on_state(self, message: dict[str, Any]) -> None:
        self.counts.received += 1
        self.counts.coalesced += message.get("coalesced", 0)
        if message["fingerprint"] == self.fingerprint:
            self.counts.deduplicated += 1
            self._state_listener(self, False)
            return
        self.fingerprint = message["fingerprint"]
        self.state = message["state"]
        self.url = self.state["url"]
        if self.state["focused"]:
            self.focused_at = time.monotonic()
        self._state_listener(self, True)

    def _on_result(self, message: dict[str, Any]) -> None:
        future = self._pending.pop(message["requestId"], None)
        if future is None or future.done():
            # Late answers after a deadline are expected; there is nobody left to tell.
            return
        if message["ok"]:
            future.set_result(message["data"])
            return
        error = message["error"]
        code = error["code"] if error["code"] in PAGE_CODES else "page-error"
        future.set_exception(Refusal(code, error["message"][:500]))

    def _on_keep(self, message: dict[str, Any]) -> None:
        call_id = message["callId"]
        if self._keep_judge is None:
            verdict = {"type": "keep-verdict", "callId": call_id, "ok": False, "code": "aborted"}
        else:
            verdict = self._keep_judge(self, call_id)
        self.send(verdict)

    def _on_review(self, message: dict[str, Any]) -> None:
        if self._review_listener is not None:
            self._review_listener(self, message["callId"], message["decision"])

    def _reject(self, why: str) -> None:
        self.send({"type": "error", "code": "invalid-message", "message": why})

    # -- outgoing ---------------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        """Send one message unless the page has gone."""
        if not self.closed:
            self._send(message)

    async def request(self, action: str, data: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Ask the page to run ``action`` and wait for its ``result`` data.

        Raises :class:`Refusal` with ``timeout`` when the deadline passes or the page goes
        away, and with the page's own code when it refuses.
        """
        return await self.ask(action, data, timeout)

    def ask(
        self, action: str, data: dict[str, Any], timeout: float
    ) -> Coroutine[Any, Any, dict[str, Any]]:
        """Send the page the request for ``action`` now, in order with every other message,
        and return what waits for its answer, as :meth:`request` does. Raises
        :class:`Refusal` at once when the page has closed."""
        if self.closed:
            raise Refusal("timeout", "The page closed before it could answer.")
        request_id = uuid.uuid4().hex
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self.send(
            {
                "type": "request",
                "requestId": request_id,
                "action": action,
                "data": data,
                "deadlineMs": int(timeout * 1000),
            }
        )
        return self._answer(request_id, future, timeout)

    async def _answer(
        self, request_id: str, future: asyncio.Future[dict[str, Any]], timeout: float
    ) -> dict[str, Any]:
        """The page's answer to request ``request_id``, within ``timeout`` seconds."""
        try:
            return await asyncio.wait_for(future, timeout)
        except asyncio.TimeoutError:
            raise Refusal(
                "timeout", f"The JupyterLab page did not answer within {timeout:g} seconds."
            ) from None
        finally:
            self._pending.pop(request_id, None)

    def close(self) -> None:
        """The page went away: fail every pending request at once."""
        self.closed = True
        pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(Refusal("timeout", "The page closed before it answered."))

    @property
    def pending_count(self) -> int:
        """Requests still waiting for the page."""
        return len(self._pending)
