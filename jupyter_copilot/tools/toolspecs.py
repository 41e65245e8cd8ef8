"""The tools, each declared once (docs/protocol.md section 14, "Adding a tool").

A :class:`~.spec.ToolSpec` says everything about one tool that is not its own logic: its name (the
one place Python spells it), its MCP title and hints, the gate the switches apply at the MCP
door and, for a tool that a JupyterLab page serves, its :class:`~.spec.PageTool` part: its telemetry
kind, its approval card, whether the page opens a review, and the service that holds its own
checks (:class:`~.service.ToolService`). A tool that only reads is declared here, with its
description and input schema in ``mcp/tools.json``. A tool that a page serves is declared in
its one spec file, ``manifests/tools/<name>.json``: the definition the registry serves (name,
description, parameters, the invoke and abort actions, which the vocabulary shared with the
lab extension gains from there) and its ``spec`` part (:func:`~.spec.page_spec`).

From :data:`TOOL_SPECS` the rest is derived: the tools registered per kernel session
(:data:`NOTEBOOK_TOOLS`), the proposal tools the app builds (:func:`build_proposal_tools`),
the REST actions they answer, the MCP tool list (:func:`mcp_definitions`) and each MCP
call's gate.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..admin.switches import FEATURE
from ..admin.telemetry import Telemetry
from ..page.dispatcher import Dispatcher
from ..page.sessions import Registrations
from ..protocol import vocabulary
from ..protocol.registry import CopilotRegistry, RegistryError
from .approvals import Approvals
from .proposals import ProposalTool
from .service import ProposalHost
from .spec import ToolSpec, page_spec, tool_action

#: The MCP definitions (description, input schema) of the tools no page serves.
MCP_DEFINITIONS_PATH = Path(__file__).parents[1] / "mcp" / "tools.json"


CONTEXT_SNAPSHOT = ToolSpec(
    "context_snapshot",
    "What can I see?",
    # It reads no content and tells an agent that tools are off: the kill switch spares it.
    gate=FEATURE,
)
READ_SELECTED_CELL = ToolSpec("notebook_read_selected_cell", "Read the selected cell")
READ_CELLS = ToolSpec("notebook_read_cells", "Read the notebook in pages")
LIST_VARIABLES = ToolSpec("notebook_list_variables", "List the kernel's variables")
DESCRIBE_VARIABLE = ToolSpec("notebook_describe_variable", "Describe one kernel variable")
#: The tools a page serves, each declared in its spec file (``manifests/tools/<name>.json``),
#: in the order of their file names.
PAGE_TOOLS: tuple[ToolSpec, ...] = tuple(page_spec(d) for d in vocabulary.read_page_tools())
SKILL_READ = ToolSpec("skill_read", "Load a skill")

#: Every tool, in the order ``tools/list`` shows them.
TOOL_SPECS: tuple[ToolSpec, ...] = (
    CONTEXT_SNAPSHOT,
    READ_SELECTED_CELL,
    READ_CELLS,
    LIST_VARIABLES,
    DESCRIBE_VARIABLE,
    *PAGE_TOOLS,
    SKILL_READ,
)
#: The tools a page serves: registered once per kernel session (docs/protocol.md section 2).
NOTEBOOK_TOOLS: tuple[ToolSpec, ...] = tuple(s for s in TOOL_SPECS if s.page is not None)
#: Each tool's spec by name.
SPECS_BY_NAME: Mapping[str, ToolSpec] = {s.name: s for s in TOOL_SPECS}


def mcp_definitions(registry: CopilotRegistry) -> list[dict[str, Any]]:
    """The MCP tool list: each spec with the description and input schema of its file."""
    others = {d["name"]: d for d in json.loads(MCP_DEFINITIONS_PATH.read_text(encoding="utf-8"))}
    listed = []
    for spec in TOOL_SPECS:
        if spec.page is not None:
            definition = registry.tool(spec.name)
            listed.append(spec.mcp_definition(definition["description"], definition["parameters"]))
        else:
            definition = others[spec.name]
            listed.append(spec.mcp_definition(definition["description"], definition["inputSchema"]))
    return listed


def build_proposal_tools(
    registry: CopilotRegistry,
    dispatcher: Dispatcher,
    registrations: Registrations,
    telemetry: Telemetry,
    host: ProposalHost,
    approvals: Approvals,
) -> dict[str, ProposalTool]:
    """One :class:`ProposalTool` per tool a page serves, by name.

    Refuses (:class:`RegistryError`) when a tool's definition file names other actions
    than the vocabulary gives it: the page would answer a different action.
    """
    tools = {}
    for spec in NOTEBOOK_TOOLS:
        assert spec.page is not None
        definition = registry.tool(spec.name)
        for kind in ("invoke", "abort"):
            if definition[kind]["action"] != tool_action(spec.name, kind):
                raise RegistryError(
                    f"{spec.name}: its definition's {kind} action is not the vocabulary's"
                )
        tools[spec.name] = ProposalTool(
            spec,
            spec.page.service(host, telemetry),
            definition["parameters"],
            dispatcher,
            registrations,
            telemetry,
            host,
            approvals,
        )
    return tools
