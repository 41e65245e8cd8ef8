"""The panel's list of changes in real JupyterLab: links to cells, Keep all and Undo all.

Issue 16's "a turn's changes at a glance": the Copilot panel lists the reviews this page opened
(the current turn's, once a conversation runs), each with its cell as a link and its state.
Keep all keeps each open review as its own Keep button would: one whose cell changed since the
proposal applies nothing and says so, the others apply.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import make_notebook
from tests.eventually import eventually
from tests.lab import Lab, lab_page
from tests.server import INSERT_INVOKE, call_action
from tests.test_browser_insert import cells
from tests.test_browser_review import (
    open_notebook,
    proposal,
    propose,
    review_of,
    selected_cell,
)

# Real JupyterLab in Chromium: `pytest -m "not browser"` leaves these out.
pytestmark = pytest.mark.browser

CELLS = ["a = 1", "b = 2", "c = 3"]


def item_of(lab: Lab, call_id: str) -> Any:
    return lab.page.locator(f".jp-Copilot-Change[data-call-id='{call_id}']")


async def states(lab: Lab) -> dict[str, str]:
    """Each listed change's state, by callId."""
    return await lab.page.evaluate(  # type: ignore[no-any-return]
        """() => Object.fromEntries(
            [...document.querySelectorAll('.jp-Copilot-Change')].map(
                n => [n.dataset.callId, n.dataset.state]))"""
    )


async def three_proposals(lab: Lab, jp_fetch: Any) -> list[dict[str, Any]]:
    """Edits of the first two cells and a new cell after the last, all open."""
    await open_notebook(lab, jp_fetch, "a.ipynb")
    served = [await selected_cell(lab, jp_fetch, "a.ipynb", i) for i in range(3)]
    for i in (0, 1):
        answer = await propose(jp_fetch, proposal(served[i], f"{'ab'[i]} = 10\n"), f"edit-{i}")
        assert answer[0] == 200, answer
        await review_of(lab, f"edit-{i}").wait_for(state="visible")
    data = {
        "artifactId": served[2]["artifactId"],
        "afterCellId": served[2]["cellId"],
        "cellType": "code",
        "source": "d = 4\n",
    }
    answer = await call_action(jp_fetch, INSERT_INVOKE, {"data": data, "callId": "insert"})
    assert answer[0] == 200, answer
    await review_of(lab, "insert").wait_for(state="visible")
    return served


async def test_keep_all_applies_only_the_reviews_still_valid(
    lab_server, jp_fetch, jp_root_dir
) -> None:
    make_notebook(jp_root_dir, "a.ipynb", CELLS)
    async with lab_page(lab_server) as lab:
        served = await three_proposals(lab, jp_fetch)
        section = lab.page.locator(".jp-Copilot-Changes")
        await section.wait_for(state="visible")
        assert await states(lab) == {"edit-0": "open", "edit-1": "open", "insert": "open"}
        links = [await item_of(lab, c).locator(".jp-Copilot-ChangeLink").inner_text()
                 for c in ("edit-0", "edit-1", "insert")]  # fmt: skip
        assert links == [
            "Edit of cell 1 in a.ipynb",
            "Edit of cell 2 in a.ipynb",
            "New cell after cell 3 in a.ipynb",
        ]
        # The person changes the second cell: its proposal is no longer valid.
        await lab.click_cell("a.ipynb", 1)
        await lab.page.keyboard.press("End")
        await lab.page.keyboard.type("0")
        keep_all = section.locator(".jp-Copilot-KeepAll")
        assert await keep_all.inner_text() == "Keep all (3)"
        await keep_all.click()
        await eventually(
            lambda: _states_are(lab, {"edit-0": "keep", "edit-1": "conflict", "insert": "keep"}),
            "Keep all to decide every review",
        )
        now = await cells(lab)
        assert [c[2] for c in now] == ["a = 10\n", "b = 20", "c = 3", "d = 4\n"]
        assert now[1][0] == served[1]["cellId"]
        state = item_of(lab, "edit-1").locator(".jp-Copilot-ChangeState")
        assert await state.inner_text() == "not applied: the cell changed"
        # Nothing is open any more: no Keep all or Undo all to press.
        assert await keep_all.is_hidden()
        shot = await lab.screenshot("copilot-changes.png")
        assert shot.stat().st_size > 10_000


async def test_undo_all_leaves_the_notebook_and_a_link_shows_its_cell(
    lab_server, jp_fetch, jp_root_dir
) -> None:
    make_notebook(jp_root_dir, "a.ipynb", CELLS)
    async with lab_page(lab_server) as lab:
        await three_proposals(lab, jp_fetch)
        before = await cells(lab)
        await lab.click_cell("a.ipynb", 2)
        # A link brings its review's cell forward as the active cell.
        await item_of(lab, "edit-0").locator(".jp-Copilot-ChangeLink").click()
        await eventually(lambda: _active_is(lab, 0), "the link to make cell 1 active")
        await lab.page.locator(".jp-Copilot-UndoAll").click()
        await eventually(
            lambda: _states_are(lab, {"edit-0": "undo", "edit-1": "undo", "insert": "undo"}),
            "Undo all to undo every review",
        )
        assert await cells(lab) == before
        assert await lab.page.locator(".jp-Copilot-Review").count() == 0


async def _states_are(lab: Lab, expected: dict[str, str]) -> bool:
    return await states(lab) == expected


async def _active_is(lab: Lab, index: int) -> bool:
    active = await lab.page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.content.activeCellIndex"
    )
    return bool(active == index)
