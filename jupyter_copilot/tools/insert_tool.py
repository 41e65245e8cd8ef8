"""``notebook_insert_cell``: propose one new cell, shown as a pending cell until Keep.

:class:`InsertCell` is the tool's service (:class:`~.service.ToolService`); its spec is
in ``toolspecs.py``. :class:`~.proposals.ProposalTool` runs the fail-closed order of
docs/protocol.md section 11.1 (section 5 where a step applies: switches, page, artifact,
session, permission, size), remembers callIds, aborts and judges Keep exactly as for an
edit. What is its own: the anchor (``afterCellId``, null for the top) must exist, which the
server can tell only from a live shared document and the page always checks again; there is
no hash, lock or type to compare, since the cell does not exist yet. The page shows the
pending cell and answers ``{"reviewOpened": true}``; the notebook's cells change only when
the person keeps it.
"""

from __future__ import annotations

from typing import Any

from ..admin.telemetry import Telemetry
from ..page.bridge import PageSession
from ..protocol.refusals import Refusal
from .edits import ProposalCall, ResultOf, check_new_source
from .service import NO_LIVE_DOCUMENT, ProposalHost

#: The page's answer once the pending cell shows.
OPENED = {"reviewOpened": True}


def insert_result(artifact_id: str) -> dict[str, Any]:
    """The success result of ``insert-cell.invoke``: metadata only."""
    return {
        "success": True,
        "artifactId": artifact_id,
        "operation": "insert-cell",
        "reviewOpened": True,
    }


def _settled_insert(artifact_id: str, cell_id: str, hash_after: str | None) -> dict[str, Any]:
    return insert_result(artifact_id)


class InsertCell:
    """The insert tool's own part, for one server."""

    def __init__(self, host: ProposalHost, telemetry: Telemetry) -> None:
        self.host = host
        self.settled_result: ResultOf | None = _settled_insert

    def proposed_source(self, data: dict[str, Any]) -> str:
        """The complete source of the new cell."""
        return data["source"]  # type: ignore[no-any-return]

    def permitted(self) -> None:
        """Every server that serves the tool permits it."""

    async def check(self, data: dict[str, Any], settings: dict[str, Any]) -> None:
        """Step 5 (size) and step 6 (the anchor exists, in a live shared document)."""
        check_new_source(data["source"], settings["tool_input_budget_bytes"], "source")
        anchor = data["afterCellId"]
        if anchor is None:
            return
        live = await self.host.live_cell(data["artifactId"], anchor)
        if live is not NO_LIVE_DOCUMENT and live is None:
            raise Refusal(
                "cell-not-found", "The notebook has no cell with that afterCellId to insert after."
            )

    def card_details(self, data: dict[str, Any]) -> dict[str, Any]:
        """The notebook, the new cell's size and, as ``cellId``, the cell it would follow
        (absent: at the top), so that the card says where the new cell goes."""
        details = {
            "artifactId": data["artifactId"],
            "newSourceBytes": len(data["source"].encode("utf-8")),
        }
        if data["afterCellId"] is not None:
            details["cellId"] = data["afterCellId"]
        return details

    def request_data(
        self, call_id: str, data: dict[str, Any], path: str, checked: Any
    ) -> dict[str, Any]:
        """``insert-cell.invoke`` for the page."""
        return {
            "callId": call_id,
            "artifactId": data["artifactId"],
            "path": path,
            "afterCellId": data["afterCellId"],
            "cellType": data["cellType"],
            "source": data["source"],
        }

    def page_timeout(self, settings: dict[str, Any]) -> float:
        """Showing a pending cell is quick: the page timeout."""
        return float(settings["page_timeout_seconds"])

    def answered(
        self,
        call: ProposalCall,
        page: PageSession,
        data: dict[str, Any],
        answer: Any,
        started: float,
    ) -> dict[str, Any]:
        """docs/protocol.md section 11.1: metadata only."""
        if answer != OPENED:
            raise Refusal("timeout", "The JupyterLab page answered with something unusable.")
        return insert_result(data["artifactId"])
