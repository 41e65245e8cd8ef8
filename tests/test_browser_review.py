"""The whole-cell diff review in real JupyterLab: what a person sees, keeps and undoes."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from jupyter_copilot.admin.killswitch import config_directories
from jupyter_copilot.mcp.tools import READ_CELLS
from jupyter_copilot.page.bridge import PageSession
from jupyter_copilot.page.context import source_hash
from jupyter_copilot.protocol.refusals import Refusal
from tests.conftest import make_notebook
from tests.eventually import eventually
from tests.lab import Lab, lab_page
from tests.pages import get_context
from tests.server import ABORT, INVOKE, call_action, registrations

# Real JupyterLab in Chromium: `pytest -m "not browser"` leaves these out. No test here runs
# code, so the kernel sessions attach to one real kernel per test process (tests/kernels.py).
pytestmark = [pytest.mark.browser, pytest.mark.shared_kernel]

OLD = "def total(xs):\n    return sum(xs)\n"
NEW = "def total(xs):\n    return sum(x for x in xs if x is not None)\n"
CELLS = ["import os", OLD, "total([1, 2])"]
#: A nine-line cell and a proposal that changes three separate lines of it: three hunks.
LINES = [f"{name} = {value}\n" for value, name in enumerate("abcdefghi", 1)]
LINES_OLD = "".join(LINES)
LINES_NEW = "".join(["a = 10\n", *LINES[1:4], "e = 50\n", *LINES[5:8], "i = 90\n"])


async def selected_cell(lab: Lab, jp_fetch: Any, path: str, index: int) -> dict[str, Any]:
    """Click a cell and return its served context value once the server serves it."""
    await lab.click_cell(path, index)
    cell_id = await lab.notebook(path).locator(".jp-Cell").nth(index).get_attribute("data-cell-id")

    async def served() -> dict[str, Any] | None:
        entries = await get_context(jp_fetch)
        cells = [e for e in entries if e["name"] == "notebook_selected_cell"]
        if cells and (cell_id is None or cells[0]["value"]["cellId"] == cell_id):
            return cells[0]["value"]  # type: ignore[no-any-return]
        return None

    return await eventually(served, f"the context of cell {index}")  # type: ignore[no-any-return]


async def open_notebook(lab: Lab, jp_fetch: Any, path: str) -> None:
    """Open a notebook and wait until its kernel session holds the edit tool."""
    await lab.open(path)

    async def registered() -> bool:
        return any(r["path"] == path for r in await registrations(jp_fetch))

    await eventually(registered, "the kernel session's registration", timeout=30)


def proposal(cell: dict[str, Any], new_source: str = NEW, **changes: Any) -> dict[str, Any]:
    data = {
        "artifactId": cell["artifactId"],
        "cellId": cell["cellId"],
        "expectedSourceHash": cell["expectedSourceHash"],
        "newSource": new_source,
    }
    data.update(changes)
    return data


async def propose(jp_fetch: Any, data: dict[str, Any], call_id: str) -> tuple[int, dict[str, Any]]:
    return await call_action(jp_fetch, INVOKE, {"data": data, "callId": call_id})


async def model_source(lab: Lab, cell_id: str) -> str:
    """The cell's source in the page's live notebook model."""
    return await lab.page.evaluate(  # type: ignore[no-any-return]
        """cellId => {
            const nb = window.jupyterapp.shell.currentWidget.content;
            for (const cell of nb.model.cells) {
                if (cell.id === cellId) { return cell.sharedModel.getSource(); }
            }
            return null;
        }""",
        cell_id,
    )


async def cell_holding(lab: Lab, call_id: str) -> str | None:
    """The model id of the cell widget whose node holds the review."""
    return await lab.page.evaluate(  # type: ignore[no-any-return]
        """callId => {
            const node = document.querySelector(`.jp-Copilot-Review[data-call-id="${callId}"]`);
            const nb = window.jupyterapp.shell.currentWidget.content;
            const owner = nb.widgets.find(w => w.node.contains(node));
            return owner ? owner.model.id : null;
        }""",
        call_id,
    )


def review_of(lab: Lab, call_id: str) -> Any:
    return lab.page.locator(f".jp-Copilot-Review[data-call-id='{call_id}']")


def reported(lab: Lab, call_id: str) -> list[str]:
    """The decisions the page has reported on one review so far."""
    return [m["decision"] for m in lab.traffic.of_type("review") if m["callId"] == call_id]


async def decisions(lab: Lab, call_id: str) -> list[str]:
    """The decisions the page reported on one review, once it has reported one.

    The browser reports sent frames as events that can reach the test after the page's DOM
    already shows the decision, so this waits for the first one.
    """
    return await eventually(lambda: reported(lab, call_id), f"the page's decision on {call_id}")


async def test_a_proposal_opens_a_visible_review_and_changes_nothing(
    lab_server, jp_fetch, jp_root_dir
) -> None:
    make_notebook(jp_root_dir, "a.ipynb", CELLS)
    async with lab_page(lab_server) as lab:
        await open_notebook(lab, jp_fetch, "a.ipynb")
        cell = await selected_cell(lab, jp_fetch, "a.ipynb", 1)
        status, body = await propose(jp_fetch, proposal(cell), "show")
        assert status == 200, body
        assert body["result"]["sourceHashAfter"] == source_hash(NEW)
        assert "source" not in json.dumps(body["result"]).replace("sourceHashAfter", "")
        review = review_of(lab, "show")
        await review.wait_for(state="visible")
        # Inside the cell it is about, with a label, the diff and both buttons.
        assert await cell_holding(lab, "show") == cell["cellId"]
        assert "Copilot" in await review.locator(".jp-Copilot-ReviewLabel").inner_text()
        diff = await review.locator(".jp-Copilot-ReviewDiff .jp-Copilot-DiffText").inner_text()
        assert "if x is not None" in diff and "return sum(xs)" in diff
        assert await review.locator(".jp-Copilot-ReviewKeep").is_enabled()
        assert await review.locator(".jp-Copilot-ReviewUndo").is_enabled()
        # The notebook is unchanged while the review is open.
        assert await model_source(lab, cell["cellId"]) == OLD
        assert (await selected_cell(lab, jp_fetch, "a.ipynb", 1))["source"] == OLD
        meta = lab.page.locator(".jp-Copilot-Pill")
        await eventually(lambda: _text_has(meta, "3 lines"), "the pill of the reviewed cell")
        shot = await lab.screenshot("copilot-review.png")
        assert shot.stat().st_size > 10_000


async def test_keep_applies_exactly_the_proposal_and_one_undo_restores(
    lab_server, jp_fetch, jp_root_dir
) -> None:
    make_notebook(jp_root_dir, "a.ipynb", CELLS)
    async with lab_page(lab_server) as lab:
        await open_notebook(lab, jp_fetch, "a.ipynb")
        cell = await selected_cell(lab, jp_fetch, "a.ipynb", 1)
        assert (await propose(jp_fetch, proposal(cell), "keep"))[0] == 200
        review = review_of(lab, "keep")
        await review.locator(".jp-Copilot-ReviewKeep").click()
        await review.wait_for(state="detached")
        assert await model_source(lab, cell["cellId"]) == NEW
        assert await decisions(lab, "keep") == ["keep"]
        assert [m["callId"] for m in lab.traffic.of_type("keep")] == ["keep"]  # sent before
        # One undo step, from the cell's editor.
        await lab.click_cell("a.ipynb", 1)
        await lab.page.keyboard.press("Control+z")
        await eventually(
            lambda: _source_is(lab, cell["cellId"], OLD), "one Ctrl+Z to restore the old source"
        )


async def test_undo_discards_the_proposal(lab_server, jp_fetch, jp_root_dir) -> None:
    make_notebook(jp_root_dir, "a.ipynb", CELLS)
    async with lab_page(lab_server) as lab:
        await open_notebook(lab, jp_fetch, "a.ipynb")
        cell = await selected_cell(lab, jp_fetch, "a.ipynb", 1)
        assert (await propose(jp_fetch, proposal(cell), "undo"))[0] == 200
        review = review_of(lab, "undo")
        # From the keyboard: focus the Undo button and press Enter.
        await review.locator(".jp-Copilot-ReviewUndo").focus()
        await lab.page.keyboard.press("Enter")
        await review.wait_for(state="detached")
        assert await model_source(lab, cell["cellId"]) == OLD
        assert await decisions(lab, "undo") == ["undo"]


async def test_typing_during_the_review_makes_keep_refuse_and_keeps_the_typing(
    lab_server, jp_fetch, jp_root_dir
) -> None:
    make_notebook(jp_root_dir, "a.ipynb", CELLS)
    async with lab_page(lab_server) as lab:
        await open_notebook(lab, jp_fetch, "a.ipynb")
        cell = await selected_cell(lab, jp_fetch, "a.ipynb", 1)
        assert (await propose(jp_fetch, proposal(cell), "typed"))[0] == 200
        review = review_of(lab, "typed")
        await review.wait_for(state="visible")
        await lab.click_cell("a.ipynb", 1)
        await lab.page.keyboard.press("Control+End")
        await lab.page.keyboard.type("# mine")
        await review.locator(".jp-Copilot-ReviewKeep").click()
        await eventually(lambda: _has_decision(lab, "typed", "conflict"), "the conflict")
        typed = OLD + "# mine"
        assert await model_source(lab, cell["cellId"]) == typed
        message = lab.page.locator(".jp-Copilot-ReviewMessage")
        if await message.count():
            assert "changed" in (await message.first.inner_text()).lower()


async def test_a_newer_proposal_supersedes_the_older(lab_server, jp_fetch, jp_root_dir) -> None:
    make_notebook(jp_root_dir, "a.ipynb", CELLS)
    async with lab_page(lab_server) as lab:
        await open_notebook(lab, jp_fetch, "a.ipynb")
        cell = await selected_cell(lab, jp_fetch, "a.ipynb", 1)
        assert (await propose(jp_fetch, proposal(cell), "first"))[0] == 200
        await review_of(lab, "first").wait_for(state="visible")
        second = proposal(cell, "def total(xs):\n    return 0\n")
        assert (await propose(jp_fetch, second, "second"))[0] == 200
        await review_of(lab, "second").wait_for(state="visible")
        await review_of(lab, "first").wait_for(state="detached")
        assert await decisions(lab, "first") == ["superseded"]
        assert await lab.page.locator(".jp-Copilot-Review").count() == 1


async def test_partial_keep_applies_exactly_the_hunks_not_dropped(
    lab_server, jp_fetch, jp_root_dir
) -> None:
    lines, old, new = LINES, LINES_OLD, LINES_NEW
    chosen = "".join(["a = 10\n", *lines[1:8], "i = 90\n"])
    make_notebook(jp_root_dir, "a.ipynb", ["import os", old, "total([1, 2])"])
    async with lab_page(lab_server) as lab:
        await open_notebook(lab, jp_fetch, "a.ipynb")
        cell = await selected_cell(lab, jp_fetch, "a.ipynb", 1)
        assert (await propose(jp_fetch, proposal(cell, new), "part"))[0] == 200
        review = review_of(lab, "part")
        await review.wait_for(state="visible")
        drops = review.locator(".jp-Copilot-HunkDrop")
        await eventually(lambda: _count_is(drops, 3), "a drop button per hunk")
        await lab.screenshot("copilot-partial-keep.png")
        # Drop the middle hunk, keep the first one explicitly, leave the last as proposed.
        await drops.nth(1).click()
        await eventually(lambda: _count_is(drops, 2), "the middle hunk dropped")
        await review.locator(".jp-Copilot-HunkKeep").first.click()
        await eventually(lambda: _count_is(drops, 1), "the first hunk kept")
        # Nothing reached the cell yet.
        assert await model_source(lab, cell["cellId"]) == old
        await review.locator(".jp-Copilot-ReviewKeep").click()
        await review.wait_for(state="detached")
        assert await model_source(lab, cell["cellId"]) == chosen
        assert await decisions(lab, "part") == ["keep"]
        # Still one undo step.
        await lab.click_cell("a.ipynb", 1)
        await lab.page.keyboard.press("Control+z")
        await eventually(lambda: _source_is(lab, cell["cellId"], old), "one Ctrl+Z")
        # A proposal with other line endings is reviewed as a whole.
        cell = await selected_cell(lab, jp_fetch, "a.ipynb", 1)
        crlf = new.replace("\n", "\r\n")
        assert (await propose(jp_fetch, proposal(cell, crlf), "whole"))[0] == 200
        await review_of(lab, "whole").wait_for(state="visible")
        assert await review_of(lab, "whole").locator(".jp-Copilot-HunkDrop").count() == 0


async def test_a_later_review_shows_only_its_own_diff_and_hunks(
    lab_server, jp_fetch, jp_root_dir
) -> None:
    """A review's diff editor is taken over by the next one: nothing of the first may show."""
    lines, old, new = LINES, LINES_OLD, LINES_NEW
    make_notebook(jp_root_dir, "a.ipynb", ["import os", old, "total([1, 2])"])
    async with lab_page(lab_server) as lab:
        await open_notebook(lab, jp_fetch, "a.ipynb")
        cell = await selected_cell(lab, jp_fetch, "a.ipynb", 1)
        assert (await propose(jp_fetch, proposal(cell, new), "first"))[0] == 200
        first = review_of(lab, "first")
        drops = first.locator(".jp-Copilot-HunkDrop")
        await eventually(lambda: _count_is(drops, 3), "a drop button per hunk")
        await drops.nth(1).click()  # the first review's document now differs from its proposal
        await eventually(lambda: _count_is(drops, 2), "the middle hunk dropped")
        await first.locator(".jp-Copilot-ReviewUndo").click()
        await first.wait_for(state="detached")
        # The next review, on another cell, with one hunk of its own.
        other = await selected_cell(lab, jp_fetch, "a.ipynb", 2)
        assert (await propose(jp_fetch, proposal(other, "total([1, 2, 3])"), "next"))[0] == 200
        second = review_of(lab, "next")
        await second.wait_for(state="visible")
        diff = await second.locator(".jp-Copilot-ReviewDiff .jp-Copilot-DiffText").inner_text()
        assert "total([1, 2, 3])" in diff and "total([1, 2])" in diff
        assert not any(line.strip() in diff for line in lines)
        await eventually(lambda: _count_is(second.locator(".jp-Copilot-HunkDrop"), 1), "one hunk")
        assert await lab.page.locator(".jp-Copilot-DiffText").count() == 1
        # Keep applies this proposal whole: no drop of the first review carries over.
        await second.locator(".jp-Copilot-ReviewKeep").click()
        await second.wait_for(state="detached")
        assert await model_source(lab, other["cellId"]) == "total([1, 2, 3])"
        assert await model_source(lab, cell["cellId"]) == old
        # A third, by superseding: the editor passes on again and shows the newest proposal.
        other = await selected_cell(lab, jp_fetch, "a.ipynb", 2)
        for n, text in enumerate(["total([4])", "total([5])"]):
            assert (await propose(jp_fetch, proposal(other, text), f"s{n}"))[0] == 200
            await review_of(lab, f"s{n}").wait_for(state="visible")
        newest = await review_of(lab, "s1").locator(".jp-Copilot-DiffText").inner_text()
        assert "total([5])" in newest and "total([4])" not in newest
        assert await decisions(lab, "s0") == ["superseded"]


