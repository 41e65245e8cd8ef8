"""The tools, each declared once (docs/protocol.md section 14, "Adding a tool").

A :class:`~.spec.ToolSpec` says everything about one tool that is not its own logic: its name (the
one place Python spells it), its MCP title and hints, the gate the switches apply at the MCP
door and, for a tool that a JupyterLab page serves, its :class:`~.spec.PageTool` part: its telemetry
kind, its approval card, whether the page opens a review, and the service that holds its own
checks (:class:`~.service.ToolService`). Its page actions come from the vocabulary
(``schemas/vocabulary.json``, shared with the lab extension) and its description and input
schema from its definition file (``manifests/tools/<name>.json`` for a page's tool,
``mcp/tools.json`` for the others).

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

from ..admin.switches import FEATURE, UNGATED
from ..admin.telemetry import Telemetry
from ..page.dispatcher import Dispatcher
from ..page.sessions import Registrations
from ..protocol.registry import CopilotRegistry, RegistryError
from .approvals import Approvals
from .edit_tool import EditCell
from .insert_tool import InsertCell
from .proposals import ProposalTool
from .run_tool import RunCell
from .service import ProposalHost
from .spec import Card, PageTool, ToolSpec, tool_action

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
EDIT_CELL = ToolSpec(
    "notebook_edit_cell",
    "Propose a whole-cell edit",
    gate=UNGATED,
    page=PageTool(
        operation="whole-cell-diff",
        service=EditCell,
        card=Card("edit", "Open a whole-cell diff for the attached notebook cell"),
        opens_review=True,
    ),
)
INSERT_CELL = ToolSpec(
    "notebook_insert_cell",
    "Propose a new cell",
    gate=UNGATED,
    page=PageTool(
        operation="insert-cell",
        service=InsertCell,
        card=Card("edit", "Show a new cell in the active notebook, pending until Keep"),
        opens_review=True,
    ),
)
RUN_CELL = ToolSpec(
    "notebook_run_cell",
    "Ask to run a cell",
    gate=UNGATED,
    # Code can do anything its kernel may; the person allows each run.
    destructive=True,
    page=PageTool(
        operation="run-cell",
        service=RunCell,
        # There is no Autopilot for running code.
        card=Card("run", "Run one cell of the active notebook in its kernel", always=True),
        opens_review=False,
    ),
)
SKILL_READ = ToolSpec("skill_read", "Load a skill")

#: Every tool, in the order ``tools/list`` shows them.
TOOL_SPECS: tuple[ToolSpec, ...] = (
    CONTEXT_SNAPSHOT,
    READ_SELECTED_CELL,
    READ_CELLS,
    LIST_VARIABLES,
    DESCRIBE_VARIABLE,
    EDIT_CELL,
    INSERT_CELL,
    RUN_CELL,
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
