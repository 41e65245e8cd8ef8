"""The page's read-cells answer matches the server's result schema (readcells.ts in Node).

Output digests and paging themselves are tested with Jest (labextension/test/readcells.spec.ts).
"""

from __future__ import annotations

import base64
from typing import Any

from jupyter_copilot.protocol.registry import first_error
from tests.node_harness import run_node

READ = """
const { readCells } = await import(`${LIB}/readcells.js`);
const out = [];
for (const c of input) {
  const nb = c.notebook;
  const reader = {
    path: nb.path,
    cellCount: nb.cells.length,
    indexOf: id => nb.cells.findIndex(c => c.cellId === id),
    cell: i => {
      const c = nb.cells[i];
      return { cellId: c.cellId, cellType: c.cellType, source: c.source,
               outputs: () => c.outputs ?? [] };
    },
    widgetType: async id => null
  };
  out.push(await readCells(reader, c.data));
}
console.log(JSON.stringify(out));
"""

PNG = bytes(range(256)) * 3 + b"\x89PNG"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def code(cell_id: str, source: str, outputs: list[Any] | None = None) -> dict[str, Any]:
    return {"cellId": cell_id, "cellType": "code", "source": source, "outputs": outputs or []}


def markdown(cell_id: str, source: str) -> dict[str, Any]:
    return {"cellId": cell_id, "cellType": "markdown", "source": source}


def request(**data: Any) -> dict[str, Any]:
    base = {
        "path": "dir/a.ipynb",
        "startCellId": None,
        "maxCells": 500,
        "maxBytes": 8192,
        "includeOutputs": False,
    }
    base.update(data)
    return base


def test_a_read_with_every_kind_of_output_matches_the_servers_schema() -> None:
    png = base64.b64encode(PNG).decode()
    outputs = [
        {"output_type": "stream", "name": "stdout", "text": "hi\n"},
        {"output_type": "execute_result", "execution_count": None, "data": {"image/png": png}},
        {
            "output_type": "display_data",
            "data": {WIDGET_MIME: {"model_id": "m1"}, "text/html": "<p>x</p>"},
        },
        {"output_type": "error", "ename": "E", "evalue": "v", "traceback": []},
    ]
    nb = {
        "path": "dir/a.ipynb",
        "cells": [
            code("a", "x", outputs),
            markdown("b", "# b"),
            {**markdown("c", "raw"), "cellType": "raw"},
        ],
    }
    cases = [
        {"notebook": nb, "data": request(includeOutputs=include, maxCells=2)}
        for include in (True, False)
    ]
    results = run_node(READ, cases)
    assert len(results) == 2
    for result in results:
        assert first_error("read-cells-result", result) is None
        assert result["nextCellId"] == "c"
