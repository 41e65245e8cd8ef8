"""What a tool's spec holds (docs/protocol.md section 14, "Adding a tool").

A :class:`ToolSpec` says everything about one tool that is not its own logic: its name, its
MCP title and hints, the gate the switches apply at the MCP door and, for a tool that a
JupyterLab page serves, its :class:`PageTool` part: its telemetry kind, its approval card,
whether the page opens a review, and the service that holds its own checks
(:class:`~.service.ToolService`). The tools themselves are declared in ``toolspecs.py``; a
tool that a page serves is declared in its spec file, ``manifests/tools/<name>.json``
(:func:`page_spec`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..admin.switches import TOOLS, UNGATED
from ..admin.telemetry import Telemetry
from ..protocol import vocabulary
from ..protocol.registry import RegistryError
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


#: The keys of a spec file's ``spec`` part, and of its ``card`` (docs/protocol.md section 14).
SPEC_KEYS = frozenset(
    {"$comment", "title", "destructive", "operation", "service", "card", "opensReview"}
)
CARD_KEYS = frozenset({"kind", "description", "always"})
#: Where a service may live: the package's own tools, never a module a file could name.
SERVICE_PACKAGE = "jupyter_copilot.tools."


def page_spec(definition: dict[str, Any]) -> ToolSpec:
    """The spec of a tool that a page serves, from its spec file: the tool definition the
    registry serves (name, description, parameters, the invoke and abort actions) and its
    ``spec`` part (MCP title and hint, telemetry kind, service, card, review).

    A page's tool checks its input first and applies both switches itself
    (docs/protocol.md section 5): its gate at the MCP door is ``UNGATED``. A part that lacks
    a key, has an unknown one or one of the wrong type raises :class:`RegistryError`: the
    extension must not load.
    """
    name = definition.get("name")
    part = definition.get("spec")
    if not isinstance(name, str) or not isinstance(part, dict):
        raise RegistryError(f"the spec file of {name!r} has no spec part")
    card = part.get("card")
    problems = sorted(set(part) - SPEC_KEYS) + sorted(set(card or {}) - CARD_KEYS)
    expected: list[tuple[Any, type]] = [
        (part.get("title"), str),
        (part.get("destructive", False), bool),
        (part.get("operation"), str),
        (part.get("service"), str),
        (part.get("opensReview"), bool),
        (card, dict),
    ]
    if isinstance(card, dict):
        expected += [
            (card.get("kind"), str),
            (card.get("description"), str),
            (card.get("always", False), bool),
        ]
    if problems or any(not isinstance(value, kind) for value, kind in expected):
        raise RegistryError(f"the spec part of {name} is not valid: {problems or 'a value'}")
    assert isinstance(card, dict)
    return ToolSpec(
        name,
        part["title"],
        gate=UNGATED,
        destructive=part.get("destructive", False),
        page=PageTool(
            operation=part["operation"],
            service=service_of(name, part["service"]),
            card=Card(card["kind"], card["description"], always=card.get("always", False)),
            opens_review=part["opensReview"],
        ),
    )


def service_of(name: str, path: str) -> Callable[[ProposalHost, Telemetry], ToolService]:
    """The service class a spec names as ``module:Class``, in ``jupyter_copilot.tools``."""
    module, _, attribute = path.partition(":")
    if not module.startswith(SERVICE_PACKAGE) or not attribute:
        raise RegistryError(f"the service of {name} is not a class of {SERVICE_PACKAGE}<module>")
    try:
        service = getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError) as e:
        raise RegistryError(f"the service of {name} cannot be found: {e}") from e
    if not callable(service):
        raise RegistryError(f"the service of {name} is not a class")
    return service  # type: ignore[no-any-return]
