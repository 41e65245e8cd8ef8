"""``notebook_run_cell``: run one cell in the notebook's own kernel, only once the person allows it.

:class:`RunTool` shares the proposal tools' life (``proposals.py``): the fail-closed order of
docs/protocol.md section 11.2, callIds whose repeat returns the first result, and abort. What
is its own:
- the server's configuration can forbid it (``CopilotApp.agent_run_cells = "never"``:
  ``not-permitted``), checked right after the caller's mode;
- it always asks the person with a run card, whatever the caller's approval mode: there is
  no Autopilot for running code;
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
from collections.abc import Callable
from typing import Any, ClassVar

from . import vocabulary
from .approvals import Approvals
from .bridge import PageSession
from .callers import Caller
from .dispatcher import Dispatcher
from .edits import EditCall, EditCalls, live_source_hash
from .proposals import NO_LIVE_DOCUMENT, Approve, ProposalHost, ProposalTool, _ms_since
from .refusals import Refusal
from .registry import RUN_ABORT, RUN_INVOKE
from .sessions import Registrations
from .telemetry import Telemetry

#: The tool's name (docs/protocol.md section 11.2).
RUN_CELL = "notebook_run_cell"
#: ``CopilotApp.agent_run_cells`` values: ask the person every time, or never run.
RUN_POLICIES = ("ask", "never")
#: What the run card says the call will do.
RUN_DESCRIPTION = "Run one cell of the active notebook in its kernel"
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


class RunTool(ProposalTool):
    """The run tool of one server."""

    name = RUN_CELL
    operation = "run-cell"
    invoke_action = RUN_INVOKE
    abort_action = RUN_ABORT
    opened: ClassVar[dict[str, Any]] = {}

    def __init__(
        self,
        parameters: dict[str, Any],
        dispatcher: Dispatcher,
        registrations: Registrations,
        telemetry: Telemetry,
        host: ProposalHost,
        approvals: Approvals,
        policy: Callable[[], str],
        run_timeout: Callable[[], float],
    ) -> None:
        super().__init__(parameters, dispatcher, registrations, telemetry, host)
        self.approvals = approvals
        self._policy = policy
        self._run_timeout = run_timeout
        # A run's result cannot be rebuilt from ids: a repeat gets the first one whole.
        self.calls = EditCalls(result_of=self._settled_result, keep_results=True)

    async def invoke(
        self,
        caller: Caller,
        data: dict[str, Any],
        call_id: str | None = None,
        page_id: str | None = None,
        approve: Approve | None = None,
    ) -> dict[str, Any]:
        """Run one invoke; returns once the run has ended.

        The person is always asked with a run card: ``approve`` is ignored, whatever the
        caller's mode.
        """

        async def ask(page: PageSession, path: str, data: dict[str, Any], abort: Any) -> None:
            await self.approvals.ask(
                owner=caller.principal,
                page=page,
                path=path,
                tool=self.name,
                description=RUN_DESCRIPTION,
                details={
                    "artifactId": data["artifactId"],
                    "cellId": data["cellId"],
                    "expectedSourceHash": data["expectedSourceHash"],
                },
                caller_kind=caller.kind,
                abort=abort,
                group=caller.scope or None,
                kind="run",
            )

        return await super().invoke(caller, data, call_id, page_id, ask)

    def proposed_source(self, data: dict[str, Any]) -> str:
        """A run proposes no source."""
        return ""

    def _policy_check(self) -> None:
        if self._policy() == "never":
            raise Refusal(
                "not-permitted",
                "This server does not let agents run cells (CopilotApp.agent_run_cells).",
            )

    async def _tool_checks(self, data: dict[str, Any], settings: dict[str, Any]) -> None:
        """Steps 6 and 7 against the live shared document, when there is one."""
        live = await self.host.live_cell(data["artifactId"], data["cellId"])
        if live is not NO_LIVE_DOCUMENT:
            check_live_run_cell(live, data["expectedSourceHash"])

    def _request_data(
        self, call: EditCall, data: dict[str, Any], path: str, checked: Any
    ) -> dict[str, Any]:
        return {
            "callId": call.call_id,
            "artifactId": data["artifactId"],
            "path": path,
            "cellId": data["cellId"],
            "expectedSourceHash": data["expectedSourceHash"],
        }

    def _page_timeout(self, settings: dict[str, Any]) -> float:
        # The page answers when the run ends, which can take far longer than opening a review.
        return float(self._run_timeout())

    def _page_answered(
        self, call: EditCall, page: PageSession, data: dict[str, Any], answer: Any, started: float
    ) -> dict[str, Any]:
        result = run_result(answer, self.host.settings()["context_budget_bytes"])
        self.telemetry.run_finished(
            call_ref=call.ref,
            page_ref=page.ref,
            latency_ms=_ms_since(started),
            status=result["status"],
            output_count=len(result["outputs"]),
            outputs_omitted=result["outputsOmitted"],
        )
        return result

    def result(self, data: dict[str, Any]) -> dict[str, Any]:
        """Never used: a run's result comes from the page (:func:`run_result`)."""
        raise NotImplementedError

    def _settled_result(
        self, artifact_id: str, cell_id: str, hash_after: str | None
    ) -> dict[str, Any]:
        raise NotImplementedError
