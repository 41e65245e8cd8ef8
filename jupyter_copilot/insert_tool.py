"""``notebook_insert_cell``: propose one new cell, shown as a pending cell until Keep.

:class:`InsertTool` is a :class:`~.proposals.ProposalTool`, so it runs the fail-closed order
of docs/protocol.md section 11.1 (section 5 where a step applies: switches, page, artifact,
session, permission, size), remembers callIds, aborts and judges Keep exactly as the edit tool does.
What is its own: the anchor (``afterCellId``, null for the top) must exist, which the server
can tell only from a live shared document and the page always checks again; there is no
hash, lock or type to compare, since the cell does not exist yet. The page shows the
pending cell and answers ``{"reviewOpened": true}``; the notebook's cells change only when
the person keeps it.
"""

from __future__ import annotations

from typing import Any

from .edits import EditCall, check_new_source
from .proposals import NO_LIVE_DOCUMENT, ProposalTool
from .refusals import Refusal
from .registry import INSERT_ABORT, INSERT_INVOKE

#: The tool's name (docs/protocol.md section 11.1).
INSERT_CELL = "notebook_insert_cell"


def insert_result(artifact_id: str) -> dict[str, Any]:
    """The success result of ``insert-cell.invoke``: metadata only."""
    return {
        "success": True,
        "artifactId": artifact_id,
        "operation": "insert-cell",
        "reviewOpened": True,
    }


class InsertTool(ProposalTool):
    """The insert tool of one server."""

    name = INSERT_CELL
    operation = "insert-cell"
    invoke_action = INSERT_INVOKE
    abort_action = INSERT_ABORT
    opened = {"reviewOpened": True}

    def proposed_source(self, data: dict[str, Any]) -> str:
        """The complete source of the new cell."""
        return data["source"]  # type: ignore[no-any-return]

    async def _tool_checks(self, data: dict[str, Any], settings: dict[str, Any]) -> None:
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

    def _request_data(
        self, call: EditCall, data: dict[str, Any], path: str, checked: Any
    ) -> dict[str, Any]:
        return {
            "callId": call.call_id,
            "artifactId": data["artifactId"],
            "path": path,
            "afterCellId": data["afterCellId"],
            "cellType": data["cellType"],
            "source": data["source"],
        }

    def result(self, data: dict[str, Any]) -> dict[str, Any]:
        """docs/protocol.md section 11.1."""
        return insert_result(data["artifactId"])

    def _settled_result(
        self, artifact_id: str, cell_id: str, hash_after: str | None
    ) -> dict[str, Any]:
        return insert_result(artifact_id)