# The text of a diff and its hunks' buttons, in the diff's shadow root: where each button and
# each piece of changed or removed text is drawn, and which of them meet.
OVERLAPS_JS = """
callId => {
  const host = document.querySelector(
    `.jp-Copilot-Review[data-call-id="${callId}"] .jp-Copilot-ReviewDiff`);
  const root = host.shadowRoot;
  const buttons = [...root.querySelectorAll('.cm-chunkButtons button')]
    .map(b => b.getBoundingClientRect());
  const texts = [];
  for (const line of root.querySelectorAll('.cm-deletedLine, .cm-changedLine')) {
    const walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (!n.textContent.trim()) continue;
      const range = document.createRange();
      range.selectNodeContents(n);
      texts.push(...range.getClientRects());
    }
  }
  const meet = (a, b) =>
    a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  let overlaps = 0;
  for (const b of buttons) for (const t of texts) if (meet(b, t)) overlaps++;
  return {buttons: buttons.length, texts: texts.length, overlaps};
}
"""


async def screenshots(lab: Lab, name: str) -> None:
    """Screenshots at 1280x800 in JupyterLab Light, then Dark, then Light again."""
    from tests.test_browser_theme import change_theme

    await lab.page.set_viewport_size({"width": 1280, "height": 800})
    await lab.page.mouse.move(0, 0)
    await lab.screenshot(f"{name}.png")
    await change_theme(lab, "JupyterLab Dark")
    # JupyterLab shows its splash screen while it changes theme.
    await lab.page.wait_for_selector("#jupyterlab-splash", state="detached", timeout=30000)
    await lab.screenshot(f"{name}-dark.png")
    await change_theme(lab, "JupyterLab Light")
    await lab.page.wait_for_selector("#jupyterlab-splash", state="detached", timeout=30000)


