"""``notebook_edit_cell``: a whole-cell diff for one existing cell.

:class:`EditTool` is a :class:`~.proposals.ProposalTool`: the shared machinery runs
docs/protocol.md section 5 in order, callIds, abort and Keep; this module adds what only
an edit checks (the size of ``newSource``, and with real-time collaboration the live cell's
lock, type and hash) and what the page's request carries. The page checks its live model
again and opens the review.
"""

from __future__ import annotations

from typing import Any

from .context import source_hash
from .edits import EditCall, check_live_cell, check_new_source, edit_result
from .proposals import NO_LIVE_DOCUMENT, Approve, ProposalHost, ProposalTool
from .registry import ABORT, INVOKE

__all__ = ["NO_LIVE_DOCUMENT", "Approve", "EditHost", "EditTool"]

#: What the edit tool asks of the server (the name predates the other proposal tools).
EditHost = ProposalHost


class EditTool(ProposalTool):
    """The edit tool of one server."""

    name = "notebook_edit_cell"
    operation = "whole-cell-diff"
    invoke_action = INVOKE
    abort_action = ABORT
    opened = {"diffReviewOpened": True}

    def proposed_source(self, data: dict[str, Any]) -> str:
        """The complete replacement source."""
        return data["newSource"]  # type: ignore[no-any-return]

    async def _tool_checks(self, data: dict[str, Any], settings: dict[str, Any]) -> str | None:
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

    def _request_data(
        self, call: EditCall, data: dict[str, Any], path: str, checked: Any
    ) -> dict[str, Any]:
        return {
            "callId": call.call_id,
            "artifactId": data["artifactId"],
            "path": path,
            "cellId": data["cellId"],
            "expectedSourceHash": data["expectedSourceHash"],
            "newSource": data["newSource"],
            "expectedCellType": checked,
        }

    def result(self, data: dict[str, Any]) -> dict[str, Any]:
        """docs/protocol.md section 4.2."""
        return edit_result(data["artifactId"], data["cellId"], source_hash(data["newSource"]))

    def _settled_result(
        self, artifact_id: str, cell_id: str, hash_after: str | None
    ) -> dict[str, Any]:
        return edit_result(artifact_id, cell_id, hash_after)
