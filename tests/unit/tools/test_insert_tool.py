"""``notebook_insert_cell``'s own checks and result (docs/protocol.md section 11.1).

The order it shares with edit and run is in test_check_order.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_copilot.protocol.refusals import Refusal
from tests.unit.scene import INSERT_CELL, Scene, caller


def insert_input(after: str | None = "c1", source: str = "y = 3\n") -> dict[str, Any]:
    return {"artifactId": "nb-a", "afterCellId": after, "cellType": "code", "source": source}


async def insert(scene: Scene, data: dict[str, Any]) -> dict[str, Any]:
    return await scene.tools[INSERT_CELL.name].invoke(caller(), data)


async def test_the_result_is_metadata_only_and_the_page_gets_the_new_cell(scene: Scene) -> None:
    before = scene.notebook.snapshot()
    result = await insert(scene, insert_input())
    assert result == {
        "success": True,
        "artifactId": "nb-a",
        "operation": "insert-cell",
        "reviewOpened": True,
    }
    (request,) = scene.requests()
    assert request["action"] == INSERT_CELL.invoke_action
    assert {k: request["data"][k] for k in ("afterCellId", "cellType", "source")} == {
        "afterCellId": "c1",
        "cellType": "code",
        "source": "y = 3\n",
    }
    # Pending until Keep: the notebook's cells are unchanged.
    assert scene.notebook.snapshot() == before


async def test_a_missing_anchor_in_the_live_document_is_cell_not_found(scene: Scene) -> None:
    scene.collaborate()
    with pytest.raises(Refusal) as err:
        await insert(scene, insert_input("c9"))
    assert err.value.code == "cell-not-found"
    assert scene.requests() == []


async def test_the_top_of_the_notebook_needs_no_anchor(scene: Scene) -> None:
    notebook = scene.collaborate()
    notebook.cells = []
    assert (await insert(scene, insert_input(None)))["success"] is True
    assert scene.requests()[-1]["data"]["afterCellId"] is None


async def test_the_anchor_s_lock_type_and_source_do_not_matter(scene: Scene) -> None:
    notebook = scene.collaborate()
    anchor = notebook.cell("c1")
    anchor.metadata.update(editable=False, jupyter_copilot={"agent_run": False})
    anchor.cell_type = "raw"
    anchor.source = "changed\n"
    assert (await insert(scene, insert_input()))["success"] is True


async def test_without_a_live_document_the_page_checks_the_anchor(scene: Scene) -> None:
    assert (await insert(scene, insert_input("c9")))["success"] is True
    assert scene.requests()[-1]["data"]["afterCellId"] == "c9"


async def test_an_empty_or_oversized_source_is_refused(scene: Scene) -> None:
    scene.settings["tool_input_budget_bytes"] = 8
    for source, code in (("", "invalid-input"), ("123456789", "over-budget")):
        with pytest.raises(Refusal) as err:
            await insert(scene, insert_input(source=source))
        assert err.value.code == code
    assert scene.requests() == []


async def test_a_markdown_or_raw_cell_can_be_proposed(scene: Scene) -> None:
    for cell_type in ("markdown", "raw"):
        data = {**insert_input(), "cellType": cell_type}
        assert (await insert(scene, data))["success"] is True
    with pytest.raises(Refusal) as err:
        await insert(scene, {**insert_input(), "cellType": "heading"})
    assert err.value.code == "invalid-input"
