"""The MCP tools: what each one checks and reads, without the MCP transport.

:class:`CopilotTools` answers ``tools/list`` and runs ``tools/call`` for one caller. Every
call checks, in order: the input against the tool's schema (``invalid-input``), the kill
switch and the feature switch, then the caller's context grants (``blocked``), and only
then asks the JupyterLab page. ``context_snapshot`` is the one tool the kill switch does not
stop: it reads no content and tells an agent that tools are off. Reads go through the
notebook service, edits and inserts through their proposal tools (``proposals.py``): the
same services the REST actions use. A run of a cell always shows its run card, whatever
the caller's approval mode.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import jsonschema

from ..approvals import Approvals
from ..bridge import PageSession
from ..callers import ACTIVE_NOTEBOOK, CELL_OUTPUTS, INTERACTIVE, NOTEBOOK_REFS, Caller
from ..callers import SELECTED_CELL as SELECTED_CELL_REF
from ..context import SELECTED_CELL, VIEW_STATE
from ..edit_tool import EditTool
from ..insert_tool import INSERT_CELL, InsertTool
from ..notebook import NotebookReader
from ..proposals import ProposalTool
from ..refusals import Refusal
from ..registry import READ_CELLS, schema_problem
from ..run_tool import RUN_CELL, RunTool
from ..skills import SkillLibrary
from ..switches import Switches, mcp_tool_gate
from .cellpages import parse_cursor

__all__ = ["READ_CELLS", "CopilotTools", "ToolsHost"]

EDIT_CELL = "notebook_edit_cell"
APPROVAL_DESCRIPTION = "Open a whole-cell diff for the attached notebook cell"
INSERT_APPROVAL_DESCRIPTION = "Show a new cell in the active notebook, pending until Keep"
#: The tools that check their own input, in the contract's order, before the switches.
PROPOSAL_TOOLS = frozenset({EDIT_CELL, INSERT_CELL, RUN_CELL})

_DEFINITIONS = json.loads((Path(__file__).parent / "tools.json").read_text(encoding="utf-8"))


@dataclass(frozen=True)
class ToolsHost:
    """What the tools ask of the server, each read at call time."""

    switches: Switches
    skills: Callable[[], SkillLibrary]


class CopilotTools:
    """The tool list and the tool calls of the MCP endpoint."""

    def __init__(
        self,
        edit_definition: dict[str, Any],
        insert_definition: dict[str, Any],
        run_definition: dict[str, Any],
        notebook: NotebookReader,
        edit_tool: EditTool,
        insert_tool: InsertTool,
        run_tool: RunTool,
        approvals: Approvals,
        host: ToolsHost,
    ) -> None:
        edit = {
            "name": EDIT_CELL,
            "title": "Propose a whole-cell edit",
            "description": edit_definition["description"],
            "readOnly": False,
            "inputSchema": edit_definition["parameters"],
        }
        insert = {
            "name": INSERT_CELL,
            "title": "Propose a new cell",
            "description": insert_definition["description"],
            "readOnly": False,
            "inputSchema": insert_definition["parameters"],
        }
        run = {
            "name": RUN_CELL,
            "title": "Ask to run a cell",
            "description": run_definition["description"],
            "readOnly": False,
            # Code can do anything its kernel may; the person allows each run.
            "destructive": True,
            "inputSchema": run_definition["parameters"],
        }
        self.definitions: list[dict[str, Any]] = [
            *_DEFINITIONS[:3],
            edit,
            insert,
            run,
            _DEFINITIONS[3],
        ]
        self.definitions_by_name = {d["name"]: d for d in self.definitions}
        self._validators = {
            d["name"]: jsonschema.Draft202012Validator(d["inputSchema"])
            for d in self.definitions
            if d["name"] not in PROPOSAL_TOOLS
        }
        self.notebook = notebook
        self.edit_tool = edit_tool
        self.insert_tool = insert_tool
        self.run_tool = run_tool
        self.approvals = approvals
        self.host = host
        self._calls: dict[str, Callable[[Caller, dict[str, Any]], Awaitable[dict[str, Any]]]]
        self._calls = {
            "context_snapshot": self._context_snapshot,
            "notebook_read_selected_cell": self._read_selected_cell,
            "notebook_read_cells": self._read_cells,
            EDIT_CELL: self._edit_cell,
            INSERT_CELL: self._insert_cell,
            RUN_CELL: self._run_cell,
            "skill_read": self._skill_read,
        }

    def listed(self) -> list[dict[str, Any]]:
        """The tools as listed; none while the feature switch is off."""
        return list(self.definitions) if self.host.switches.enabled() else []

    async def call(self, caller: Caller, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Run one tool call; raises :class:`Refusal` with a contract code."""
        run = self._calls.get(name)
        if run is None:
            raise Refusal("unknown-action", "There is no tool by that name.")
        if caller.kind == "conversation" and not caller.context_refs & set(NOTEBOOK_REFS):
            # Grants can be taken away mid-conversation: with none left, no tool answers.
            raise Refusal(
                "blocked",
                "This conversation grants no notebook context now, so its tools are off "
                "until the person grants one under Context.",
            )
        if name not in PROPOSAL_TOOLS:
            # A proposal tool checks its own input first, in the contract's order.
            self._check_input(name, arguments)
        self.host.switches.require(mcp_tool_gate(name))
        return await run(caller, arguments)

    def _check_input(self, name: str, arguments: dict[str, Any]) -> None:
        problem = schema_problem(self._validators[name], arguments)
        if problem is not None:
            raise Refusal("invalid-input", f"The tool input is not valid: {problem}.")

    # -- the tools ---------------------------------------------------------------------------

    async def _context_snapshot(self, caller: Caller, _: dict[str, Any]) -> dict[str, Any]:
        snapshot: dict[str, Any] = {
            **caller.grants_json(),
            "toolsEnabled": not self.host.switches.tools_engaged(),
            "notebook": None,
            "selectedCell": None,
        }
        entries = await self._context_entries(caller)
        view = entries.get(VIEW_STATE)
        if view is None:
            return snapshot
        snapshot["notebook"] = dict(view["value"])
        cell = entries.get(SELECTED_CELL)
        if cell is not None:
            value = cell["value"]
            omitted = cell.get("omitted")
            snapshot["selectedCell"] = {
                "cellId": value["cellId"],
                "cellType": value["cellType"],
                "language": value["language"],
                "sourceBytes": (
                    omitted["sourceBytes"] if omitted else len(value["source"].encode("utf-8"))
                ),
                "readable": SELECTED_CELL_REF in caller.context_refs and omitted is None,
            }
        return snapshot

    async def _read_selected_cell(
        self, caller: Caller, arguments: dict[str, Any]
    ) -> dict[str, Any]:
        caller.require(SELECTED_CELL_REF)
        include_outputs = arguments.get("includeOutputs", False)
        if include_outputs:
            caller.require(CELL_OUTPUTS)
        entries = await self._context_entries(caller)
        entry = entries.get(SELECTED_CELL)
        if entry is None:
            view = entries.get(VIEW_STATE)
            count = view["value"]["selectedCellCount"] if view else 0
            return {
                "cell": None,
                "reason": "No notebook is active."
                if view is None
                else (f"{count} cells are selected; the person must select exactly one."),
            }
        cell = dict(entry["value"])
        if "omitted" in entry:
            cell["omitted"] = entry["omitted"]
        elif include_outputs:
            page = await self.notebook.read_cells(cell["artifactId"], cell["cellId"], True, 1)
            listed = page["cells"][0] if page["cells"] else {}
            if listed.get("expectedSourceHash") == cell["expectedSourceHash"]:
                for key in ("outputs", "outputsOmitted"):
                    if key in listed:
                        cell[key] = listed[key]
        return {"cell": cell}

    async def _read_cells(self, caller: Caller, arguments: dict[str, Any]) -> dict[str, Any]:
        caller.require(ACTIVE_NOTEBOOK)
        include_outputs = arguments.get("includeOutputs", False)
        if include_outputs:
            caller.require(CELL_OUTPUTS)
        start_cell = None
        cursor_artifact = None
        if "cursor" in arguments:
            cursor_artifact, start_cell = parse_cursor(arguments["cursor"])
        return await self.notebook.read_cells(cursor_artifact, start_cell, include_outputs, None)

    async def _edit_cell(self, caller: Caller, arguments: dict[str, Any]) -> dict[str, Any]:
        def details(data: dict[str, Any]) -> dict[str, Any]:
            return {
                "artifactId": data["artifactId"],
                "cellId": data["cellId"],
                "newSourceBytes": len(data["newSource"].encode("utf-8")),
            }

        return await self._propose(self.edit_tool, caller, arguments, APPROVAL_DESCRIPTION, details)

    async def _insert_cell(self, caller: Caller, arguments: dict[str, Any]) -> dict[str, Any]:
        def details(data: dict[str, Any]) -> dict[str, Any]:
            # The anchor is not the cell being changed, so the card names no cell.
            return {
                "artifactId": data["artifactId"],
                "newSourceBytes": len(data["source"].encode("utf-8")),
            }

        return await self._propose(
            self.insert_tool, caller, arguments, INSERT_APPROVAL_DESCRIPTION, details
        )

    async def _run_cell(self, caller: Caller, arguments: dict[str, Any]) -> dict[str, Any]:
        # The run tool asks the person with its own run card in every mode.
        return await self._propose(self.run_tool, caller, arguments, "", lambda data: {})

    async def _propose(
        self,
        tool: ProposalTool,
        caller: Caller,
        arguments: dict[str, Any],
        description: str,
        details: Callable[[dict[str, Any]], dict[str, Any]],
    ) -> dict[str, Any]:
        """Run a proposal tool, asking the person first in an interactive conversation."""

        async def approve(page: PageSession, path: str, data: dict[str, Any], abort: Any) -> None:
            await self.approvals.ask(
                owner=caller.principal,
                page=page,
                path=path,
                tool=tool.name,
                description=description,
                details=details(data),
                caller_kind=caller.kind,
                abort=abort,
                group=caller.scope or None,
            )

        call_id = f"mcp-{uuid.uuid4().hex}"
        try:
            return await tool.invoke(
                caller,
                arguments,
                call_id,
                approve=approve if caller.approval_mode == INTERACTIVE else None,
            )
        except BaseException:
            # A client that cancels the request (or a server stop) must not leave a card or
            # a review behind; aborting a call that already ended changes nothing.
            with anyio.CancelScope(shield=True):
                await tool.abort({"callId": call_id})
            raise

    async def _skill_read(self, caller: Caller, arguments: dict[str, Any]) -> dict[str, Any]:
        return self.host.skills().read(arguments["skillId"], caller.agent)

    # -- reading from the page ---------------------------------------------------------------

    async def _context_entries(self, caller: Caller) -> dict[str, dict[str, Any]]:
        entries = await self.notebook.context(caller)
        return {entry["name"]: entry for entry in entries}
