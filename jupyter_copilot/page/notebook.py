"""Reading the active notebook: the service that REST actions and MCP tools both call.

Every read asks the page that answers the call (the dispatcher picks it) for its live state
at call time and builds the answer here: the context entries of docs/protocol.md section 4.1
and the budgeted pages of cells of ``notebook_read_cells`` (section 8). Cells served with
their source and hash are remembered, so that an edit knows the cell type they were served
with. Telemetry of a transport (REST or MCP) is the caller's business.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..protocol.callers import Caller
from ..protocol.refusals import Refusal
from ..protocol.registry import GET_CONTEXT, READ_CELLS, first_error
from .bridge import PageSession
from .cellpages import build_page, served_cells
from .context import SELECTED_CELL, ServedCells, build_context
from .dispatcher import Dispatcher

#: The smallest cell a page can list costs more than this many bytes (index, ids, hash).
_MIN_CELL_BYTES = 40


class NotebookReader:
    """Context and cells of the active notebook, read live from its page."""

    def __init__(
        self,
        dispatcher: Dispatcher,
        artifact_id: Callable[[str], str | None],
        settings: Callable[[], dict[str, Any]],
        served: ServedCells,
    ) -> None:
        self.dispatcher = dispatcher
        self._artifact_id = artifact_id
        self._settings = settings
        self._served = served

    def context_page(self, page_id: str | None = None) -> PageSession | None:
        """The page that answers get-context; None when none is connected and none was named.

        Without ``page_id`` and with no page connected there is no context rather than a
        refusal (docs/protocol.md section 4.1).
        """
        if page_id is None and not self.dispatcher.pages():
            return None
        return self.dispatcher.resolve(page_id)

    async def context(self, caller: Caller, page_id: str | None = None) -> list[dict[str, Any]]:
        """The context entries of the active notebook, as get-context serves them."""
        return await self.entries(caller, self.context_page(page_id))

    async def entries(self, caller: Caller, page: PageSession | None) -> list[dict[str, Any]]:
        """The context entries that ``page`` reports now (none without a page)."""
        if page is None:
            return []
        settings = self._settings()
        data = await page.request(GET_CONTEXT, {}, settings["page_timeout_seconds"])
        if first_error("get-context-result", data) is not None:
            raise Refusal("timeout", "The JupyterLab page answered with something unusable.")
        active = data["activeNotebook"]
        if active is None:
            return []
        entries = build_context(
            active,
            self._artifact_id(active["path"]),
            may_write=await caller.may_write(),
            budget_bytes=settings["context_budget_bytes"],
        )
        for entry in entries:
            if entry["name"] == SELECTED_CELL and "omitted" not in entry:
                value = entry["value"]
                self._remember(
                    value["artifactId"],
                    value["cellId"],
                    value["expectedSourceHash"],
                    value["cellType"],
                )
        return entries

    async def read_cells(
        self,
        expected_artifact: str | None,
        start_cell: str | None,
        include_outputs: bool,
        max_cells: int | None,
    ) -> dict[str, Any]:
        """One page of cells of the active notebook, within the context budget."""
        settings = self._settings()
        budget = settings["context_budget_bytes"]
        page, active = self.dispatcher.active_notebook(
            not_a_notebook="The active tab is not a notebook."
        )
        artifact_id = self._artifact_id(active["path"])
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
            self._remember(
                artifact_id, cell["cellId"], cell["expectedSourceHash"], cell["cellType"]
            )
        return built

    async def read_cell(self, artifact_id: str, cell_id: str) -> dict[str, Any]:
        """One cell of the active notebook, read live: a person's attachment.

        Refuses like ``notebook_read_cells`` (``artifact-mismatch`` when the notebook is no
        longer the active one), ``cell-not-found`` when the cell is gone and ``over-budget``
        when it does not fit the context budget.
        """
        page = await self.read_cells(artifact_id, cell_id, False, 1)
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

    async def read_images(
        self, artifact_id: str, cell_id: str, max_chars: int
    ) -> list[dict[str, Any]]:
        """The PNG and JPEG outputs of one cell of the active notebook, read live: those of an
        attached cell, for an agent that takes images (``agents/images.py``). Each is
        ``{"mime", "bytes", "alt"}`` with base64 ``"data"`` while the cell's images fit
        ``max_chars``. Refuses like :meth:`read_cell`; they are never served as text."""
        settings = self._settings()
        page, active = self.dispatcher.active_notebook(
            not_a_notebook="The active tab is not a notebook."
        )
        if self._artifact_id(active["path"]) != artifact_id:
            raise Refusal("artifact-mismatch")
        raw = await page.request(
            READ_CELLS,
            {
                "path": active["path"],
                "startCellId": cell_id,
                "maxCells": 1,
                "maxBytes": settings["context_budget_bytes"],
                "includeOutputs": False,
                "includeImages": True,
                "maxImageChars": max_chars,
            },
            settings["page_timeout_seconds"],
        )
        if first_error("read-cells-result", raw) is not None:
            raise Refusal("timeout", "The JupyterLab page answered with something unusable.")
        cells = raw["cells"]
        if not cells or cells[0]["cellId"] != cell_id:
            raise Refusal("cell-not-found", "The attached cell is no longer in the notebook.")
        return list(cells[0].get("images", []))

    def _remember(self, artifact_id: str, cell_id: str, source_hash: str, cell_type: str) -> None:
        self._served.served(artifact_id, cell_id, source_hash, cell_type)
