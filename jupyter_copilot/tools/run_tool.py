"""``notebook_run_cell``: run one cell in the notebook's own kernel, only once the person allows it.

:class:`RunCell` is the tool's service (:class:`~.service.ToolService`); its spec is in
``toolspecs.py``. :class:`~.proposals.ProposalTool` gives it the proposal tools' life: the
fail-closed order of docs/protocol.md section 11.2, callIds whose repeat returns the first
result, and abort. What is its own:
- the server's configuration can forbid it (``CopilotApp.agent_run_cells = "never"``:
  ``not-permitted``), checked right after the caller's mode;
- it always asks the person with a run card, whatever the caller's approval mode: there is
  no Autopilot for running code (its spec's card says ``always``);
- the cell must be a code cell, not marked ``{"jupyter_copilot": {"agent_run": false}}``
  (``cell-locked``) and hold exactly the source the agent read (``stale-source``); the server
  checks a live shared document when there is one, and the page checks its live model again
  and hands exactly that source to the kernel in the same synchronous step (starting the
  kernel first when the notebook has none, then checking);
- the page answers once the run has ended; the result carries output digests (never raw HTML
  or base64) that fit the context budget, and says how many were left out.
"""

from __future__ import annotations

import json
from typing import Any

from ..admin.telemetry import Telemetry
from ..page.bridge import PageSession
from ..protocol import vocabulary
from ..protocol.refusals import Refusal
from .edits import ProposalCall, ResultOf, live_source_hash
from .service import NO_LIVE_DOCUMENT, ProposalHost, ms_since

#: ``CopilotApp.agent_run_cells`` values: ask the person every time, or never run.
RUN_POLICIES = ("ask", "never")
#: The statuses a run ends with.
RUN_STATUSES = vocabulary.RUN_STATUSES
#: The metadata mark that refuses runs by an agent: ``metadata[RUN_MARK][RUN_MARK_KEY] is False``.
RUN_MARK, RUN_MARK_KEY = vocabulary.RUN_MARK_KEYS


def run_locked(metadata: Any) -> bool:
    """Whether a cell's metadata marks it never to be run by an agent."""
    if not isinstance(metadata, dict):
        return False
    mark = metadata.get(RUN_MARK)
    return isinstance(mark, dict) and mark.get(RUN_MARK_KEY) is False


def check_live_run_cell(cell: dict[str, Any] | None, expected_hash: str) -> None:
    """Steps 6 and 7 for a run, against a cell of a live shared document."""
    if cell is None:
        raise Refusal("cell-not-found", "The notebook has no cell with that cellId.")
    if run_locked(cell.get("metadata")):
        raise Refusal(
            "cell-locked",
            "The person marked this cell never to be run by an agent.",
        )
    if cell.get("cell_type") != "code":
        raise Refusal("cell-type-mismatch", "Only code cells can be run.")
    if live_source_hash(cell) != expected_hash:
        raise Refusal(
            "stale-source",
            "The cell changed since you read it; read it again before asking to run it.",
        )


def run_result(answer: Any, budget_bytes: int) -> dict[str, Any]:
    """The success result from the page's ``runCellDone`` answer, within ``budget_bytes``.

    Outputs are kept in order while the result, serialized as compact UTF-8 JSON, fits the
    budget; the first that does not fit and all after it are counted in ``outputsOmitted``.
    No output is ever cut. Raises ``page-error`` for an answer of any other shape.
    """
    if not (
        isinstance(answer, dict)
        and set(answer) == {"executionCount", "status", "outputs"}
        and answer["status"] in RUN_STATUSES
        and (
            answer["executionCount"] is None
            or (type(answer["executionCount"]) is int and answer["executionCount"] >= 0)
        )
        and isinstance(answer["outputs"], list)
        and all(isinstance(o, dict) for o in answer["outputs"])
    ):
        raise Refusal("page-error", "The JupyterLab page reported the run in an unusable shape.")
    outputs = answer["outputs"]
    result: dict[str, Any] = {
        "success": True,
        "executionCount": answer["executionCount"],
        "status": answer["status"],
        "outputs": [],
        "outputsOmitted": len(outputs),
    }
    size = _size(result)
    kept = 0
    for output in outputs:
        # One comma between list items; the omitted count can only get shorter.
        grown = size + _size(output) + (1 if kept else 0)
        if grown > budget_bytes:
            break
        size = grown
        kept += 1
    result["outputs"] = outputs[:kept]
    result["outputsOmitted"] = len(outputs) - kept
    return result


def _size(value: Any) -> int:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return len(text.encode("utf-8", "surrogatepass"))


class RunCell:
    """The run tool's own part, for one server."""

    def __init__(self, host: ProposalHost, telemetry: Telemetry) -> None:
        self.host = host
        self.telemetry = telemetry
        # A run's result cannot be rebuilt from ids: a repeat gets the first one whole.
        self.settled_result: ResultOf | None = None

    def proposed_source(self, data: dict[str, Any]) -> str:
        """A run proposes no source."""
        return ""

    def permitted(self) -> None:
        """``CopilotApp.agent_run_cells = "never"`` refuses every run."""
        if self.host.run_policy() == "never":
            raise Refusal(
                "not-permitted",
                "This server does not let agents run cells (CopilotApp.agent_run_cells).",
            )

    async def check(self, data: dict[str, Any], settings: dict[str, Any]) -> None:
        """Steps 6 and 7 against the live shared document, when there is one."""
        live = await self.host.live_cell(data["artifactId"], data["cellId"])
        if live is not NO_LIVE_DOCUMENT:
            check_live_run_cell(live, data["expectedSourceHash"])

    def card_details(self, data: dict[str, Any]) -> dict[str, Any]:
        """The cell and the hash of the source that will run."""
        return {
            "artifactId": data["artifactId"],
            "cellId": data["cellId"],
            "expectedSourceHash": data["expectedSourceHash"],
        }

    def request_data(
        self, call_id: str, data: dict[str, Any], path: str, checked: Any
    ) -> dict[str, Any]:
        """``run-cell.invoke`` for the page."""
        return {
            "callId": call_id,
            "artifactId": data["artifactId"],
            "path": path,
            "cellId": data["cellId"],
            "expectedSourceHash": data["expectedSourceHash"],
        }

    def page_timeout(self, settings: dict[str, Any]) -> float:
        """The page answers when the run ends, which can take far longer than opening a
        review: ``CopilotApp.agent_run_timeout_seconds``."""
        return float(self.host.run_timeout())

    def answered(
        self,
        call: ProposalCall,
        page: PageSession,
        data: dict[str, Any],
        answer: Any,
        started: float,
    ) -> dict[str, Any]:
        """The result from the page's ``runCellDone`` answer (:func:`run_result`)."""
        result = run_result(answer, self.host.settings()["context_budget_bytes"])
        self.telemetry.run_finished(
            call_ref=call.ref,
            page_ref=page.ref,
            latency_ms=ms_since(started),
            status=result["status"],
            output_count=len(result["outputs"]),
            outputs_omitted=result["outputsOmitted"],
        )
        return result
