"""The feature switch and the kill switch, and which of them gates what.

The gates are named here, with the documented exceptions (docs/protocol.md sections 3, 4.3,
5 and 8): status always answers; get-context is not stopped by the kill switch; abort is
never refused by either switch; an edit, an insert or a run checks its input before the
switches, so its tool applies both itself. Each MCP tool's gate is part of its spec
(``toolspecs.py``: ``context_snapshot`` is the one the kill switch spares).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..protocol.refusals import Refusal
from ..protocol.registry import GET_CONTEXT

#: No switch is checked at the door.
UNGATED = "ungated"
#: The feature switch only.
FEATURE = "feature"
#: The kill switch, then the feature switch.
TOOLS = "tools"

#: The gate of each REST action but the tools' invokes and aborts, which check their input
#: first (ungated at the door). A name that is not an action is not gated at the door: it
#: ends with ``unknown-action`` whatever the switches say.
ACTION_GATES = {GET_CONTEXT: FEATURE}


def action_gate(action: str) -> str:
    """The gate of ``POST copilot/api/actions/<action>``."""
    return ACTION_GATES.get(action, UNGATED)


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
