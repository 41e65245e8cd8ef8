"""The page's read-cells action: output digests and paging, run as compiled TypeScript in Node."""

from __future__ import annotations

import base64
import json
from typing import Any

from jupyter_copilot.registry import first_error
from tests.node_harness import run_node

DIGEST = """
const { digestOutputs } = await import(`${LIB}/outputdigest.js`);
const types = new Map(Object.entries(input.widgetTypes));
console.log(JSON.stringify(digestOutputs(input.outputs, types)));
"""

BASE64 = """
const { base64DecodedSize } = await import(`${LIB}/outputdigest.js`);
console.log(JSON.stringify(input.map(base64DecodedSize)));
"""

SAVED_TYPE = """
const { savedWidgetType } = await import(`${LIB}/outputdigest.js`);
console.log(JSON.stringify(input.map(([widgets, id]) => savedWidgetType(widgets, id))));
"""

READ = """
const { readCells } = await import(`${LIB}/readcells.js`);
function reader(nb) {
  if (!nb) return { reader: null, lookups: [] };
  const lookups = [];
  const reader = {
    path: nb.path,
    cellCount: nb.cells.length,
    indexOf: id => nb.cells.findIndex(c => c.cellId === id),
    cell: i => {
      const c = nb.cells[i];
      return { cellId: c.cellId, cellType: c.cellType, source: c.source,
               outputs: () => c.outputs ?? [] };
    },
    widgetType: async id => { lookups.push(id); return (nb.widgets ?? {})[id] ?? null; }
  };
  return { reader, lookups };
}
const out = [];
for (const c of input) {
  const { reader: r, lookups } = reader(c.notebook);
  try {
    out.push({ result: await readCells(r, c.data), lookups });
  } catch (err) {
    out.push({ error: err.code, message: err.message });
  }
}
console.log(JSON.stringify(out));
"""


PAGES = """
const { readCells } = await import(`${LIB}/readcells.js`);
const nb = input.notebook;
const reader = {
  path: nb.path,
  cellCount: nb.cells.length,
  indexOf: id => nb.cells.findIndex(c => c.cellId === id),
  cell: i => ({ ...nb.cells[i], outputs: () => [] }),
  widgetType: () => null
};
const pages = [];
let start = null;
do {
  const page = await readCells(reader, { ...input.data, startCellId: start });
  pages.push(page.cells);
  start = page.nextCellId;
} while (start !== null);
console.log(JSON.stringify(pages));
"""


def utf8(text: str) -> int:
    return len(text.encode("utf-8"))


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


def read(notebook: dict[str, Any] | None, **data: Any) -> dict[str, Any]:
    return run_node(READ, [{"notebook": notebook, "data": request(**data)}])[0]


def notebook(cells: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"path": "dir/a.ipynb", "cells": cells, **extra}


PNG = bytes(range(256)) * 3 + b"\x89PNG"  # 772 bytes: base64 ends with "=="
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def test_each_output_type_is_digested_without_payloads() -> None:
    png = base64.b64encode(PNG).decode()
    wrapped_png = "\n".join(png[i : i + 76] for i in range(0, len(png), 76)) + "\n"
    html = "<b>caf\u00e9 \U0001f600</b>"
    outputs = [
        {"output_type": "stream", "name": "stdout", "text": ["a\n", "b\n"]},
        {"output_type": "stream", "name": "stderr", "text": "warn\n"},
        {
            "output_type": "execute_result",
            "execution_count": 3,
            "metadata": {},
            "data": {
                "text/plain": ["<Figure>", "\n"],
                "text/markdown": "**x**",
                "image/png": wrapped_png,
                "image/jpeg": png[:-2],  # unpadded
                "text/html": html,
                "image/svg+xml": ["<svg>", "\u00e9</svg>"],
                "application/json": {"k": ["\u00e9"]},
                "application/pdf": "not base64!",
            },
        },
        {
            "output_type": "display_data",
            "metadata": {},
            "data": {
                WIDGET_MIME: {"model_id": "m1", "version_major": 2, "version_minor": 0},
                "text/plain": "IntSlider(value=3)",
            },
        },
        {"output_type": "display_data", "data": {WIDGET_MIME: {"model_id": "m2"}}},
        {
            "output_type": "error",
            "ename": "ValueError",
            "evalue": "bad value",
            "traceback": ["\u001b[31mTraceback with secrets"],
        },
        {"output_type": "update_display_data", "data": {}},
    ]
    got = run_node(DIGEST, {"outputs": outputs, "widgetTypes": {"m1": "IntSliderModel"}})
    assert got == [
        {"outputType": "stream", "name": "stdout", "text": "a\nb\n"},
        {"outputType": "stream", "name": "stderr", "text": "warn\n"},
        {
            "outputType": "execute_result",
            "executionCount": 3,
            "data": {
                "text/plain": {"text": "<Figure>\n"},
                "text/markdown": {"text": "**x**"},
                "image/png": {"bytes": len(PNG)},
                "image/jpeg": {"bytes": len(PNG)},
                "text/html": {"bytes": utf8(html)},
                "image/svg+xml": {"bytes": utf8("<svg>\u00e9</svg>")},
                "application/json": {"bytes": utf8('{"k":["\u00e9"]}')},
                "application/pdf": {"bytes": utf8("not base64!")},
            },
        },
        {
            "outputType": "display_data",
            "data": {
                WIDGET_MIME: {"modelId": "m1", "widgetType": "IntSliderModel"},
                "text/plain": {"text": "IntSlider(value=3)"},
            },
        },
        {
            "outputType": "display_data",
            "data": {WIDGET_MIME: {"modelId": "m2", "widgetType": None}},
        },
        {"outputType": "error", "ename": "ValueError", "evalue": "bad value"},
    ]
    assert "Traceback" not in json.dumps(got) and "<b>" not in json.dumps(got)