async def test_the_hunk_buttons_never_cover_a_long_changed_line(
    lab_server, jp_fetch, jp_root_dir
) -> None:
    long_old = "message = '" + " ".join(["word"] * 60) + " end-old'\n"
    long_new = "message = '" + " ".join(["word"] * 60) + " end-new'\n"
    make_notebook(jp_root_dir, "a.ipynb", ["import os", long_old + "print(message)\n", "x"])
    async with lab_page(lab_server, width=1280) as lab:
        await lab.page.set_viewport_size({"width": 1280, "height": 800})
        await open_notebook(lab, jp_fetch, "a.ipynb")
        cell = await selected_cell(lab, jp_fetch, "a.ipynb", 1)
        new = long_new + "print(message.upper())\n"
        assert (await propose(jp_fetch, proposal(cell, new), "long"))[0] == 200
        review = review_of(lab, "long")
        await eventually(lambda: _count_is(review.locator(".jp-Copilot-HunkDrop"), 1), "a hunk")
        seen = await lab.page.evaluate(OVERLAPS_JS, "long")
        # Two buttons, removed and added text that wraps: no button drawn over any of it.
        assert seen["buttons"] == 2 and seen["texts"] >= 4, seen
        assert seen["overlaps"] == 0, seen
        diff = await review.locator(".jp-Copilot-DiffText").inner_text()
        assert "end-old'" in diff and "end-new'" in diff
        await screenshots(lab, "copilot-review-long-line")


