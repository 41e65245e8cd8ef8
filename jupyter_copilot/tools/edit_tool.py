"""``notebook_edit_cell``: a whole-cell diff for one existing cell.

:class:`EditCell` is the tool's service (:class:`~.service.ToolService`); its spec is in
``toolspecs.py`` and :class:`~.proposals.ProposalTool` runs docs/protocol.md section 5 in
order, callIds, abort and Keep. This module adds what only an edit checks (the size of
``newSource``, and with real-time collaboration the live cell's lock, type and hash) and
what the page's request carries. The page checks its live model again and opens the review.
"""

from __future__ import annotations

from typing import Any

from ..admin.telemetry import Telemetry
from ..page.bridge import PageSession
from ..page.context import source_hash
from ..protocol.refusals import Refusal
from .edits import ProposalCall, ResultOf, check_live_cell, check_new_source, edit_result
from .service import NO_LIVE_DOCUMENT, ProposalHost

#: The page's answer once the diff review is open.
OPENED = {"diffReviewOpened": True}


class EditCell:
    """The edit tool's own part, for one server."""

    def __init__(self, host: ProposalHost, telemetry: Telemetry) -> None:
        self.host = host
        self.settled_result: ResultOf | None = edit_result

    def proposed_source(self, data: dict[str, Any]) -> str:
        """The complete replacement source."""
        return data["newSource"]  # type: ignore[no-any-return]

    def permitted(self) -> None:
        """Every server that serves the tool permits it."""

    async def check(self, data: dict[str, Any], settings: dict[str, Any]) -> str | None:
        """Steps 5 to 7; returns the cell type served with the hash, if it was."""
        # 5. Size.
        check_new_source(data["newSource"], settings["tool_input_budget_bytes"])
        # 6-7 against the live shared document, when there is one.
        expected_type = self.host.served_type(
            data["artifactId"], data["cellId"], data["expectedSourceHash"]
        )
        live = await self.host.live_cell(data["artifactId"], data["cellId"])
        if live is not NO_LIVE_DOCUMENT:
            check_live_cell(live, expected_type, data["expectedSourceHash"])
        return expected_type

    def card_details(self, data: dict[str, Any]) -> dict[str, Any]:
        """The cell and the size of its proposed source."""
        return {
            "artifactId": data["artifactId"],
            "cellId": data["cellId"],
            "newSourceBytes": len(data["newSource"].encode("utf-8")),
        }

    def request_data(
        self, call_id: str, data: dict[str, Any], path: str, checked: Any
    ) -> dict[str, Any]:
        """``edit-cell.invoke`` for the page, with the type the hash was served with."""
        return {
            "callId": call_id,
            "artifactId": data["artifactId"],
            "path": path,
            "cellId": data["cellId"],
            "expectedSourceHash": data["expectedSourceHash"],
            "newSource": data["newSource"],
            "expectedCellType": checked,
        }

    def page_timeout(self, settings: dict[str, Any]) -> float:
        """Opening a review is quick: the page timeout."""
        return float(settings["page_timeout_seconds"])

    def answered(
        self,
        call: ProposalCall,
        page: PageSession,
        data: dict[str, Any],
        answer: Any,
        started: float,
    ) -> dict[str, Any]:
        """docs/protocol.md section 4.2: metadata only, never source."""
        if answer != OPENED:
            raise Refusal("timeout", "The JupyterLab page answered with something unusable.")
        return edit_result(data["artifactId"], data["cellId"], source_hash(data["newSource"]))
