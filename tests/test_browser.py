"""What a person sees and does in real JupyterLab, in headless Chromium."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from jupyter_copilot.page.context import source_hash
from tests.conftest import make_notebook
from tests.eventually import eventually
from tests.lab import UNUSED_EXTENSIONS, Lab, lab_page
from tests.pages import get_context

# Real JupyterLab in Chromium: `pytest -m "not browser"` leaves these out. No test here runs
# code, so the kernel sessions attach to one real kernel per test process (tests/kernels.py).
pytestmark = [pytest.mark.browser, pytest.mark.shared_kernel]

A_CELLS = ["import os\nimport sys\n", "def total(xs):\n    return sum(xs)\n", "total([1, 2])"]
B_CELLS = ["b = 2", "print(b)"]


@pytest.fixture
def notebooks(jp_root_dir: Path) -> None:
    make_notebook(jp_root_dir, "a.ipynb", A_CELLS)
    make_notebook(jp_root_dir, "b.ipynb", B_CELLS)


async def selected_source(jp_fetch, page_id: str) -> str | None:
    entries = await get_context(jp_fetch, page_id)
    cells = [e for e in entries if e["name"] == "notebook_selected_cell"]
    return cells[0]["value"].get("source") if cells else None


async def open_both(lab: Lab) -> None:
    await lab.open("a.ipynb")
    await lab.open("b.ipynb")


async def test_selecting_a_cell_shows_the_pill_and_serves_that_cell(
    lab_server, jp_fetch, notebooks
) -> None:
    async with lab_page(lab_server) as lab:
        # The browser tests' JupyterLab starts without the extensions they do not use.
        assert not await lab.extension_on(UNUSED_EXTENSIONS[0])
        await open_both(lab)
        await lab.select_tab("a.ipynb")
        await lab.click_cell("a.ipynb", 1)
        page_id = await lab.page_id()
        entries = await eventually(
            lambda: _context_with_source(jp_fetch, page_id, A_CELLS[1]), "a.ipynb's cell 2"
        )
        view, cell = entries
        assert view["value"]["permissionMode"] == "edit"
        assert view["value"]["selectedCellCount"] == 1
        assert cell["value"]["expectedSourceHash"] == source_hash(A_CELLS[1])

        # The panel refreshes shortly after the page's state message: until then the pill may
        # still show the cell that was active when the notebook opened.
        pill = await lab.pill()
        cell_id = cell["value"]["cellId"]

        async def pill_shows_cell() -> bool:
            return await pill.get_attribute("data-cell-id") == cell_id

        await eventually(pill_shows_cell, "the pill of a.ipynb's cell 2")
        assert await _pill_label_is(lab, "Selected python cell")
        assert await pill.get_attribute("data-attached") == "false"
        text = await pill.inner_text()
        # As the editor shows it: two lines of code and the empty line after the newline.
        assert "3 lines" in text and "return sum" not in text
        # The page's own hash (TypeScript) agrees with the server's (Python).
        state = await lab.state_selecting(cell_id)
        assert state["activeNotebook"]["selectedCellHash"] == source_hash(A_CELLS[1])
        # Without a pageId the only page answers the same.
        assert (await get_context(jp_fetch))[1]["value"]["cellId"] == cell["value"]["cellId"]

        await lab.select_tab("a.ipynb")
        shot = await lab.screenshot("copilot-panel-pill.png")
        assert shot.stat().st_size > 10_000


async def test_switching_tabs_moves_the_context(lab_server, jp_fetch, notebooks) -> None:
    async with lab_page(lab_server) as lab:
        await open_both(lab)
        page_id = await lab.page_id()
        await lab.select_tab("b.ipynb")
        await lab.click_cell("b.ipynb", 1)
        await eventually(lambda: _context_with_source(jp_fetch, page_id, B_CELLS[1]), "b")
        await lab.select_tab("a.ipynb")
        await lab.click_cell("a.ipynb", 0)
        await eventually(lambda: _context_with_source(jp_fetch, page_id, A_CELLS[0]), "a")


async def test_thirty_rapid_tab_switches_leave_one_bridge_and_the_right_context(
    lab_server, jp_fetch, notebooks, copilot
) -> None:
    async with lab_page(lab_server) as lab:
        await open_both(lab)
        page_id = await lab.page_id()
        for i in range(30):
            await lab.select_tab("a.ipynb" if i % 2 else "b.ipynb")
        # The last switch went to a.ipynb.
        await lab.click_cell("a.ipynb", 2)
        await eventually(lambda: _context_with_source(jp_fetch, page_id, A_CELLS[2]), "a, cell 3")
        assert (lab.traffic.opened, lab.traffic.closed) == (1, 0)
        assert [p.page_id for p in copilot.dispatcher.pages()] == [page_id]
        panel = lab.page.locator("#jupyter-copilot-panel")
        await eventually(
            lambda: _attribute_is(panel, "data-notebook-watchers", "1"), "one notebook watcher"
        )
        hellos = lab.traffic.of_type("hello")
        assert len(hellos) == 1
        # The page reports its path with the server's base URL (/a%40b/) stripped.
        assert hellos[0]["url"] == "lab" and hellos[0]["protocol"] == 1

        # Closing a tab and opening another notebook leaves one watcher, on the new one.
        await lab.select_tab("b.ipynb")
        await lab.page.evaluate(
            "() => { void window.jupyterapp.commands.execute('application:close'); }"
        )
        # The kernel filled in language_info, so JupyterLab asks about saving: discard.
        discard = lab.page.locator(".jp-Dialog .jp-Dialog-button.jp-mod-warn")
        await discard.click()
        make_notebook(Path(lab_server.root_dir), "c.ipynb", ["c = 3", "c * 2"])
        await lab.open("c.ipynb")
        await lab.click_cell("c.ipynb", 1)
        await eventually(lambda: _context_with_source(jp_fetch, page_id, "c * 2"), "c, cell 2")
        await eventually(
            lambda: _attribute_is(panel, "data-notebook-watchers", "1"), "one watcher after close"
        )
        assert (lab.traffic.opened, lab.traffic.closed) == (1, 0)


async def test_unsaved_typing_is_served_live_and_state_is_coalesced(
    lab_server, jp_fetch, notebooks, jp_root_dir
) -> None:
    async with lab_page(lab_server) as lab:
        await lab.open("a.ipynb")
        page_id = await lab.page_id()
        await lab.click_cell("a.ipynb", 2)
        await lab.page.keyboard.press("Control+End")
        before = await settled_state_count(lab, quiet=0.5)
        typed = "".join("xyzw"[i % 4] for i in range(200))
        started = time.monotonic()
        await lab.page.keyboard.type(typed, delay=10)
        elapsed = time.monotonic() - started
        expected = A_CELLS[2] + typed
        entries = await eventually(
            lambda: _context_with_source(jp_fetch, page_id, expected), "the typed source"
        )
        assert entries[1]["value"]["expectedSourceHash"] == source_hash(expected)
        # Nothing was saved: the file still holds the old source.
        on_disk = json.loads((jp_root_dir / "a.ipynb").read_text())
        assert "".join(on_disk["cells"][2]["source"]) == A_CELLS[2]
        sent = await settled_state_count(lab, quiet=0.5) - before
        # One message per 100 ms window at most, however many keystrokes: far fewer messages
        # than keystrokes, unless typing itself was slowed to one key per window or so.
        assert 1 <= sent <= elapsed / 0.1 + 3, (sent, elapsed)
        assert sent < len(typed) / 2, (sent, elapsed)


async def test_context_is_answered_while_the_page_is_busy(lab_server, jp_fetch, notebooks) -> None:
    """JupyterLab can keep the main thread busy (rendering long notebooks); the page's
    bridge answers get-context from a worker with the live state of the last change."""
    async with lab_page(lab_server) as lab:
        await lab.open("a.ipynb")
        page_id = await lab.page_id()
        await lab.click_cell("a.ipynb", 2)
        await lab.page.keyboard.press("Control+End")
        await lab.page.keyboard.type(" + 1")
        # No waiting: the answer reflects the keystrokes as soon as they were handled.
        entries = await get_context(jp_fetch, page_id)
        assert entries[1]["value"]["source"] == A_CELLS[2] + " + 1"

        await lab.page.evaluate(
            """() => { window.__busyUntil = null; setTimeout(() => {
                const end = Date.now() + 3000; while (Date.now() < end) {}
                window.__busyUntil = Date.now(); }, 0); }"""
        )
        # Let the timer start the busy loop: a page that is busy cannot be asked whether it is.
        await asyncio.sleep(0.3)
        entries = await get_context(jp_fetch, page_id)
        answered_at = time.time() * 1000
        assert entries[1]["value"]["source"] == A_CELLS[2] + " + 1"
        busy_until = await lab.page.evaluate("() => window.__busyUntil")
        # Answered while the main thread was still blocked, not after it.
        assert busy_until is not None and answered_at < busy_until


async def settled_state_count(lab: Lab, quiet: float = 1.0, timeout: float = 15.0) -> int:
    """The number of state messages once none has been sent for ``quiet`` seconds.

    The kernel's start (language, session) changes the state late on a loaded machine.
    """
    counts = [len(lab.traffic.of_type("state"))]

    async def quiet_period() -> tuple[int] | None:
        await asyncio.sleep(quiet)  # the condition is a quiet period of this length
        counts.append(len(lab.traffic.of_type("state")))
        return (counts[-1],) if counts[-1] == counts[-2] else None

    [count] = await eventually(quiet_period, "the page to stop sending state", timeout, interval=0)
    return count


async def test_cursor_moves_send_no_state(lab_server, notebooks) -> None:
    async with lab_page(lab_server, "a.ipynb") as lab:
        await lab.open("a.ipynb")
        # Opened by its tree URL: the page says so, and the manifest's matcher agrees.
        assert lab.traffic.of_type("hello")[0]["url"] == "lab/tree/a.ipynb"
        panel = lab.page.locator("#jupyter-copilot-panel")
        assert await panel.get_attribute("data-page-match") == "true"
        await lab.click_cell("a.ipynb", 1)
        before = await settled_state_count(lab)
        for key in ["ArrowLeft", "ArrowRight", "Home", "End"] * 10:
            await lab.page.keyboard.press(key)
        await asyncio.sleep(0.5)  # the point: no state follows, so a fixed wait
        assert len(lab.traffic.of_type("state")) == before


async def test_two_selected_cells_remove_the_selected_cell_entry(
    lab_server, jp_fetch, notebooks
) -> None:
    async with lab_page(lab_server) as lab:
        await lab.open("a.ipynb")
        page_id = await lab.page_id()
        await lab.click_cell("a.ipynb", 0)
        await lab.page.keyboard.press("Escape")
        await lab.page.keyboard.press("Shift+ArrowDown")

        async def two_selected():
            entries = await get_context(jp_fetch, page_id)
            return entries if entries and entries[0]["value"]["selectedCellCount"] == 2 else None

        entries = await eventually(two_selected, "two selected cells")
        assert [e["name"] for e in entries] == ["notebook_view_state"]
        hint = lab.page.locator(".jp-Copilot-Hint")
        await eventually(lambda: _text_contains(hint, "2 cells are selected"), "the hint")
        assert not await lab.page.locator(".jp-Copilot-Pill").is_visible()


async def test_attach_toggle_and_the_attach_command(lab_server, notebooks) -> None:
    async with lab_page(lab_server) as lab:
        await lab.open("a.ipynb")
        await lab.click_cell("a.ipynb", 0)
        pill = await lab.pill()
        toggle = lab.page.locator(".jp-Copilot-AttachToggle")
        await toggle.click()
        await eventually(lambda: _attribute_is(pill, "data-attached", "true"), "attached")
        assert await toggle.get_attribute("aria-pressed") == "true"
        await toggle.press("Enter")
        await eventually(lambda: _attribute_is(pill, "data-attached", "false"), "detached")

        # The cell context menu: opens the panel and attaches the cell under the pointer.
        await lab.page.evaluate("() => window.jupyterapp.shell.collapseRight()")
        cell = lab.notebook("a.ipynb").locator(".jp-Cell").nth(1)
        await cell.locator(".jp-InputArea-editor").click()
        await cell.locator(".jp-InputArea-editor").click(button="right")
        await lab.page.locator(".lm-Menu-itemLabel", has_text="Attach Cell to Copilot").click()
        await eventually(lambda: _attribute_is(pill, "data-attached", "true"), "attached by menu")
        assert await lab.page.locator("#jupyter-copilot-panel").is_visible()
        cell_id = await cell.get_attribute("data-cell-id") or ""
        if cell_id:
            assert await pill.get_attribute("data-cell-id") == cell_id

        # Selecting another cell drops the attachment.
        await lab.click_cell("a.ipynb", 2)
        await eventually(lambda: _attribute_is(pill, "data-attached", "false"), "dropped")

        # The same command from the command palette.
        await open_command_palette(lab)
        await lab.page.keyboard.type("Attach Cell to Copilot")
        item = lab.page.locator(".lm-CommandPalette-item", has_text="Attach Cell to Copilot")
        await item.first.click()
        await eventually(
            lambda: _attribute_is(pill, "data-attached", "true"), "attached by palette"
        )


class TestSmallBudget:
    @pytest.fixture
    def copilot_config(self) -> dict[str, Any]:
        return {"context_budget_bytes": 1024}

    async def test_a_cell_too_large_to_attach_says_so_with_sizes(
        self, lab_server, jp_fetch, jp_root_dir
    ) -> None:
        big = "# " + "x" * 3000
        make_notebook(jp_root_dir, "big.ipynb", [big, "small = 1"])
        async with lab_page(lab_server) as lab:
            await lab.open("big.ipynb")
            await lab.click_cell("big.ipynb", 0)
            message = lab.page.locator(".jp-Copilot-PillMessage")
            await eventually(lambda: _text_contains(message, "too large"), "the size message")
            text = await message.inner_text()
            assert "2.9 KB" in text and "1 KB" in text, text
            assert await lab.page.locator(".jp-Copilot-AttachToggle").is_disabled()
            await lab.screenshot("copilot-panel-too-large.png")


async def open_command_palette(lab: Lab) -> None:
    """Open the command palette with its shortcut, as a person does.

    JupyterLab routes once on an animation frame after start, and any command run closes
    the palette; wait for frames to pass and press again if the palette closed.
    """
    search = lab.page.locator(".lm-CommandPalette-input")

    async def opened() -> bool:
        await lab.page.evaluate(
            "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
        )
        await lab.page.keyboard.press("Control+Shift+C")
        # Not the first moment it shows: a late routing frame may close it again, so it must
        # still be open after 0.3 s.
        await asyncio.sleep(0.3)
        return await search.is_visible()

    await eventually(opened, "the command palette to open", 5, interval=0)
    await search.focus()


async def _pill_label_is(lab: Lab, label: str) -> bool:
    node = lab.page.locator(".jp-Copilot-PillLabel")
    return await node.count() > 0 and (await node.inner_text()) == label


async def _context_with_source(jp_fetch, page_id: str, source: str):
    entries = await get_context(jp_fetch, page_id)
    cells = [e for e in entries if e["name"] == "notebook_selected_cell"]
    return entries if cells and cells[0]["value"].get("source") == source else None


async def _attribute_is(locator, name: str, value: str) -> bool:
    return (await locator.get_attribute(name)) == value


async def _text_contains(locator, text: str) -> bool:
    return await locator.count() > 0 and text in (await locator.inner_text())


class TestFeatureSwitchOff:
    @pytest.fixture
    def copilot_config(self) -> dict[str, Any]:
        return {"enabled": False}

    async def test_no_panel_no_bridge_and_no_command(self, lab_server, notebooks) -> None:
        async with lab_page(lab_server, panel=False) as lab:
            await lab.open("a.ipynb")
            await lab.click_cell("a.ipynb", 0)
            await asyncio.sleep(1.0)  # the point: no panel and no bridge come, so a fixed wait
            assert await lab.page.locator("#jupyter-copilot-panel").count() == 0
            assert lab.traffic.opened == 0
            has_command = await lab.page.evaluate(
                "() => window.jupyterapp.commands.hasCommand('jupyter-copilot:attach-cell')"
            )
            assert has_command is False