async def _summary(review: Any) -> str:
    return str(await review.locator(".jp-Copilot-ReviewSummary").inner_text())


async def _summary_is(review: Any, text: str) -> bool:
    return await _summary(review) == text


async def test_decided_parts_are_marked_counted_and_a_drop_can_be_taken_back(
    lab_server, jp_fetch, jp_root_dir
) -> None:
    lines, old, new = LINES, LINES_OLD, LINES_NEW
    make_notebook(jp_root_dir, "a.ipynb", ["import os", old, "total([1, 2])"])
    async with lab_page(lab_server, width=1280) as lab:
        await open_notebook(lab, jp_fetch, "a.ipynb")
        cell = await selected_cell(lab, jp_fetch, "a.ipynb", 1)
        assert (await propose(jp_fetch, proposal(cell, new), "marks"))[0] == 200
        review = review_of(lab, "marks")
        drops = review.locator(".jp-Copilot-HunkDrop")
        await eventually(lambda: _count_is(drops, 3), "a drop button per hunk")
        assert await _summary(review) == "3 changes"
        # Drop the middle part: it is marked as dropped, its new line struck through.
        await drops.nth(1).click()
        await eventually(lambda: _summary_is(review, "1 dropped, 2 to decide"), "the count")
        chunk = review.locator(".cm-deletedChunk[data-decision='drop']")
        assert await chunk.count() == 1
        assert "e = 5" in await chunk.inner_text()
        assert "Dropped" in await chunk.locator(".jp-Copilot-HunkState").inner_text()
        added = review.locator(".cm-line.jp-Copilot-HunkDropped")
        assert await added.count() == 1 and "e = 50" in await added.inner_text()
        style = await added.evaluate("n => getComputedStyle(n).textDecorationLine")
        assert "line-through" in style
        # Keep the first: marked as kept.
        await review.locator(".jp-Copilot-HunkKeep").first.click()
        await eventually(lambda: _summary_is(review, "1 kept, 1 dropped, 1 to decide"), "the count")
        kept = review.locator(".cm-deletedChunk[data-decision='keep']")
        assert "Kept" in await kept.locator(".jp-Copilot-HunkState").inner_text()
        assert await review.locator(".cm-line.jp-Copilot-HunkKept").count() == 1
        await screenshots(lab, "copilot-partial-keep-marked")
        # The drop is taken back: the part is undecided again, and Keep would apply it.
        await chunk.locator(".jp-Copilot-HunkUndo").click()
        await eventually(lambda: _summary_is(review, "1 kept, 2 to decide"), "the count")
        assert await added.count() == 0
        # Drop the last one instead; Keep applies exactly the rest.
        await drops.nth(1).click()
        await eventually(lambda: _summary_is(review, "1 kept, 1 dropped, 1 to decide"), "count")
        assert await model_source(lab, cell["cellId"]) == old
        await review.locator(".jp-Copilot-ReviewKeep").click()
        await review.wait_for(state="detached")
        chosen = "".join(["a = 10\n", *lines[1:4], "e = 50\n", *lines[5:]])
        assert await model_source(lab, cell["cellId"]) == chosen
        assert await decisions(lab, "marks") == ["keep"]