def test_base64_sizes_match_the_decoded_bytes_padded_or_not() -> None:
    payloads = [b"", b"A", b"AB", b"ABC", b"ABCD", PNG]
    padded = [base64.b64encode(p).decode() for p in payloads]
    unpadded = [s.rstrip("=") for s in padded]
    invalid = ["QQ=Q", "Q", "a b c d *", "QUJD===="]
    got = run_node(BASE64, padded + unpadded + [" QU\nJD\n"] + invalid)
    sizes = [len(p) for p in payloads]
    assert got == sizes + sizes + [3] + [None] * len(invalid)


def test_a_widgets_saved_type_comes_from_the_notebook_metadata() -> None:
    saved = {
        "application/vnd.jupyter.widget-state+json": {
            "state": {"m1": {"model_name": "IntSliderModel", "state": {}}, "m2": {}},
            "version_major": 2,
        }
    }
    cases = [
        [saved, "m1"],
        [saved, "m2"],
        [saved, "m3"],
        [saved, "__proto__"],
        [None, "m1"],
        [{"application/vnd.jupyter.widget-state+json": "junk"}, "m1"],
    ]
    assert run_node(SAVED_TYPE, cases) == ["IntSliderModel", None, None, None, None, None]


def test_the_page_refuses_in_order_invalid_view_path_then_cell() -> None:
    nb = notebook([code("c1", "x = 1\n")])
    cases = [
        {"notebook": None, "data": request(maxCells=0)},
        {"notebook": None, "data": request(maxBytes="8192")},
        {"notebook": nb, "data": request(path=None)},
        {"notebook": None, "data": request(path="b.ipynb", startCellId="nope")},
        {"notebook": nb, "data": request(path="b.ipynb", startCellId="nope")},
        {"notebook": nb, "data": request(startCellId="nope")},
    ]
    got = [r.get("error") for r in run_node(READ, cases)]
    assert got == [
        "invalid-input",
        "invalid-input",
        "invalid-input",
        "not-authoring-view",
        "artifact-mismatch",
        "cell-not-found",
    ]


def test_an_empty_notebook_or_the_end_gives_no_cells() -> None:
    empty = read(notebook([]))["result"]
    assert empty == {
        "path": "dir/a.ipynb",
        "cellCount": 0,
        "startIndex": 0,
        "cells": [],
        "nextCellId": None,
    }
    one = read(notebook([code("c1", "x")]), maxBytes=0, includeOutputs=True)["result"]
    assert one["cells"] == [{"cellId": "c1", "cellType": "code", "source": "x", "outputs": []}]


def test_max_cells_bounds_a_page_and_the_start_cell_opens_it() -> None:
    nb = notebook([code(f"c{i}", f"x = {i}\n") for i in range(10)])
    page = read(nb, maxCells=3)["result"]
    assert page["cellCount"] == 10 and page["startIndex"] == 0
    assert [c["cellId"] for c in page["cells"]] == ["c0", "c1", "c2"]
    assert page["nextCellId"] == "c3"
    page = read(nb, maxCells=3, startCellId="c8")["result"]
    assert page["startIndex"] == 8
    assert [c["cellId"] for c in page["cells"]] == ["c8", "c9"]
    assert page["nextCellId"] is None


