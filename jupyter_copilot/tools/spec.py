"""What a tool's spec holds (docs/protocol.md section 14, "Adding a tool").

A :class:`ToolSpec` says everything about one tool that is not its own logic: its name, its
MCP title and hints, the gate the switches apply at the MCP door and, for a tool that a
JupyterLab page serves, its :class:`PageTool` part: its telemetry kind, its approval card,
whether the page opens a review, and the service that holds its own checks
(:class:`~.service.ToolService`). The tools themselves are declared in ``toolspecs.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..admin.switches import TOOLS
from ..admin.telemetry import Telemetry
from ..protocol import vocabulary
from .service import ProposalHost, ToolService


@dataclass(frozen=True)
class Card:
    """The approval card of a tool (docs/protocol.md section 8)."""

    #: The card's kind, one of the vocabulary's ``approvalKinds``.
    kind: str
    #: What the card says the call will do; its details come from the tool's service.
    description: str
    #: Shown in every approval mode, to every caller (a run); otherwise only to the callers
    #: that ask before edits.
    always: bool = False


@dataclass(frozen=True)
class PageTool:
    """What a tool that a JupyterLab page serves adds to its spec."""

    #: The kind its events carry in ``operation`` (docs/protocol.md section 10).
    operation: str
    #: Builds the tool's own part from what the server lends it.
    service: Callable[[ProposalHost, Telemetry], ToolService]
    card: Card
    #: The page opens a review that the person keeps or undoes (section 6); otherwise the
    #: page's answer ends the call.
    opens_review: bool


@dataclass(frozen=True)
class ToolSpec:
    """One tool, declared once."""

    name: str
    #: The MCP ``title``.
    title: str
    #: The switches a call must pass at the MCP door once its input is checked: both
    #: (``TOOLS``), the feature switch only (``FEATURE``), or none (``UNGATED``, for a tool
    #: that checks its input first and applies both itself, docs/protocol.md section 5).
    gate: str = TOOLS
    #: The MCP ``destructive`` hint: the call can do anything (a run of code).
    destructive: bool = False
    #: Set for a tool that a JupyterLab page serves; such a tool is registered per kernel
    #: session and answers REST actions too.
    page: PageTool | None = None

    @property
    def read_only(self) -> bool:
        """Whether the tool only reads (the vocabulary's ``readOnly``)."""
        return self.name in vocabulary.READ_TOOLS

    @property
    def invoke_action(self) -> str:
        """The page action that runs the tool (docs/protocol.md section 1)."""
        return tool_action(self.name, "invoke")

    @property
    def abort_action(self) -> str:
        """The page action that withdraws a call of the tool."""
        return tool_action(self.name, "abort")

    def mcp_definition(self, description: str, input_schema: dict[str, Any]) -> dict[str, Any]:
        """The tool as ``tools/list`` shows it."""
        definition: dict[str, Any] = {
            "name": self.name,
            "title": self.title,
            "description": description,
            "readOnly": self.read_only,
        }
        if self.destructive:
            definition["destructive"] = True
        definition["inputSchema"] = input_schema
        return definition


def tool_action(tool: str, kind: str) -> str:
    """The vocabulary's action of ``kind`` (``invoke``, ``abort``) for ``tool``."""
    for action, about in vocabulary.VOCABULARY["actions"].items():
        if about.get("tool") == tool and about["kind"] == kind:
            return action  # type: ignore[no-any-return]
    raise KeyError(f"the vocabulary has no {kind} action for {tool}")
