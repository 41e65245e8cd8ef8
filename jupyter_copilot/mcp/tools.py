"""The MCP tools: what each one checks and reads, without the MCP transport.

:class:`CopilotTools` answers ``tools/list`` and runs ``tools/call`` for one caller. Every
call checks, in order: the input against the tool's schema (``invalid-input``), the kill
switch and the feature switch, then the caller's context grants (``blocked``), and only
then asks the JupyterLab page. ``context_snapshot`` is the one tool the kill switch does not
stop: it reads no content and tells an agent that tools are off.
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

from ..actions import ActionBody, ActionRunner, Caller
from ..approvals import Approvals
from ..bridge import PageSession
from ..context import SELECTED_CELL, VIEW_STATE
from ..dispatcher import Dispatcher
from ..edit_tool import EditTool
from ..refusals import Refusal
from ..registry import first_error, schema_problem
from ..skills import SkillLibrary
from .cellpages import build_page, parse_cursor, served_cells
from .grants import ACTIVE_NOTEBOOK, CELL_OUTPUTS, INTERACTIVE, NOTEBOOK_REFS, McpCaller
from .grants import SELECTED_CELL as SELECTED_CELL_REF

READ_CELLS = "jupyter_copilot.notebook.read-cells"
EDIT_CELL = "notebook_edit_cell"
APPROVAL_DESCRIPTION = "Open a whole-cell diff for the attached notebook cell"

_DEFINITIONS = json.loads((Path(__file__).parent / "tools.json").read_text(encoding="utf-8"))

#: The smallest cell a page can list costs more than this many bytes (index, ids, hash).
_MIN_CELL_BYTES = 40


@dataclass(frozen=True)
class ToolsHost:
    """What the tools ask of the server, each read at call time."""

    enabled: Callable[[], bool]
    tools_engaged: Callable[[], bool]
    artifact_id: Callable[[str], str | None]
    settings: Callable[[], dict[str, Any]]
    remember_served: Callable[[dict[str, Any]], None]
    skills: Callable[[], SkillLibrary]


class CopilotTools:
    """The tool list and the tool calls of the MCP endpoint."""

    def __init__(
        self,
        edit_definition: dict[str, Any],
        dispatcher: Dispatcher,
        runner: ActionRunner,
        edit_tool: EditTool,
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
        self.definitions: list[dict[str, Any]] = [*_DEFINITIONS[:3], edit, _DEFINITIONS[3]]
        self.definitions_by_name = {d["name"]: d for d in self.definitions}
        self._validators = {
            d["name"]: jsonschema.Draft202012Validator(d["inputSchema"])
            for d in self.definitions
            if d["name"] != EDIT_CELL
        }
        self.dispatcher = dispatcher
        self.runner = runner
        self.edit_tool = edit_tool
        self.approvals = approvals
        self.host = host
        self._calls: dict[str, Callable[[McpCaller, dict[str, Any]], Awaitable[dict[str, Any]]]]
        self._calls = {
            "context_snapshot": self._context_snapshot,
            "notebook_read_selected_cell": self._read_selected_cell,
            "notebook_read_cells": self._read_cells,
            EDIT_CELL: self._edit_cell,
            "skill_read": self._skill_read,
        }

    def listed(self) -> list[dict[str, Any]]:
        """The tools as listed; none while the feature switch is off."""
        return list(self.definitions) if self.host.enabled() else []

    async def call(self, caller: McpCaller, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
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
        if name != EDIT_CELL:
            # The edit tool checks its own input first, in the contract's order.
            self._check_input(name, arguments)
            if name != "context_snapshot" and self.host.tools_engaged():
                raise Refusal("kill-switch")
            if not self.host.enabled():
                raise Refusal("feature-disabled")
        return await run(caller, arguments)

    def _check_input(self, name: str, arguments: dict[str, Any]) -> None:
        problem = schema_problem(self._validators[name], arguments)
        if problem is not None:
            raise Refusal("invalid-input", f"The tool input is not valid: {problem}.")

    # -- the tools ---------------------------------------------------------------------------

    async def _context_snapshot(self, caller: McpCaller, _: dict[str, Any]) -> dict[str, Any]:
        snapshot: dict[str, Any] = {
            **caller.grants_json(),
            "toolsEnabled": not self.host.tools_engaged(),
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
        self, caller: McpCaller, arguments: dict[str, Any]
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
            page = await self._page_of_cells(cell["artifactId"], cell["cellId"], True, 1)
            listed = page["cells"][0] if page["cells"] else {}
            if listed.get("expectedSourceHash") == cell["expectedSourceHash"]:
                for key in ("outputs", "outputsOmitted"):
                    if key in listed:
                        cell[key] = listed[key]
        return {"cell": cell}

    async def _read_cells(self, caller: McpCaller, arguments: dict[str, Any]) -> dict[str, Any]:
        caller.require(ACTIVE_NOTEBOOK)
        include_outputs = arguments.get("includeOutputs", False)
        if include_outputs:
            caller.require(CELL_OUTPUTS)
        start_cell = None
        cursor_artifact = None
        if "cursor" in arguments:
            cursor_artifact, start_cell = parse_cursor(arguments["cursor"])
        return await self._page_of_cells(cursor_artifact, start_cell, include_outputs, None)

    async def _edit_cell(self, caller: McpCaller, arguments: dict[str, Any]) -> dict[str, Any]:
        async def approve(page: PageSession, path: str, data: dict[str, Any], abort: Any) -> None:
            await self.approvals.ask(
                owner=caller.principal,
                page=page,
                path=path,
                tool=EDIT_CELL,
                description=APPROVAL_DESCRIPTION,
                details={
                    "artifactId": data["artifactId"],
                    "cellId": data["cellId"],
                    "newSourceBytes": len(data["newSource"].encode("utf-8")),
                },
                caller_kind=caller.kind,
                abort=abort,
                group=caller.scope or None,
            )

        edit_caller = Caller(
            may_write=caller.may_write,
            mode=caller.approval_mode,
            approve=approve if caller.approval_mode == INTERACTIVE else None,
        )
        call_id = f"mcp-{uuid.uuid4().hex}"
        body = ActionBody(arguments, None, call_id)
        try:
            return await self.edit_tool.invoke(edit_caller, body)
        except BaseException:
            # A client that cancels the request (or a server stop) must not leave a card or
            # a review behind; aborting a call that already ended changes nothing.
            with anyio.CancelScope(shield=True):
                await self.edit_tool.abort(ActionBody({"callId": call_id}, None, None))
            raise

    async def _skill_read(self, caller: McpCaller, arguments: dict[str, Any]) -> dict[str, Any]:
        return self.host.skills().read(arguments["skillId"], caller.agent)

    # -- reading from the page ---------------------------------------------------------------

    async def read_cell(self, artifact_id: str, cell_id: str) -> dict[str, Any]:
        """One cell of the active notebook, read live: a person's attachment.

        Refuses like ``notebook_read_cells`` (``artifact-mismatch`` when the notebook is no
        longer the active one), ``cell-not-found`` when the cell is gone and ``over-budget``
        when it does not fit the context budget.
        """
        page = await self._page_of_cells(artifact_id, cell_id, False, 1)
        cells = page["cells"]
        if not cells or cells[0]["cellId"] != cell_id:
            raise Refusal("cell-not-found", "The attached cell is no longer in the notebook.")
        cell = dict(cells[0])
        if "omitted" in cell:
            raise Refusal(
                "over-budget",
                "The attached cell is larger than the context budget; it cannot be sent.",
            )
        cell["artifactId"] = artifact_id
        return cell

    async def _context_entries(self, caller: McpCaller) -> dict[str, dict[str, Any]]:
        served = await self.runner.get_context(
            Caller(may_write=caller.may_write), ActionBody({}, None, None)
        )
        return {entry["name"]: entry for entry in served["customContext"]}

    async def _page_of_cells(
        self,
        expected_artifact: str | None,
        start_cell: str | None,
        include_outputs: bool,
        max_cells: int | None,
    ) -> dict[str, Any]:
        settings = self.host.settings()
        budget = settings["context_budget_bytes"]
        page = self.dispatcher.resolve()
        active = (page.state or {}).get("activeNotebook")
        if not active or active.get("viewType") != "notebook":
            raise Refusal("not-authoring-view", "The active tab is not a notebook.")
        artifact_id = self.host.artifact_id(active["path"])
        if artifact_id is None:
            raise Refusal("not-authoring-view", "The active notebook cannot be identified.")
        if expected_artifact is not None and expected_artifact != artifact_id:
            raise Refusal(
                "artifact-mismatch",
                "The active notebook is not the one this cursor belongs to; start again "
                "without a cursor.",
            )
        raw = await page.request(
            READ_CELLS,
            {
                "path": active["path"],
                "startCellId": start_cell,
                "maxCells": max_cells or budget // _MIN_CELL_BYTES + 2,
                "maxBytes": budget,
                "includeOutputs": include_outputs,
            },
            settings["page_timeout_seconds"],
        )
        if first_error("read-cells-result", raw) is not None:
            raise Refusal("timeout", "The JupyterLab page answered with something unusable.")
        built = build_page(raw, artifact_id, budget, include_outputs)
        for cell in served_cells(built):
            self.host.remember_served(
                {
                    "artifactId": artifact_id,
                    "cellId": cell["cellId"],
                    "expectedSourceHash": cell["expectedSourceHash"],
                    "cellType": cell["cellType"],
                }
            )
        return built
