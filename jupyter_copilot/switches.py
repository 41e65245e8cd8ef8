"""The feature switch and the kill switch, and which of them gates what.

Every gate of the package is named here, with the documented exceptions in one place
(docs/protocol.md sections 3, 4.3, 5 and 8): status always answers; get-context and
``context_snapshot`` are not stopped by the kill switch; abort is never refused by either
switch; an edit, an insert or a run checks its input before the switches, so its tool
applies both itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .refusals import Refusal
from .registry import (
    ABORT,
    GET_CONTEXT,
    INSERT_ABORT,
    INSERT_INVOKE,
    INVOKE,
    RUN_ABORT,
    RUN_INVOKE,
)

#: No switch is checked at the door.
UNGATED = "ungated"
#: The feature switch only.
FEATURE = "feature"
#: The kill switch, then the feature switch.
TOOLS = "tools"

#: The gate of each REST action. A name that is not an action is not gated at the door: it
#: ends with ``unknown-action`` whatever the switches say.
ACTION_GATES = {
    GET_CONTEXT: FEATURE,
    INVOKE: UNGATED,
    ABORT: UNGATED,
    INSERT_INVOKE: UNGATED,
    INSERT_ABORT: UNGATED,
    RUN_INVOKE: UNGATED,
    RUN_ABORT: UNGATED,
}

#: The gate of each MCP tool after its input is checked; every other tool is gated by both.
#: The proposal tools check their input before the switches and apply both themselves.
MCP_TOOL_GATES = {
    "context_snapshot": FEATURE,
    "notebook_edit_cell": UNGATED,
    "notebook_insert_cell": UNGATED,
    "notebook_run_cell": UNGATED,
}


def action_gate(action: str) -> str:
    """The gate of ``POST copilot/api/actions/<action>``."""
    return ACTION_GATES.get(action, UNGATED)


def mcp_tool_gate(name: str) -> str:
    """The gate of one MCP tool call."""
    return MCP_TOOL_GATES.get(name, TOOLS)


@dataclass(frozen=True)
class Switches:
    """The two switches, each read at call time."""

    #: ``CopilotApp.enabled``: the feature switch.
    enabled: Callable[[], bool]
    #: Whether the kill switch is engaged now (any source says ``tools_enabled`` is false).
    tools_engaged: Callable[[], bool]

    def require(self, gate: str) -> None:
        """Refuse with ``kill-switch`` or ``feature-disabled`` unless ``gate`` lets the call in."""
        if gate == UNGATED:
            return
        if gate == TOOLS and self.tools_engaged():
            raise Refusal("kill-switch")
        if not self.enabled():
            raise Refusal("feature-disabled")

    def refusal(self, gate: str) -> str | None:
        """The code :meth:`require` would refuse with, or None."""
        try:
            self.require(gate)
        except Refusal as refusal:
            return refusal.code
        return None