async def test_a_final_line_break_makes_no_part_whose_two_sides_are_equal(
    lab_server, jp_fetch, jp_root_dir
) -> None:
    # A cell has no final line break, the agent's proposal has one.
    make_notebook(jp_root_dir, "a.ipynb", ["import os", "x = 1"])
    async with lab_page(lab_server, width=1280) as lab:
        await open_notebook(lab, jp_fetch, "a.ipynb")
        cell = await selected_cell(lab, jp_fetch, "a.ipynb", 0)
        new = "import os\nimport sys\n"
        assert (await propose(jp_fetch, proposal(cell, new), "ending"))[0] == 200
        review = review_of(lab, "ending")
        drops = review.locator(".jp-Copilot-HunkDrop")
        await eventually(lambda: _count_is(drops, 1), "one part")
        # The one part adds "import sys"; "import os" is not removed and added again.
        assert await review.locator(".cm-deletedLine").count() == 0
        changed = await review.locator(".cm-changedLine").all_inner_texts()
        assert [t.strip() for t in changed] == ["import sys"]
        assert "adds a line break" in await review.locator(".jp-Copilot-ReviewEnding").inner_text()
        # Dropped, the part leaves the cell exactly as it was, line break included.
        await drops.first.click()
        await review.locator(".jp-Copilot-ReviewKeep").click()
        await review.wait_for(state="detached")
        assert await model_source(lab, cell["cellId"]) == "import os"
        # Kept, the proposal applies exactly as it came.
        cell = await selected_cell(lab, jp_fetch, "a.ipynb", 0)
        assert (await propose(jp_fetch, proposal(cell, new), "ending-2"))[0] == 200
        review = review_of(lab, "ending-2")
        await review.locator(".jp-Copilot-ReviewKeep").click()
        await review.wait_for(state="detached")
        assert await model_source(lab, cell["cellId"]) == new


async def test_abort_withdraws_an_open_review(lab_server, jp_fetch, jp_root_dir) -> None:
    make_notebook(jp_root_dir, "a.ipynb", CELLS)
    async with lab_page(lab_server) as lab:
        await open_notebook(lab, jp_fetch, "a.ipynb")
        cell = await selected_cell(lab, jp_fetch, "a.ipynb", 1)
        assert (await propose(jp_fetch, proposal(cell), "gone"))[0] == 200
        review = review_of(lab, "gone")
        await review.wait_for(state="visible")
        status, body = await call_action(jp_fetch, ABORT, {"data": {"callId": "gone"}})
        assert (status, body) == (200, {"result": {"aborted": True}})
        await review.wait_for(state="detached")
        assert await model_source(lab, cell["cellId"]) == OLD


async def test_the_last_cell_of_a_300_cell_notebook_gets_its_review(
    lab_server, jp_fetch, jp_root_dir
) -> None:
    sources = [f"value_{i} = {i}" for i in range(300)]
    make_notebook(jp_root_dir, "long.ipynb", sources)
    async with lab_page(lab_server) as lab:
        await open_notebook(lab, jp_fetch, "long.ipynb")
        # Select the first cell, then serve the last one's context as an agent would read it
        # from an earlier selection: scroll down, select, scroll back to the top.
        await lab.page.evaluate(
            """() => {
                const panel = window.jupyterapp.shell.currentWidget;
                panel.content.activeCellIndex = 299;
            }"""
        )
        entries = await eventually(lambda: _selected(jp_fetch, "value_299 = 299"), "the last cell")
        cell = entries
        # Until JupyterLab has rendered every cell, cells rendered above a review push it down.
        await lab.page.wait_for_function(
            """() => !window.jupyterapp.shell.currentWidget.content.widgets
                .some(w => w.isPlaceholder())""",
            timeout=60_000,
        )
        await lab.page.evaluate(
            """async () => {
                const nb = window.jupyterapp.shell.currentWidget.content;
                nb.activeCellIndex = 0;
                await nb.scrollToItem(0, 'start');
            }"""
        )
        status, body = await propose(jp_fetch, proposal(cell, "value_299 = 'reviewed'"), "far")
        assert status == 200, body
        review = review_of(lab, "far")
        await review.wait_for(state="visible")
        assert await review.is_visible()
        # Far below the top it was shown from: the notebook scrolls to it once it is laid out.
        await lab.page.wait_for_function(
            """() => {
                const review = document.querySelector('.jp-Copilot-Review');
                const scroller = review.closest('.jp-WindowedPanel-outer');
                const r = review.getBoundingClientRect(), s = scroller.getBoundingClientRect();
                return r.top >= s.top && r.bottom <= s.bottom;
            }""",
            timeout=10_000,
        )
        assert await model_source(lab, cell["cellId"]) == "value_299 = 299"


