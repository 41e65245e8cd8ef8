"""Content-free telemetry through the Jupyter server's event logger (jupyter_events).

Schemas are YAML files in ``events/``; each emitter takes only numbers, codes and opaque
server-made ids, so there is no way to pass content through them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

EVENT_DIR = Path(__file__).parents[1] / "events"
SCHEMA_BASE = "https://events.jupyter.org/jupyter_copilot/"
CONTEXT_SERVED = SCHEMA_BASE + "context/served/v1"
CONTEXT_REFRESH = SCHEMA_BASE + "context/refresh/v1"
#: The events of every proposal tool (edit, insert, run), under their published ``edit/`` ids
#: (docs/protocol.md section 10); ``operation`` says which tool.
PROPOSAL_INVOKED = SCHEMA_BASE + "edit/invoked/v1"
PROPOSAL_REFUSED = SCHEMA_BASE + "edit/refused/v1"
PROPOSAL_REVIEW_OPENED = SCHEMA_BASE + "edit/review-opened/v1"
PROPOSAL_DECISION = SCHEMA_BASE + "edit/decision/v1"
PROPOSAL_ABORTED = SCHEMA_BASE + "edit/aborted/v1"
RUN_FINISHED = SCHEMA_BASE + "run/finished/v1"
APPROVAL_REQUESTED = SCHEMA_BASE + "approval/requested/v1"
APPROVAL_ENDED = SCHEMA_BASE + "approval/ended/v1"
MCP_TOOL_CALL = SCHEMA_BASE + "mcp/tool-call/v1"
CONVERSATION_TURN = SCHEMA_BASE + "conversation/turn/v1"


class Telemetry:
    """Emits the extension's events, or nothing when the server has no event logger."""

    def __init__(self, event_logger: Any | None) -> None:
        self._logger = event_logger
        if event_logger is not None:
            for path in sorted(EVENT_DIR.glob("*.yaml")):
                event_logger.register_event_schema(path)

    def _emit(self, schema_id: str, data: dict[str, Any]) -> None:
        if self._logger is not None:
            self._logger.emit(schema_id=schema_id, data=data)

    def context_served(
        self,
        *,
        page_ref: str | None,
        latency_ms: float,
        size: int,
        entry_count: int,
        omitted_reason: str | None,
        outcome: str,
    ) -> None:
        """A get-context call ended, served or refused."""
        self._emit(
            CONTEXT_SERVED,
            {
                "pageRef": page_ref,
                "latencyMs": round(latency_ms, 3),
                "bytes": size,
                "entryCount": entry_count,
                "omittedReason": omitted_reason,
                "outcome": outcome,
            },
        )

    def context_refresh(
        self, *, page_ref: str, accepted: bool, received: int, deduplicated: int, coalesced: int
    ) -> None:
        """A page sent a ``state`` message."""
        self._emit(
            CONTEXT_REFRESH,
            {
                "pageRef": page_ref,
                "accepted": accepted,
                "received": received,
                "deduplicated": deduplicated,
                "coalesced": coalesced,
            },
        )

    def proposal_invoked(self, *, call_ref: str, new_source_bytes: int, operation: str) -> None:
        """A new call of a proposal tool passed its input check."""
        self._emit(
            PROPOSAL_INVOKED,
            {"callRef": call_ref, "newSourceBytes": new_source_bytes, "operation": operation},
        )

    def proposal_refused(
        self, *, call_ref: str | None, code: str, latency_ms: float, operation: str
    ) -> None:
        """A call of a proposal tool ended with a refusal code."""
        self._emit(
            PROPOSAL_REFUSED,
            {
                "callRef": call_ref,
                "code": code,
                "latencyMs": round(latency_ms, 3),
                "operation": operation,
            },
        )

    def proposal_review_opened(
        self,
        *,
        call_ref: str,
        page_ref: str,
        latency_ms: float,
        check_ms: float,
        new_source_bytes: int,
        operation: str,
    ) -> None:
        """A page opened the review of a proposal tool's call."""
        self._emit(
            PROPOSAL_REVIEW_OPENED,
            {
                "callRef": call_ref,
                "pageRef": page_ref,
                "latencyMs": round(latency_ms, 3),
                "checkMs": round(check_ms, 4),
                "newSourceBytes": new_source_bytes,
                "operation": operation,
            },
        )

    def proposal_decision(
        self, *, call_ref: str, decision: str, open_ms: float, operation: str
    ) -> None:
        """A review ended."""
        self._emit(
            PROPOSAL_DECISION,
            {"callRef": call_ref, "decision": decision, "openMs": open_ms, "operation": operation},
        )

    def proposal_aborted(
        self, *, call_ref: str, review_was_open: bool, withdrawn: bool, operation: str
    ) -> None:
        """A call of a proposal tool was aborted."""
        self._emit(
            PROPOSAL_ABORTED,
            {
                "callRef": call_ref,
                "reviewWasOpen": review_was_open,
                "withdrawn": withdrawn,
                "operation": operation,
            },
        )

    def run_finished(
        self,
        *,
        call_ref: str,
        page_ref: str,
        latency_ms: float,
        status: str,
        output_count: int,
        outputs_omitted: int,
    ) -> None:
        """A run the person allowed ended."""
        self._emit(
            RUN_FINISHED,
            {
                "callRef": call_ref,
                "pageRef": page_ref,
                "latencyMs": round(latency_ms, 3),
                "status": status,
                "outputCount": output_count,
                "outputsOmitted": outputs_omitted,
            },
        )

    def approval_requested(
        self, *, request_ref: str, tool: str | None, caller_kind: str, page_ref: str
    ) -> None:
        """An approval card was sent to a page."""
        self._emit(
            APPROVAL_REQUESTED,
            {
                "requestRef": request_ref,
                "toolName": tool,
                "callerKind": caller_kind,
                "pageRef": page_ref,
            },
        )

    def approval_ended(self, *, request_ref: str, outcome: str, wait_ms: float) -> None:
        """An approval request ended."""
        self._emit(
            APPROVAL_ENDED, {"requestRef": request_ref, "outcome": outcome, "waitMs": wait_ms}
        )

    def mcp_tool_call(
        self, *, tool: str | None, caller_kind: str, outcome: str, latency_ms: float, size: int
    ) -> None:
        """An MCP tool call ended, with a result or a refusal code."""
        self._emit(
            MCP_TOOL_CALL,
            {
                "toolName": tool,
                "callerKind": caller_kind,
                "outcome": outcome,
                "latencyMs": round(latency_ms, 3),
                "bytes": size,
            },
        )

    def conversation_turn(
        self,
        *,
        conversation_ref: str,
        agent_kind: str,
        tools_attached: bool,
        attachment: bool,
        restarted: bool,
        stop_reason: str,
        tool_calls: int,
        latency_ms: float,
    ) -> None:
        """A conversation's turn ended."""
        self._emit(
            CONVERSATION_TURN,
            {
                "conversationRef": conversation_ref,
                "agentKind": agent_kind,
                "toolsAttached": tools_attached,
                "attachment": attachment,
                "restarted": restarted,
                "stopReason": stop_reason,
                "toolCalls": tool_calls,
                "latencyMs": round(latency_ms, 3),
            },
        )
