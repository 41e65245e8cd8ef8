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
from tests.lab import Lab, lab_page, open_copilot_panel
from tests.server import INSERT_INVOKE, call_action
from tests.test_browser_chat import Chat
from tests.test_browser_insert import cells
from tests.test_browser_review import (
    _reloaded,
    model_source,
    open_notebook,
    proposal,
    propose,
    review_of,
    screenshots,
    selected_cell,
)

# Real JupyterLab in Chromium: `pytest -m "not browser"` leaves these out. No test here runs
# code, so the kernel sessions attach to one real kernel per test process (tests/kernels.py).
pytestmark = [pytest.mark.browser, pytest.mark.shared_kernel]

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


async def _texts_are(locator: Any, texts: list[str]) -> bool:
    return await locator.all_inner_texts() == texts  # type: ignore[no-any-return]


async def _active_is(lab: Lab, index: int) -> bool:
    active = await lab.page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.content.activeCellIndex"
    )
    return bool(active == index)


# Where each row's link and state are drawn: the state is below its link in every row.
ROWS_JS = """
() => [...document.querySelectorAll('.jp-Copilot-Change')].map(row => {
  const link = row.querySelector('.jp-Copilot-ChangeLink').getBoundingClientRect();
  const state = row.querySelector('.jp-Copilot-ChangeState').getBoundingClientRect();
  return {below: state.top >= link.bottom - 1, left: state.left - link.left};
})
"""


async def test_changes_decided_in_a_later_turn_stay_listed_one_row_layout(
    lab_server, jp_fetch, jp_root_dir
) -> None:
    make_notebook(jp_root_dir, "a-notebook-with-a-rather-long-name.ipynb", CELLS)
    async with lab_page(lab_server, width=1280) as lab:
        await lab.page.set_viewport_size({"width": 1280, "height": 800})
        path = "a-notebook-with-a-rather-long-name.ipynb"
        await open_notebook(lab, jp_fetch, path)
        served = [await selected_cell(lab, jp_fetch, path, i) for i in range(2)]
        for i in (0, 1):
            answer = await propose(jp_fetch, proposal(served[i], f"{'ab'[i]} = 10\n"), f"e{i}")
            assert answer[0] == 200, answer
            await review_of(lab, f"e{i}").wait_for(state="visible")
        # A turn of the panel's conversation starts: the two proposals of before still wait.
        chat = Chat(lab)
        await chat.send("hello")
        await chat.idle()
        assert await states(lab) == {"e0": "open", "e1": "open"}
        undo_all = lab.page.locator(".jp-Copilot-UndoAll")
        assert await undo_all.inner_text() == "Undo all"
        await undo_all.click()
        # Decided in this turn, both stay in the list with their state.
        await eventually(lambda: _states_are(lab, {"e0": "undo", "e1": "undo"}), "both undone")
        assert await lab.page.locator(".jp-Copilot-Changes").is_visible()
        # Every row alike: the state under its link, whatever the length of the link.
        rows = await lab.page.evaluate(ROWS_JS)
        assert len(rows) == 2 and all(r["below"] and abs(r["left"]) < 1 for r in rows), rows
        await screenshots(lab, "copilot-changes-undone")


async def _active_cell(lab: Lab) -> dict[str, Any]:
    """The active cell's id, whether it holds the focus, and where it is on screen."""
    return await lab.page.evaluate(  # type: ignore[no-any-return]
        """() => {
            const nb = window.jupyterapp.shell.currentWidget.content;
            const cell = nb.activeCell;
            return {
                id: cell.model.id,
                focused: cell.node.contains(document.activeElement),
                top: cell.node.getBoundingClientRect().top,
                mode: nb.mode,
            };
        }"""
    )


async def test_keep_all_leaves_the_person_typing_where_they_are(
    lab_server, jp_fetch, jp_root_dir
) -> None:
    sources = CELLS + [f"x{i} = {i}" for i in range(3, 40)]
    make_notebook(jp_root_dir, "a.ipynb", sources)
    async with lab_page(lab_server, width=1280) as lab:
        await lab.page.set_viewport_size({"width": 1280, "height": 800})
        await three_proposals(lab, jp_fetch)
        # The person types in a cell far below the three proposals.
        await lab.click_cell("a.ipynb", 30)
        await lab.page.keyboard.press("End")
        await lab.page.keyboard.type("  # mine")
        before = await _active_cell(lab)
        assert before["focused"] and before["mode"] == "edit", before
        await lab.page.locator(".jp-Copilot-KeepAll").click()
        await eventually(
            lambda: _states_are(lab, {"edit-0": "keep", "edit-1": "keep", "insert": "keep"}),
            "Keep all to keep every review",
        )
        await lab.page.wait_for_timeout(300)  # the notebook lays out the new cell
        after = await _active_cell(lab)
        # The same cell is active, still in focus, at the same place on screen.
        assert after["id"] == before["id"] and after["focused"], (before, after)
        assert abs(after["top"] - before["top"]) < 2, (before, after)
        # Typing goes on in that cell.
        await lab.page.keyboard.type("!")
        assert await model_source(lab, before["id"]) == "x30 = 30  # mine!"
        assert [c[2] for c in await cells(lab)][:4] == ["a = 10\n", "b = 10\n", "c = 3", "d = 4\n"]


async def test_reviews_open_when_the_page_reloads_are_said_to_have_ended_unapplied(
    lab_server, jp_fetch, jp_root_dir, copilot
) -> None:
    path = make_notebook(jp_root_dir, "a.ipynb", CELLS)
    before = path.read_text()
    async with lab_page(lab_server, "a.ipynb", width=1280) as lab:
        await lab.page.set_viewport_size({"width": 1280, "height": 800})
        await three_proposals(lab, jp_fetch)
        await _reloaded(lab, jp_fetch)
        await open_copilot_panel(lab.page)
        # The list says, for each, that it ended with the reload and nothing changed.
        await eventually(
            lambda: _states_are(
                lab, {"edit-0": "reloaded", "edit-1": "reloaded", "insert": "reloaded"}
            ),
            "the reviews that ended with the page",
        )
        texts = await lab.page.locator(".jp-Copilot-ChangeState").all_inner_texts()
        assert texts == ["ended with the page reload: nothing was changed"] * 3
        # Each named as before the reload, once the notebook is back.
        links = lab.page.locator(".jp-Copilot-ChangeLink")
        await eventually(
            lambda: _texts_are(
                links,
                [
                    "Edit of cell 1 in a.ipynb",
                    "Edit of cell 2 in a.ipynb",
                    "New cell after cell 3 in a.ipynb",
                ],
            ),
            "the cells named",
        )
        # A notice says so too, wherever the panel is.
        toast = lab.page.locator(".Toastify__toast").filter(has_text="when the page reloaded")
        await toast.first.wait_for(state="visible", timeout=10000)
        assert "nothing was changed" in await toast.first.inner_text()
        assert not await lab.page.locator(".jp-Copilot-KeepAll").is_visible()
        assert await lab.page.locator(".jp-Copilot-Review").count() == 0
        await screenshots(lab, "copilot-changes-reloaded")
        # The server ended them as withdrawn, as for any page that goes away.
        for tool in copilot.proposal_tools.values():
            assert tool.calls.open_reviews() == []
        # Said once: a second reload has nothing to say.
        await _reloaded(lab, jp_fetch)
        await open_copilot_panel(lab.page)
        await lab.page.wait_for_timeout(500)
        assert await lab.page.locator(".jp-Copilot-Change").count() == 0
    assert path.read_text() == before