async def test_closing_the_page_mid_call_is_timeout_at_once_and_changes_nothing(
    lab_server, jp_fetch, jp_root_dir
) -> None:
    path = make_notebook(jp_root_dir, "a.ipynb", CELLS)
    before = path.read_text()
    async with lab_page(lab_server) as lab:
        await open_notebook(lab, jp_fetch, "a.ipynb")
        cell = await selected_cell(lab, jp_fetch, "a.ipynb", 1)
        # Keep the page's main thread busy so that it is mid-call when it closes.
        await lab.page.evaluate(
            """() => { setTimeout(() => {
                const end = Date.now() + 8000; while (Date.now() < end) {} }, 0); }"""
        )
        call = asyncio.ensure_future(propose(jp_fetch, proposal(cell), "closed"))
        # Let the call reach the busy page: a page that is busy cannot be asked whether it has.
        await asyncio.sleep(0.5)
        started = time.monotonic()
        await lab.page.close()
        status, body = await asyncio.wait_for(call, 10)
        assert (status, body["error"]["code"]) == (504, "timeout")
        # The page went away: the call ends then, not after the page timeout (10 s).
        assert time.monotonic() - started < 5
    assert path.read_text() == before


class HeldBridge:
    """Holds back chosen server-to-page bridge messages, as a slow network would.

    The page's socket lives in a worker, out of reach of the browser's routing, so the
    messages are held where the server sends them.
    """

    def __init__(self, monkeypatch: Any) -> None:
        #: Server requests for these actions, and verdicts for Keep, do not reach the page.
        self.hold_requests: set[str] = set()
        self.hold_verdicts = False
        self.held: list[dict[str, Any]] = []
        send = PageSession.send

        def held_send(session: PageSession, message: dict[str, Any]) -> None:
            if (message.get("type") == "request" and message["action"] in self.hold_requests) or (
                message.get("type") == "keep-verdict" and self.hold_verdicts
            ):
                self.held.append(message)
                return
            send(session, message)

        monkeypatch.setattr(PageSession, "send", held_send)

    async def holds(self, kind: str) -> bool:
        return any(m["type"] == kind for m in self.held)


async def _reloaded(lab: Lab, jp_fetch: Any) -> None:
    """Reload the page and wait for the notebook and its cells again."""
    await lab.page.reload()
    await lab.page.wait_for_selector("#jupyter-copilot-panel", state="attached", timeout=60000)
    await lab.page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=60000)


async def test_reloading_mid_invoke_ends_the_call_at_once_and_shows_nothing(
    lab_server, jp_fetch, jp_root_dir, copilot, monkeypatch
) -> None:
    path = make_notebook(jp_root_dir, "a.ipynb", CELLS)
    before = path.read_text()
    async with lab_page(lab_server, "a.ipynb") as lab:
        await open_notebook(lab, jp_fetch, "a.ipynb")
        cell = await selected_cell(lab, jp_fetch, "a.ipynb", 1)
        bridge = HeldBridge(monkeypatch)
        bridge.hold_requests.add(INVOKE)
        call = asyncio.ensure_future(propose(jp_fetch, proposal(cell), "reload-invoke"))
        await eventually(lambda: bridge.holds("request"), "the invoke request")
        started = time.monotonic()
        ended: list[float] = []
        call.add_done_callback(lambda _: ended.append(time.monotonic()))
        await _reloaded(lab, jp_fetch)
        status, body = await asyncio.wait_for(call, 10)
        assert (status, body["error"]["code"]) == (504, "timeout")
        # The page went away: the call ends then, not at the 10 s page timeout. Timed to its
        # own end, not to the reloaded page's, which a loaded machine takes long to draw.
        assert ended[0] - started < 8
        await eventually(lambda: _source_is(lab, cell["cellId"], OLD), "the reloaded notebook")
        assert await lab.page.locator(".jp-Copilot-Review").count() == 0
    assert copilot.proposal_tools["notebook_edit_cell"].calls.open_reviews() == []
    assert path.read_text() == before


async def test_reloading_mid_keep_applies_nothing_and_the_review_is_withdrawn(
    lab_server, jp_fetch, jp_root_dir, copilot, monkeypatch
) -> None:
    path = make_notebook(jp_root_dir, "a.ipynb", CELLS)
    before = path.read_text()
    async with lab_page(lab_server, "a.ipynb") as lab:
        await open_notebook(lab, jp_fetch, "a.ipynb")
        cell = await selected_cell(lab, jp_fetch, "a.ipynb", 1)
        assert (await propose(jp_fetch, proposal(cell), "reload-keep"))[0] == 200
        review = review_of(lab, "reload-keep")
        await review.wait_for(state="visible")
        bridge = HeldBridge(monkeypatch)
        bridge.hold_verdicts = True
        await review.locator(".jp-Copilot-ReviewKeep").click()
        # The server said yes; the page has not heard it when it reloads.
        await eventually(lambda: bridge.holds("keep-verdict"), "the verdict")
        assert bridge.held[0]["ok"] is True
        message = await review.locator(".jp-Copilot-ReviewMessage").inner_text()
        assert "Checking" in message
        assert await model_source(lab, cell["cellId"]) == OLD
        await _reloaded(lab, jp_fetch)
        await eventually(lambda: _source_is(lab, cell["cellId"], OLD), "the reloaded notebook")
        assert await lab.page.locator(".jp-Copilot-Review").count() == 0
        # The server let the review go with its page: its Keep is refused from now on.
        assert copilot.proposal_tools["notebook_edit_cell"].calls.open_reviews() == []
        assert copilot.proposal_tools["notebook_edit_cell"].calls.get("reload-keep") is None
    assert path.read_text() == before


