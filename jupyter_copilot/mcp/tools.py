"""The MCP tools: what each one checks and reads, without the MCP transport.

:class:`CopilotTools` answers ``tools/list`` and runs ``tools/call`` for one caller. Every
call checks, in order: the input against the tool's schema (``invalid-input``), the kill
switch and the feature switch, then the caller's context grants (``blocked``), and only
then asks the JupyterLab page. ``context_snapshot`` is the one tool the kill switch does not
stop: it reads no content and tells an agent that tools are off. Reads go through the
notebook service; edits, inserts and runs through their proposal tools (``proposals.py``):
the same services the REST actions use. Each tool's gate and place in the list come from its
spec (``toolspecs.py``). A run of a cell always shows its run card, whatever the caller's
approval mode.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import jsonschema

from ..admin.switches import Switches
from ..page.cellpages import parse_cursor
from ..page.context import SELECTED_CELL, VIEW_STATE
from ..page.kernelvars import KernelVariables
from ..page.notebook import NotebookReader
from ..protocol.callers import (
    ACTIVE_NOTEBOOK,
    CELL_OUTPUTS,
    INTERACTIVE,
    KERNEL_VARIABLES,
    NOTEBOOK_REFS,
    Caller,
)
from ..protocol.callers import SELECTED_CELL as SELECTED_CELL_REF
from ..protocol.refusals import Refusal
from ..protocol.registry import READ_CELLS, schema_problem
from ..tools import toolspecs
from ..tools.proposals import ProposalTool
from .skills import SkillLibrary

__all__ = ["READ_CELLS", "CopilotTools", "ToolsHost"]

#: One tool call: the caller and the arguments in, the result out.
Call = Callable[[Caller, dict[str, Any]], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class ToolsHost:
    """What the tools ask of the server, each read at call time."""

    switches: Switches
    skills: Callable[[], SkillLibrary]
    #: The active notebook's kernel variables (``kernelvars.py``); None where no server runs.
    variables: KernelVariables | None = None


class CopilotTools:
    """The tool list and the tool calls of the MCP endpoint.

    ``definitions`` is the list of :func:`~..toolspecs.mcp_definitions`; ``proposals`` the
    proposal tools by name. Every tool a page serves runs through its proposal tool; every
    other tool is read here.
    """

    def __init__(
        self,
        definitions: list[dict[str, Any]],
        notebook: NotebookReader,
        proposals: Mapping[str, ProposalTool],
        host: ToolsHost,
    ) -> None:
        self.definitions = definitions
        self.definitions_by_name = {d["name"]: d for d in self.definitions}
        self._validators = {
            d["name"]: jsonschema.Draft202012Validator(d["inputSchema"])
            for d in self.definitions
            if toolspecs.SPECS_BY_NAME[d["name"]].page is None
        }
        self.notebook = notebook
        self.host = host
        reads: dict[str, Call] = {
            toolspecs.CONTEXT_SNAPSHOT.name: self._context_snapshot,
            toolspecs.READ_SELECTED_CELL.name: self._read_selected_cell,
            toolspecs.READ_CELLS.name: self._read_cells,
            toolspecs.LIST_VARIABLES.name: self._list_variables,
            toolspecs.DESCRIBE_VARIABLE.name: self._describe_variable,
            toolspecs.SKILL_READ.name: self._skill_read,
        }
        self._calls: dict[str, Call] = {
            d["name"]: (
                functools.partial(self._propose, proposals[d["name"]])
                if d["name"] in proposals
                else reads[d["name"]]
            )
            for d in self.definitions
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
        spec = toolspecs.SPECS_BY_NAME[name]
        if spec.page is None:
            # A proposal tool checks its own input first, in the contract's order.
            self._check_input(name, arguments)
        self.host.switches.require(spec.gate)
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

    async def _list_variables(self, caller: Caller, _: dict[str, Any]) -> dict[str, Any]:
        caller.require(KERNEL_VARIABLES)
        return await self._variables().list()

    async def _describe_variable(self, caller: Caller, arguments: dict[str, Any]) -> dict[str, Any]:
        caller.require(KERNEL_VARIABLES)
        return await self._variables().describe(arguments["name"])

    def _variables(self) -> KernelVariables:
        if self.host.variables is None:
            raise Refusal("no-active-session", "This server has no kernels to read.")
        return self.host.variables

    async def _propose(
        self, tool: ProposalTool, caller: Caller, arguments: dict[str, Any]
    ) -> dict[str, Any]:
        """Run a proposal tool, asking the person first in an interactive conversation."""
        call_id = f"mcp-{uuid.uuid4().hex}"
        try:
            return await tool.invoke(
                caller,
                arguments,
                call_id,
                approve=tool.approval(caller) if caller.approval_mode == INTERACTIVE else None,
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
