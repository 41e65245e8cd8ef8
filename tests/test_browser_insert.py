"""A proposed new cell in real JupyterLab: pending until Keep, one undo step, gone on Undo.

docs/protocol.md section 11.1: the page shows ``notebook_insert_cell``'s proposal as a
pending cell below the cell it is to follow (above the cells for the top), and the notebook's
cells do not change until the person keeps it.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import make_notebook
from tests.eventually import eventually
from tests.lab import Lab, lab_page
from tests.server import INSERT_ABORT, INSERT_INVOKE, INVOKE, call_action
from tests.test_browser_review import decisions, open_notebook, proposal, selected_cell

# Real JupyterLab in Chromium: `pytest -m "not browser"` leaves these out. No test here runs
# code, so the kernel sessions attach to one real kernel per test process (tests/kernels.py).
pytestmark = [pytest.mark.browser, pytest.mark.shared_kernel]

CELLS = ["import math", "r = 2", "area = math.pi * r ** 2"]
NEW = "print(f'area: {area:.2f}')\n"


async def cells(lab: Lab) -> list[tuple[str, str, str]]:
    """The current notebook's cells in the page's live model: (id, type, source)."""
    return [
        tuple(cell)  # type: ignore[misc]
        for cell in await lab.page.evaluate(
            """() => {
                const nb = window.jupyterapp.shell.currentWidget.content;
                return Array.from(nb.model.cells).map(
                    c => [c.id, c.type, c.sharedModel.getSource()]
                );
            }"""
        )
    ]


async def insert(
    jp_fetch: Any, artifact_id: str, after: str | None, call_id: str, **changes: Any
) -> tuple[int, dict[str, Any]]:
    data = {"artifactId": artifact_id, "afterCellId": after, "cellType": "code", "source": NEW}
    data.update(changes)
    return await call_action(jp_fetch, INSERT_INVOKE, {"data": data, "callId": call_id})


def pending_of(lab: Lab, call_id: str) -> Any:
    return lab.page.locator(f".jp-Copilot-PendingCell[data-call-id='{call_id}']")


async def host_of(lab: Lab, call_id: str) -> str | None:
    """The model id of the cell widget whose node holds the pending cell; None outside cells."""
    return await lab.page.evaluate(  # type: ignore[no-any-return]
        """callId => {
            const node = document.querySelector(
                `.jp-Copilot-PendingCell[data-call-id="${callId}"]`);
            const nb = window.jupyterapp.shell.currentWidget.content;
            const owner = nb.widgets.find(w => w.node.contains(node));
            return owner ? owner.model.id : null;
        }""",
        call_id,
    )


async def opened(lab: Lab, jp_fetch: Any) -> tuple[dict[str, Any], list[tuple[str, str, str]]]:
    """Open a.ipynb; the served context of its second cell, and the cells as they are."""
    await open_notebook(lab, jp_fetch, "a.ipynb")
    cell = await selected_cell(lab, jp_fetch, "a.ipynb", 1)
    return cell, await cells(lab)


async def test_a_pending_cell_shows_below_its_anchor_and_changes_no_cell(
    lab_server, jp_fetch, jp_root_dir
) -> None:
    make_notebook(jp_root_dir, "a.ipynb", CELLS)
    async with lab_page(lab_server) as lab:
        cell, before = await opened(lab, jp_fetch)
        status, body = await insert(jp_fetch, cell["artifactId"], cell["cellId"], "show")
        assert (status, body["result"]) == (
            200,
            {
                "success": True,
                "artifactId": cell["artifactId"],
                "operation": "insert-cell",
                "reviewOpened": True,
            },
        )
        pending = pending_of(lab, "show")
        await pending.wait_for(state="visible")
        # Inside the cell it follows, below that cell's input, marked as a new cell.
        assert await host_of(lab, "show") == cell["cellId"]
        label = await pending.locator(".jp-Copilot-ReviewLabel").inner_text()
        assert label == "New code cell proposed by a Copilot tool"
        # The proposal exactly, highlighted as JupyterLab highlights code, without an editor.
        source = pending.locator(".jp-Copilot-ReviewDiff .jp-Copilot-PendingSource")
        assert await source.text_content() == NEW
        assert await source.locator("span[class]").count() >= 3
        assert await pending.locator(".cm-editor").count() == 0
        assert await pending.get_attribute("data-after-cell-id") == cell["cellId"]
        # The notebook's cells are exactly as they were.
        assert await cells(lab) == before
        shot = await lab.screenshot("copilot-pending-cell.png")
        assert shot.stat().st_size > 10_000


async def test_a_pending_cell_shows_markup_as_text_and_keeps_what_was_proposed(
    lab_server, jp_fetch, jp_root_dir
) -> None:
    """A hostile source: HTML stays text, and Keep inserts it byte for byte."""
    make_notebook(jp_root_dir, "a.ipynb", CELLS)
    hostile = '<img src="x" onerror="window.__copilotPwned = 1">\r\n**bold**\rend'
    async with lab_page(lab_server) as lab:
        cell, before = await opened(lab, jp_fetch)
        markdown = {"cellType": "markdown", "source": hostile}
        status, _ = await insert(jp_fetch, cell["artifactId"], cell["cellId"], "html", **markdown)
        assert status == 200
        pending = pending_of(lab, "html")
        await pending.wait_for(state="visible")
        source = pending.locator(".jp-Copilot-PendingSource")
        # Shown line by line as the cell's editor will show it; nothing parsed as HTML.
        assert await source.text_content() == hostile.replace("\r\n", "\n").replace("\r", "\n")
        assert await pending.locator("img").count() == 0
        assert await lab.page.evaluate("() => window.__copilotPwned") is None
        await pending.locator(".jp-Copilot-ReviewKeep").click()
        await pending.wait_for(state="detached")
        after = await cells(lab)
        assert after[2][1:] == ("markdown", hostile)
        assert [c for i, c in enumerate(after) if i != 2] == before


async def test_keep_inserts_exactly_the_proposal_after_the_anchor_as_one_undo_step(
    lab_server, jp_fetch, jp_root_dir
) -> None:
    make_notebook(jp_root_dir, "a.ipynb", CELLS)
    async with lab_page(lab_server) as lab:
        cell, before = await opened(lab, jp_fetch)
        assert (await insert(jp_fetch, cell["artifactId"], cell["cellId"], "keep"))[0] == 200
        pending = pending_of(lab, "keep")
        await pending.locator(".jp-Copilot-ReviewKeep").click()
        await pending.wait_for(state="detached")
        after = await cells(lab)
        assert len(after) == 4
        assert after[:2] == before[:2] and after[3] == before[2]
        assert after[2][1:] == ("code", NEW) and after[2][0] not in {c[0] for c in before}
        assert await decisions(lab, "keep") == ["keep"]
        # The new cell is the active one, and one notebook Undo (Z) takes it out again.
        active = await lab.page.evaluate(
            "() => window.jupyterapp.shell.currentWidget.content.activeCellIndex"
        )
        assert active == 2
        await lab.page.keyboard.press("z")
        await eventually(lambda: _cells_are(lab, before), "one notebook undo to remove the cell")


async def test_undo_leaves_the_notebook_as_it_was(lab_server, jp_fetch, jp_root_dir) -> None:
    make_notebook(jp_root_dir, "a.ipynb", CELLS)
    async with lab_page(lab_server) as lab:
        cell, before = await opened(lab, jp_fetch)
        assert (await insert(jp_fetch, cell["artifactId"], cell["cellId"], "undo"))[0] == 200
        pending = pending_of(lab, "undo")
        await pending.locator(".jp-Copilot-ReviewUndo").focus()
        await lab.page.keyboard.press("Enter")
        await pending.wait_for(state="detached")
        assert await cells(lab) == before
        assert await decisions(lab, "undo") == ["undo"]
        # The call is over: a Keep for it now would be refused by the server.
        status, body = await call_action(jp_fetch, INSERT_ABORT, {"data": {"callId": "undo"}})
        assert (status, body) == (200, {"result": {"aborted": False}})


async def test_a_markdown_cell_for_the_top_shows_above_the_first_cell_and_goes_first(
    lab_server, jp_fetch, jp_root_dir
) -> None:
    make_notebook(jp_root_dir, "a.ipynb", CELLS)
    async with lab_page(lab_server) as lab:
        cell, before = await opened(lab, jp_fetch)
        title = "# Area of a circle\n"
        status, _ = await insert(
            jp_fetch, cell["artifactId"], None, "top", cellType="markdown", source=title
        )
        assert status == 200
        pending = pending_of(lab, "top")
        await pending.wait_for(state="visible")
        # Inside the first cell, above its input.
        assert await host_of(lab, "top") == before[0][0]
        assert "Markdown" in await pending.locator(".jp-Copilot-ReviewLabel").inner_text()
        above = await lab.page.evaluate(
            """() => {
                const node = document.querySelector('.jp-Copilot-PendingCell');
                const input = node.parentElement.querySelector('.jp-Cell-inputWrapper');
                return !!(node.compareDocumentPosition(input) & Node.DOCUMENT_POSITION_FOLLOWING);
            }"""
        )
        assert above
        await pending.locator(".jp-Copilot-ReviewKeep").click()
        await pending.wait_for(state="detached")
        after = await cells(lab)
        assert [c[1:] for c in after] == [("markdown", title)] + [c[1:] for c in before]
        assert await decisions(lab, "top") == ["keep"]


async def test_abort_withdraws_the_pending_cell(lab_server, jp_fetch, jp_root_dir) -> None:
    make_notebook(jp_root_dir, "a.ipynb", CELLS)
    async with lab_page(lab_server) as lab:
        cell, before = await opened(lab, jp_fetch)
        assert (await insert(jp_fetch, cell["artifactId"], cell["cellId"], "gone"))[0] == 200
        pending = pending_of(lab, "gone")
        await pending.wait_for(state="visible")
        status, body = await call_action(jp_fetch, INSERT_ABORT, {"data": {"callId": "gone"}})
        assert (status, body) == (200, {"result": {"aborted": True}})
        await pending.wait_for(state="detached")
        assert await cells(lab) == before
        # A second abort finds nothing to withdraw.
        status, body = await call_action(jp_fetch, INSERT_ABORT, {"data": {"callId": "gone"}})
        assert (status, body) == (200, {"result": {"aborted": False}})


async def test_the_pending_cell_goes_with_its_anchor_and_nothing_is_inserted(
    lab_server, jp_fetch, jp_root_dir
) -> None:
    make_notebook(jp_root_dir, "a.ipynb", CELLS)
    async with lab_page(lab_server) as lab:
        cell, before = await opened(lab, jp_fetch)
        assert (await insert(jp_fetch, cell["artifactId"], cell["cellId"], "orphan"))[0] == 200
        pending = pending_of(lab, "orphan")
        await pending.wait_for(state="visible")
        await lab.page.evaluate(
            "() => window.jupyterapp.shell.currentWidget.model.sharedModel.deleteCell(1)"
        )
        await pending.wait_for(state="detached")
        assert await cells(lab) == [before[0], before[2]]
        assert await decisions(lab, "orphan") == ["withdrawn"]


async def test_an_anchor_the_page_does_not_have_is_cell_not_found(
    lab_server, jp_fetch, jp_root_dir
) -> None:
    make_notebook(jp_root_dir, "a.ipynb", CELLS)
    async with lab_page(lab_server) as lab:
        cell, before = await opened(lab, jp_fetch)
        status, body = await insert(jp_fetch, cell["artifactId"], "no-such-cell", "lost")
        assert (status, body["error"]["code"]) == (404, "cell-not-found"), body
        assert await lab.page.locator(".jp-Copilot-PendingCell").count() == 0
        assert await cells(lab) == before


async def test_one_call_id_never_holds_an_edit_review_and_a_pending_cell(
    lab_server, jp_fetch, jp_root_dir
) -> None:
    make_notebook(jp_root_dir, "a.ipynb", CELLS)
    async with lab_page(lab_server) as lab:
        cell, before = await opened(lab, jp_fetch)
        edit = proposal(cell, "r = 3\n")
        status, _ = await call_action(jp_fetch, INVOKE, {"data": edit, "callId": "twice"})
        assert status == 200
        status, body = await insert(jp_fetch, cell["artifactId"], cell["cellId"], "twice")
        assert body["error"]["code"] == "diff-unavailable", (status, body)
        assert await lab.page.locator(".jp-Copilot-PendingCell").count() == 0
        assert await lab.page.locator(".jp-Copilot-Review").count() == 1
        assert await cells(lab) == before


async def _cells_are(lab: Lab, expected: list[tuple[str, str, str]]) -> bool:
    return await cells(lab) == expected


async def test_the_keyboard_moves_between_reviews_keeps_and_undoes(
    lab_server, jp_fetch, jp_root_dir
) -> None:
    make_notebook(jp_root_dir, "a.ipynb", CELLS)
    async with lab_page(lab_server) as lab:
        cell, before = await opened(lab, jp_fetch)
        edit = proposal(cell, "r = 3\n")
        assert (await call_action(jp_fetch, INVOKE, {"data": edit, "callId": "e"}))[0] == 200
        assert (await insert(jp_fetch, cell["artifactId"], before[2][0], "i"))[0] == 200
        await pending_of(lab, "i").wait_for(state="visible")
        # From the first cell, in command mode: the next review is the edit in cell 2.
        await lab.click_cell("a.ipynb", 0)
        await lab.page.keyboard.press("Escape")
        await lab.page.keyboard.press("Alt+Shift+N")
        edit_review = lab.page.locator(".jp-Copilot-Review[data-call-id='e']")
        await eventually(lambda: _has_class(edit_review, "jp-mod-current"), "the edit marked")
        assert await _active_index(lab) == 1
        await lab.page.keyboard.press("Alt+Shift+Enter")
        await edit_review.wait_for(state="detached")
        assert (await cells(lab))[1][2] == "r = 3\n"
        # Then the pending cell below cell 3; Undo from the keyboard leaves the cells alone.
        await lab.page.keyboard.press("Alt+Shift+N")
        await eventually(lambda: _has_class(pending_of(lab, "i"), "jp-mod-current"), "marked")
        assert await _active_index(lab) == 2
        await lab.page.keyboard.press("Alt+Shift+Backspace")
        await pending_of(lab, "i").wait_for(state="detached")
        assert [c[0] for c in await cells(lab)] == [c[0] for c in before]
        assert await decisions(lab, "e") == ["keep"] and await decisions(lab, "i") == ["undo"]
        # The three commands are in the command palette.
        labels = await lab.page.evaluate(
            """() => ['keep-review', 'undo-review', 'next-review'].map(
                id => window.jupyterapp.commands.label('jupyter-copilot:' + id))"""
        )
        assert labels == [
            "Keep the Copilot Proposal",
            "Undo the Copilot Proposal",
            "Go to the Next Copilot Proposal",
        ]


async def _has_class(locator: Any, name: str) -> bool:
    return name in ((await locator.get_attribute("class")) or "").split()


async def _active_index(lab: Lab) -> int:
    return await lab.page.evaluate(  # type: ignore[no-any-return]
        "() => window.jupyterapp.shell.currentWidget.content.activeCellIndex"
    )