async def _text_has(locator: Any, text: str) -> bool:
    return text in await locator.inner_text()


async def _count_is(locator: Any, count: int) -> bool:
    return await locator.count() == count  # type: ignore[no-any-return]


async def _source_is(lab: Lab, cell_id: str, source: str) -> bool:
    return await model_source(lab, cell_id) == source


async def _has_decision(lab: Lab, call_id: str, decision: str) -> bool:
    return decision in reported(lab, call_id)


async def _selected(jp_fetch: Any, source: str) -> dict[str, Any] | None:
    entries = await get_context(jp_fetch)
    cells = [e for e in entries if e["name"] == "notebook_selected_cell"]
    if cells and cells[0]["value"].get("source") == source:
        return cells[0]["value"]  # type: ignore[no-any-return]
    return None


class TestKillSwitchDuringReview:
    async def test_engaging_the_kill_switch_by_file_blocks_keep_of_an_open_review(
        self, lab_server, jp_fetch, jp_root_dir, copilot
    ) -> None:
        make_notebook(jp_root_dir, "a.ipynb", CELLS)
        async with lab_page(lab_server) as lab:
            await open_notebook(lab, jp_fetch, "a.ipynb")
            cell = await selected_cell(lab, jp_fetch, "a.ipynb", 1)
            assert (await propose(jp_fetch, proposal(cell), "ks"))[0] == 200
            review = review_of(lab, "ks")
            await review.wait_for(state="visible")
            config_dir = Path(config_directories(copilot)[0])
            config_dir.mkdir(parents=True, exist_ok=True)
            (config_dir / "jupyter_copilot_config.json").write_text(
                json.dumps({"CopilotApp": {"tools_enabled": False}})
            )
            keep = review.locator(".jp-Copilot-ReviewKeep")
            # Within 2 seconds the page hears it and says why Keep is unavailable.
            await eventually(lambda: keep.is_disabled(), "Keep disabled", timeout=3)
            message = await review.locator(".jp-Copilot-ReviewMessage").inner_text()
            assert "administrator" in message.lower()
            # The hunk buttons no longer offer a choice that Keep cannot apply.
            hunks = review.locator(".jp-Copilot-HunkKeep, .jp-Copilot-HunkDrop")
            assert await hunks.count() >= 2
            for n in range(await hunks.count()):
                assert await hunks.nth(n).is_disabled()
            # So is the panel's Keep all; Undo all still works.
            changes = lab.page.locator(".jp-Copilot-Changes")
            assert await changes.locator(".jp-Copilot-KeepAll").is_disabled()
            assert await changes.locator(".jp-Copilot-UndoAll").is_enabled()
            await lab.screenshot("copilot-review-kill-switch.png")
            assert await model_source(lab, cell["cellId"]) == OLD
            # New proposals are refused as well.
            status, body = await propose(jp_fetch, proposal(cell), "ks-2")
            assert (status, body["error"]["code"]) == (503, "kill-switch")


# -- what only the page can check ----------------------------------------------------------


def locked_notebook(root: Path) -> None:
    make_notebook(root, "a.ipynb", CELLS)
    path = root / "a.ipynb"
    notebook = json.loads(path.read_text())
    notebook["cells"][1]["metadata"]["editable"] = False
    path.write_text(json.dumps(notebook))


async def test_the_pages_checks_refuse_in_order(lab_server, jp_fetch, jp_root_dir) -> None:
    locked_notebook(jp_root_dir)
    async with lab_page(lab_server) as lab:
        await open_notebook(lab, jp_fetch, "a.ipynb")
        locked = await selected_cell(lab, jp_fetch, "a.ipynb", 1)
        stale_hash = source_hash("something else")
        attempts = {
            "cell-not-found": proposal(locked, cellId="no-such-cell"),
            # Locked and stale: locked is named first.
            "cell-locked": proposal(locked, expectedSourceHash=stale_hash),
        }
        for code, data in attempts.items():
            status, body = await propose(jp_fetch, data, f"call-{code}")
            assert body["error"]["code"] == code, body
            assert status == {"cell-not-found": 404, "cell-locked": 403}[code]
        free = await selected_cell(lab, jp_fetch, "a.ipynb", 2)
        status, body = await propose(jp_fetch, proposal(free, expectedSourceHash=stale_hash), "s")
        assert (status, body["error"]["code"]) == (409, "stale-source")
        assert await lab.page.locator(".jp-Copilot-Review").count() == 0
        assert await model_source(lab, free["cellId"]) == CELLS[2]


