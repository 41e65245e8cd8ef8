"""Running actions: the part of a REST call that is neither HTTP nor page protocol.

Handlers parse the request and ask :class:`ActionRunner`; the runner reads through the
notebook service that the MCP tools use too, and reports what it served.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from ..admin.telemetry import Telemetry
from ..page.context import SELECTED_CELL
from ..page.notebook import NotebookReader
from ..protocol.callers import Caller
from ..protocol.refusals import Refusal


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
    """Runs the registry's read action for one server and reports it (``context/served``)."""

    def __init__(self, notebook: NotebookReader, telemetry: Telemetry) -> None:
        self.notebook = notebook
        self.telemetry = telemetry

    async def get_context(self, caller: Caller, body: ActionBody) -> dict[str, Any]:
        """Serve ``{"customContext": [...]}`` from the page's live state at call time."""
        started = time.perf_counter()
        page = None
        try:
            if body.data:
                raise Refusal("invalid-input", "get-context takes no data.")
            page = self.notebook.context_page(body.page_id)
            entries = await self.notebook.entries(caller, page)
        except Refusal as refusal:
            self.telemetry.context_served(
                page_ref=None if page is None else page.ref,
                latency_ms=_ms_since(started),
                size=0,
                entry_count=0,
                omitted_reason=None,
                outcome=refusal.code,
            )
            raise
        served = {"customContext": entries}
        omitted = next(
            (
                e["omitted"]["reason"]
                for e in entries
                if e["name"] == SELECTED_CELL and "omitted" in e
            ),
            None,
        )
        self.telemetry.context_served(
            page_ref=None if page is None else page.ref,
            latency_ms=_ms_since(started),
            size=len(json.dumps(served, ensure_ascii=False).encode("utf-8", "surrogatepass")),
            entry_count=len(entries),
            omitted_reason=omitted,
            outcome="served",
        )
        return served


def _ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0