def test_max_bytes_stops_once_reached_and_a_large_cell_still_comes_alone() -> None:
    nb = notebook(
        [
            code("a", "\u00e9" * 3),  # 6 bytes
            markdown("b", "1234"),  # 4 bytes: total 10
            code("c", "z" * 100),
            code("d", "tail"),
        ]
    )
    assert [c["cellId"] for c in read(nb, maxBytes=10)["result"]["cells"]] == ["a", "b"]
    assert [c["cellId"] for c in read(nb, maxBytes=11)["result"]["cells"]] == ["a", "b", "c"]
    assert [c["cellId"] for c in read(nb, maxBytes=6)["result"]["cells"]] == ["a"]
    alone = read(nb, maxBytes=10, startCellId="c")["result"]["cells"]
    assert [c["cellId"] for c in alone] == ["c"]


def test_outputs_count_toward_the_budget_and_only_code_cells_carry_them() -> None:
    stream = {"output_type": "stream", "name": "stdout", "text": "hello\n"}
    nb = notebook([code("a", "print()", [stream]), markdown("b", "# b"), code("c", "pass")])
    digest = [{"outputType": "stream", "name": "stdout", "text": "hello\n"}]
    size = utf8("print()") + utf8(json.dumps(digest, separators=(",", ":")))

    without = read(nb)["result"]["cells"]
    assert all("outputs" not in c for c in without)

    cells = read(nb, includeOutputs=True)["result"]["cells"]
    assert cells[0]["outputs"] == digest
    assert "outputs" not in cells[1]
    assert cells[2]["outputs"] == []

    exact = read(nb, includeOutputs=True, maxBytes=size)["result"]["cells"]
    assert [c["cellId"] for c in exact] == ["a"]
    assert len(read(nb, includeOutputs=True, maxBytes=size + 1)["result"]["cells"]) == 2
    assert len(read(nb, includeOutputs=False, maxBytes=size)["result"]["cells"]) == 3


def test_each_widget_type_is_looked_up_once_per_read_and_only_with_outputs() -> None:
    view = {"output_type": "display_data", "data": {WIDGET_MIME: {"model_id": "m1"}}}
    other = {"output_type": "display_data", "data": {WIDGET_MIME: {"model_id": "m2"}}}
    nb = notebook(
        [code("a", "w", [view, view]), code("b", "w", [view, other])],
        widgets={"m1": "IntSliderModel"},
    )
    got = read(nb, includeOutputs=True)
    assert got["lookups"] == ["m1", "m2"]
    items = [o["data"][WIDGET_MIME] for c in got["result"]["cells"] for o in c["outputs"]]
    assert items == [
        {"modelId": "m1", "widgetType": "IntSliderModel"},
        {"modelId": "m1", "widgetType": "IntSliderModel"},
        {"modelId": "m1", "widgetType": "IntSliderModel"},
        {"modelId": "m2", "widgetType": None},
    ]
    assert read(nb, includeOutputs=False)["lookups"] == []


def test_pages_read_one_after_another_are_exactly_the_notebook() -> None:
    cells = [
        code(f"c{i}", "x" * (i * 37 % 300) + "\u00e9" * (i % 5))
        if i % 3
        else markdown(f"c{i}", "# " + "y" * (i * 11 % 90))
        for i in range(200)
    ]
    data = request(maxCells=40, maxBytes=1000)
    pages = run_node(PAGES, {"notebook": notebook(cells), "data": data})
    assert [c for page in pages for c in page] == [
        {k: v for k, v in c.items() if k != "outputs"} for c in cells
    ]
    assert len(pages) > 5
    for page in pages:
        assert 1 <= len(page) <= 40
        assert sum(utf8(c["source"]) for c in page[:-1]) < 1000


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
    nb = notebook(
        [code("a", "x", outputs), markdown("b", "# b"), {**markdown("c", "raw"), "cellType": "raw"}]
    )
    for include in (True, False):
        result = read(nb, includeOutputs=include, maxCells=2)["result"]
        assert first_error("read-cells-result", result) is None
        assert result["nextCellId"] == "c"