async def test_typing_after_reading_is_stale_source(lab_server, jp_fetch, jp_root_dir) -> None:
    make_notebook(jp_root_dir, "a.ipynb", CELLS)
    async with lab_page(lab_server) as lab:
        await open_notebook(lab, jp_fetch, "a.ipynb")
        cell = await selected_cell(lab, jp_fetch, "a.ipynb", 1)
        await lab.page.keyboard.press("Control+End")
        await lab.page.keyboard.type("# edited after the agent read it")
        status, body = await propose(jp_fetch, proposal(cell), "stale")
        assert (status, body["error"]["code"]) == (409, "stale-source")
        assert await lab.page.locator(".jp-Copilot-Review").count() == 0


async def test_a_cell_whose_type_changed_is_cell_type_mismatch(
    lab_server, jp_fetch, jp_root_dir
) -> None:
    make_notebook(jp_root_dir, "a.ipynb", CELLS)
    async with lab_page(lab_server) as lab:
        await open_notebook(lab, jp_fetch, "a.ipynb")
        cell = await selected_cell(lab, jp_fetch, "a.ipynb", 1)
        assert cell["cellType"] == "code"
        await lab.page.keyboard.press("Escape")
        await lab.page.evaluate(
            "() => window.jupyterapp.commands.execute('notebook:change-cell-to-markdown')"
        )
        status, body = await propose(jp_fetch, proposal(cell), "retyped")
        assert (status, body["error"]["code"]) == (409, "cell-type-mismatch")


async def test_a_review_that_cannot_be_shown_is_diff_unavailable(
    lab_server, jp_fetch, jp_root_dir
) -> None:
    make_notebook(jp_root_dir, "a.ipynb", CELLS)
    async with lab_page(lab_server) as lab:
        await open_notebook(lab, jp_fetch, "a.ipynb")
        cell = await selected_cell(lab, jp_fetch, "a.ipynb", 1)
        # The review's code is loaded on first use; a network that refuses it (a proxy, a
        # policy) leaves no way to show the diff, and nothing is written instead.
        chunks = "**/jupyterlab-agent-review/static/*.js?*"
        await lab.page.route(chunks, lambda route: route.abort())
        status, body = await propose(jp_fetch, proposal(cell), "no-diff")
        assert (status, body["error"]["code"]) == (409, "diff-unavailable")
        assert await model_source(lab, cell["cellId"]) == OLD
        assert await lab.page.locator(".jp-Copilot-Review").count() == 0


async def test_a_request_the_page_cannot_read_is_invalid_input_not_timeout(
    lab_server, jp_fetch, jp_root_dir, copilot
) -> None:
    # The server validates what it asks, so only a request built past its checks reaches
    # the page malformed; the page's invalid-input must come back as itself (it used to end
    # as timeout: docs/protocol.md section 9).
    make_notebook(jp_root_dir, "a.ipynb", CELLS)
    async with lab_page(lab_server) as lab:
        await open_notebook(lab, jp_fetch, "a.ipynb")
        [session] = copilot.dispatcher.pages()
        for action, data in ((INVOKE, {"callId": "no-proposal"}), (READ_CELLS, {"path": 3})):
            with pytest.raises(Refusal) as refused:
                await session.request(action, data, 10)
            assert (refused.value.code, refused.value.status) == ("invalid-input", 400), action
        assert await lab.page.locator(".jp-Copilot-Review").count() == 0


class TestAuthorizerDeniesWrite:
    @pytest.fixture
    def jp_server_config(self, jp_server_config: dict[str, Any]) -> dict[str, Any]:
        jp_server_config["ServerApp"]["authorizer_class"] = (
            "tests.permissions.NoContentsWriteAuthorizer"
        )
        return jp_server_config

    async def test_a_user_who_may_not_write_gets_read_only(
        self, lab_server, jp_fetch, jp_root_dir
    ) -> None:
        make_notebook(jp_root_dir, "a.ipynb", CELLS)
        async with lab_page(lab_server) as lab:
            await open_notebook(lab, jp_fetch, "a.ipynb")
            cell = await selected_cell(lab, jp_fetch, "a.ipynb", 1)
            view = (await get_context(jp_fetch))[0]["value"]
            assert view["permissionMode"] == "read-only"
            status, body = await propose(jp_fetch, proposal(cell), "denied")
            assert (status, body["error"]["code"]) == (403, "read-only")
            assert await lab.page.locator(".jp-Copilot-Review").count() == 0


class TestDocumentOpenedReadOnly:
    @pytest.fixture
    def jp_server_config(self, jp_server_config: dict[str, Any]) -> dict[str, Any]:
        jp_server_config["ServerApp"]["contents_manager_class"] = (
            "tests.permissions.ReadOnlyNotebooksManager"
        )
        return jp_server_config

    async def test_a_notebook_opened_read_only_gets_read_only(
        self, lab_server, jp_fetch, jp_root_dir
    ) -> None:
        make_notebook(jp_root_dir, "readonly-a.ipynb", CELLS)
        async with lab_page(lab_server) as lab:
            await open_notebook(lab, jp_fetch, "readonly-a.ipynb")
            cell = await selected_cell(lab, jp_fetch, "readonly-a.ipynb", 1)
            state = await lab.state_selecting(cell["cellId"])
            assert state["activeNotebook"]["writable"] is False
            status, body = await propose(jp_fetch, proposal(cell), "ro")
            assert (status, body["error"]["code"]) == (403, "read-only")
            assert await lab.page.locator(".jp-Copilot-Review").count() == 0
