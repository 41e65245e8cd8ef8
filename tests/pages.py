"""A scripted JupyterLab page: speaks the bridge protocol over a real WebSocket."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable
from typing import Any

from tornado.websocket import WebSocketClientConnection

from jupyter_copilot.page.bridge import server_message_problem

GET_CONTEXT = ("copilot", "api", "actions", "jupyter_copilot.notebook.get-context")

Responder = Callable[[dict[str, Any]], "dict[str, Any] | None"]


def notebook_state(
    path: str = "a.ipynb",
    *,
    focused: bool = True,
    selected: list[str] | None = None,
    writable: bool = True,
) -> dict[str, Any]:
    """A PageState with an active notebook, as the lab extension reports it."""
    return {
        "focused": focused,
        "url": f"lab/tree/{path}",
        "activeNotebook": {
            "path": path,
            "viewType": "notebook",
            "writable": writable,
            "kernelSessionId": None,
            "language": "python",
            "cellCount": 3,
            "selectedCellIds": selected if selected is not None else ["c1"],
            "selectedCellHash": None,
        },
    }


def context_answer(
    path: str = "a.ipynb",
    source: str | None = "x = 1\n",
    *,
    selected: list[str] | None = None,
    cell_type: str = "code",
    writable: bool = True,
) -> dict[str, Any]:
    """What a page answers to get-context for one active notebook."""
    selected = selected if selected is not None else ["c1"]
    cell = None
    if source is not None and len(selected) == 1:
        cell = {"cellId": selected[0], "cellType": cell_type, "source": source}
    return {
        "activeNotebook": {
            "path": path,
            "viewType": "notebook",
            "writable": writable,
            "language": "python",
            "kernelSessionId": None,
            "selectedCellIds": selected,
            "selectedCell": cell,
        }
    }


class ScriptedPage:
    """One fake page. ``respond`` answers requests: return result data, or None to stay silent.

    Messages that are not requests (welcome, errors) are queued in ``inbox``. Every message
    the server sends is kept in ``received`` and checked against the bridge-server-message
    schema: a message that breaks it fails the next ``next_message`` and ``close``.
    """

    def __init__(self, ws: WebSocketClientConnection, page_id: str) -> None:
        self.ws = ws
        self.page_id = page_id
        self.respond: Responder = lambda request: {"activeNotebook": None}
        self.requests: list[dict[str, Any]] = []
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.received: list[dict[str, Any]] = []
        self.invalid: list[str] = []
        self._reader = asyncio.ensure_future(self._read())

    @classmethod
    async def connect(
        cls, jp_ws_fetch: Any, page_id: str = "page-1", url: str = "lab/tree/a.ipynb"
    ) -> ScriptedPage:
        """Open the bridge, say hello and wait for the welcome."""
        ws = await jp_ws_fetch("copilot", "api", "bridge")
        page = cls(ws, page_id)
        page.send({"type": "hello", "protocol": 1, "pageId": page_id, "url": url})
        welcome = await page.next_message()
        assert welcome["type"] == "welcome", welcome
        page.welcome = welcome
        return page

    def send(self, message: dict[str, Any] | str) -> None:
        """Send a message (a dict, or raw text for malformed input)."""
        self.ws.write_message(message if isinstance(message, str) else json.dumps(message))

    async def next_message(self, timeout: float = 5.0) -> dict[str, Any]:
        """The next non-request message from the server."""
        message = await asyncio.wait_for(self.inbox.get(), timeout)
        self.check_schema()
        return message

    def check_schema(self) -> None:
        """Fail if the server sent this page anything that breaks the bridge schema."""
        assert not self.invalid, f"the server sent messages outside the schema: {self.invalid}"

    async def sync(self) -> None:
        """Wait until the server has handled everything sent so far.

        The server handles a connection's messages in order and answers an unknown type
        with an error, so that answer marks the point.
        """
        self.send({"type": "sync-barrier"})
        while True:
            message = await self.next_message()
            if message.get("type") == "error" and "sync-barrier" in message["message"]:
                return
            raise AssertionError(f"unexpected message before the barrier: {message}")

    async def send_state(self, state: dict[str, Any], fingerprint: str | None = None) -> None:
        """Send a state message and wait until the server has taken it."""
        fingerprint = (
            fingerprint or hashlib.sha256(json.dumps(state, sort_keys=True).encode()).hexdigest()
        )
        self.send({"type": "state", "fingerprint": fingerprint, "state": state})
        await self.sync()

    async def _read(self) -> None:
        while True:
            text = await self.ws.read_message()
            if text is None:
                return
            message = json.loads(text)
            self.received.append(message)
            problem = server_message_problem(message)
            if problem is not None:
                self.invalid.append(f"{message.get('type')!r}: {problem}")
            if message.get("type") != "request":
                self.inbox.put_nowait(message)
                continue
            self.requests.append(message)
            data = self.respond(message)
            if data is None:
                continue
            if data.get("ok") is False:
                self.send(
                    {
                        "type": "result",
                        "requestId": message["requestId"],
                        "ok": False,
                        "error": data["error"],
                    }
                )
            else:
                self.send(
                    {"type": "result", "requestId": message["requestId"], "ok": True, "data": data}
                )

    def close(self) -> None:
        """Close the WebSocket like a page that goes away."""
        self.ws.close()
        self._reader.cancel()
        self.check_schema()


async def next_of(page: ScriptedPage, kind: str, timeout: float = 15) -> dict[str, Any]:
    """The next bridge message of ``kind`` that the page receives; others are skipped."""
    while True:
        message = await page.next_message(timeout=timeout)
        if message["type"] == kind:
            return message


async def get_context(jp_fetch: Any, page_id: str | None = None) -> list[dict[str, Any]]:
    """POST get-context over REST (for ``page_id``, if given) and return ``customContext``."""
    body: dict[str, Any] = {"data": {}}
    if page_id is not None:
        body["pageId"] = page_id
    response = await jp_fetch(*GET_CONTEXT, method="POST", body=json.dumps(body))
    return json.loads(response.body)["result"]["customContext"]  # type: ignore[no-any-return]
