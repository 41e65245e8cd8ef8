"""Running actions: the part of a REST call that is neither HTTP nor page protocol.

Handlers parse the request and ask :class:`ActionRunner`; the runner resolves the page
through the dispatcher, asks it for its live state and builds the answer.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from .context import SELECTED_CELL, build_context
from .dispatcher import Dispatcher
from .refusals import Refusal
from .registry import GET_CONTEXT, first_error
from .telemetry import Telemetry


@dataclass(frozen=True)
class Caller:
    """What the server's authorizer lets the caller do, asked only when needed.

    REST callers use the defaults: the person's own page calls, and the review is the
    person's decision. MCP callers carry their approval mode (docs/protocol.md section 8):
    ``plan`` refuses edits, and with ``approve`` set every edit waits for it to return
    (it raises :class:`Refusal` to end the call) before anything reaches the page.
    """

    may_write: Callable[[], Awaitable[bool]]
    mode: str = "autopilot"
    #: ``approve(page, path, data, abort)``: show an approval card and wait for the decision.
    approve: Callable[[Any, str, dict[str, Any], Any], Awaitable[None]] | None = None


@dataclass(frozen=True)
class ActionBody:
    """A parsed ``POST copilot/api/actions/<action>`` body."""

    data: dict[str, Any]
    page_id: str | None
    call_id: str | None

    @classmethod
    def parse(cls, body: dict[str, Any]) -> ActionBody:
        """Check a body's fields, refusing anything that is not the contract's shape."""
        data = body.get("data", {})
        page_id = body.get("pageId")
        call_id = body.get("callId")
        if not isinstance(data, dict):
            raise Refusal("invalid-input", "'data' must be a JSON object.")
        for name, value in (("pageId", page_id), ("callId", call_id)):
            if value is not None and not (isinstance(value, str) and 0 < len(value) <= 128):
                raise Refusal("invalid-input", f"'{name}' must be a string of 1 to 128 characters.")
        return cls(data, page_id, call_id)


class ActionRunner:
    """Runs the registry's actions for one server."""

    def __init__(
        self,
        dispatcher: Dispatcher,
        telemetry: Telemetry,
        artifact_id: Callable[[str], str | None],
        settings: Callable[[], dict[str, Any]],
        on_served: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.dispatcher = dispatcher
        self.telemetry = telemetry
        self._artifact_id = artifact_id
        self._settings = settings
        self._on_served = on_served

    async def get_context(self, caller: Caller, body: ActionBody) -> dict[str, Any]:
        """Serve ``{"customContext": [...]}`` from the page's live state at call time."""
        started = time.perf_counter()
        page_ref = None
        try:
            if body.data:
                raise Refusal("invalid-input", "get-context takes no data.")
            if body.page_id is None and not self.dispatcher.pages():
                entries: list[dict[str, Any]] = []
            else:
                page = self.dispatcher.resolve(body.page_id)
                page_ref = page.ref
                entries = await self._entries_from(page, caller)
        except Refusal as refusal:
            self.telemetry.context_served(
                page_ref=page_ref,
                latency_ms=_ms_since(started),
                size=0,
                entry_count=0,
                omitted_reason=None,
                outcome=refusal.code,
            )
            raise
        served = {"customContext": entries}
        if self._on_served is not None:
            for entry in entries:
                if entry["name"] == SELECTED_CELL and "omitted" not in entry:
                    self._on_served(entry["value"])
        omitted = next(
            (
                e["omitted"]["reason"]
                for e in entries
                if e["name"] == SELECTED_CELL and "omitted" in e
            ),
            None,
        )
        self.telemetry.context_served(
            page_ref=page_ref,
            latency_ms=_ms_since(started),
            size=len(json.dumps(served, ensure_ascii=False).encode("utf-8", "surrogatepass")),
            entry_count=len(entries),
            omitted_reason=omitted,
            outcome="served",
        )
        return served

    async def _entries_from(self, page: Any, caller: Caller) -> list[dict[str, Any]]:
        settings = self._settings()
        data = await page.request(GET_CONTEXT, {}, settings["page_timeout_seconds"])
        problem = first_error("get-context-result", data)
        if problem is not None:
            raise Refusal("timeout", "The JupyterLab page answered with something unusable.")
        active = data["activeNotebook"]
        if active is None:
            return []
        return build_context(
            active,
            self._artifact_id(active["path"]),
            may_write=await caller.may_write(),
            budget_bytes=settings["context_budget_bytes"],
        )


def _ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0
