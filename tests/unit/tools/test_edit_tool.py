"""``notebook_edit_cell``'s own checks and result (docs/protocol.md sections 4.2 and 5).

The order it shares with insert and run is in test_check_order.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_copilot.page.context import source_hash
from jupyter_copilot.protocol.refusals import Refusal
from tests.unit.scene import EDIT_CELL, Scene, caller


def edit_input(scene: Scene, new_source: str = "x = 2\n") -> dict[str, Any]:
    notebook = scene.browser.notebook
    assert notebook is not None
    return {
        "artifactId": "nb-a",
        "cellId": "c1",
        "expectedSourceHash": notebook.cell("c1").hash,
        "newSource": new_source,
    }


async def edit(scene: Scene, data: dict[str, Any], call_id: str | None = None) -> dict[str, Any]:
    return await scene.tools[EDIT_CELL.name].invoke(caller(), data, call_id=call_id)


async def refused(scene: Scene, data: dict[str, Any]) -> str:
    with pytest.raises(Refusal) as err:
        await edit(scene, data)
    assert scene.requests() == []
    return err.value.code


async def test_the_result_is_metadata_only_and_the_page_gets_the_served_type(
    scene: Scene,
) -> None:
    await scene.reader.context(caller())
    scene.browser.requests.clear()
    before = scene.notebook.snapshot()
    result = await edit(scene, edit_input(scene), call_id="call-1")
    assert result == {
        "success": True,
        "artifactId": "nb-a",
        "cellId": "c1",
        "operation": "whole-cell-diff",
        "diffReviewOpened": True,
        "sourceHashAfter": source_hash("x = 2\n"),
    }
    (request,) = scene.requests()
    assert request["action"] == EDIT_CELL.invoke_action
    assert request["data"]["expectedCellType"] == "code"
    assert request["data"]["path"] == "a.ipynb" and request["data"]["callId"] == "call-1"
    # The page opens a review; the notebook changes only on Keep.
    assert scene.notebook.snapshot() == before


async def test_a_cell_never_served_goes_to_the_page_without_a_type(scene: Scene) -> None:
    await edit(scene, edit_input(scene))
    assert scene.requests()[-1]["data"]["expectedCellType"] is None


async def test_without_a_live_document_the_page_judges_a_stale_hash(scene: Scene) -> None:
    data = edit_input(scene)
    scene.notebook.cell("c1").source = "changed\n"
    await edit(scene, data)
    assert scene.requests()[-1]["data"]["expectedSourceHash"] == data["expectedSourceHash"]


async def test_with_a_live_document_a_stale_hash_is_refused_before_the_page(scene: Scene) -> None:
    notebook = scene.collaborate()
    data = edit_input(scene)
    notebook.cell("c1").source = "changed\n"
    assert await refused(scene, data) == "stale-source"


async def test_a_cell_marked_never_to_run_can_still_be_edited(scene: Scene) -> None:
    notebook = scene.collaborate()
    notebook.cell("c1").metadata["jupyter_copilot"] = {"agent_run": False}
    assert (await edit(scene, edit_input(scene)))["success"] is True


async def test_a_retyped_cell_is_refused_only_once_its_type_was_served(scene: Scene) -> None:
    notebook = scene.collaborate()
    notebook.cell("c1").cell_type = "raw"
    # Never served: the server has no type to compare; the page checks it.
    assert (await edit(scene, edit_input(scene)))["success"] is True
    notebook.cell("c1").cell_type = "code"
    await scene.reader.context(caller())
    scene.browser.requests.clear()
    notebook.cell("c1").cell_type = "raw"
    assert await refused(scene, edit_input(scene, "x = 3\n")) == "cell-type-mismatch"


@pytest.mark.parametrize(
    ("size", "code"), [(0, "invalid-input"), (1, None), (64, None), (65, "over-budget")]
)
async def test_the_new_source_is_counted_in_utf8_bytes_against_the_budget(
    scene: Scene, size: int, code: str | None
) -> None:
    scene.settings["tool_input_budget_bytes"] = 64
    new_source = "é" * (size // 2) + "x" * (size % 2)
    if code is None:
        assert (await edit(scene, edit_input(scene, new_source)))["success"] is True
    else:
        assert await refused(scene, edit_input(scene, new_source)) == code


async def test_a_new_source_that_is_not_unicode_text_is_invalid_input(scene: Scene) -> None:
    assert await refused(scene, edit_input(scene, "x = '\ud800'")) == "invalid-input"


async def test_a_repeated_call_id_returns_the_first_result_and_opens_one_review(
    scene: Scene,
) -> None:
    data = edit_input(scene)
    first = await edit(scene, data, call_id="call-1")
    assert await edit(scene, data, call_id="call-1") == first
    assert len(scene.requests()) == 1
    with pytest.raises(Refusal) as err:
        await edit(scene, edit_input(scene, "other\n"), call_id="call-1")
    assert err.value.code == "invalid-input"
    assert len(scene.requests()) == 1


async def test_a_page_that_cannot_show_the_diff_ends_the_call_with_diff_unavailable(
    scene: Scene,
) -> None:
    browser = scene.browser

    def cannot_show(request: dict[str, Any]) -> None:
        error = {"code": "diff-unavailable", "message": "no diff view"}
        browser.send(
            {"type": "result", "requestId": request["requestId"], "ok": False, "error": error}
        )

    browser.respond = cannot_show
    with pytest.raises(Refusal) as err:
        await edit(scene, edit_input(scene))
    assert (err.value.status, err.value.code) == (409, "diff-unavailable")
