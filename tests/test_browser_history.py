"""Earlier conversations in real JupyterLab (Debian's Chromium) with the shipped demo agent:
the whole title, "Only this notebook", Export as Markdown, Delete after a confirmation, and
Resume; the panel's default width and code in replies (docs/conversations.md, "Earlier
conversations")."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_notebook
from tests.conversations import scripted_agents
from tests.eventually import eventually
from tests.lab import lab_page
from tests.test_browser_chat import CELLS, Chat
from tests.test_browser_mcp import open_notebook

# Real JupyterLab in Chromium: `pytest -m "not browser"` leaves these out. No test here runs
# code, so the kernel sessions attach to one real kernel per test process (tests/kernels.py).
pytestmark = [pytest.mark.browser, pytest.mark.shared_kernel]

#: A first message longer than the list's width: its title must show whole.
LONG = (
    "explain what clean does with the rows it is given, and whether an empty list of rows "
    "comes back empty"
)


@pytest.fixture
def log(tmp_path: Path) -> Path:
    """What the scripted agent received."""
    return tmp_path / "agent.jsonl"


@pytest.fixture
def copilot_config(log: Path) -> dict[str, Any]:
    """The demo agent (the default; it loads earlier sessions), then the scripted one."""
    config = scripted_agents(log)
    config["agents"] = {
        "demo": {
            "label": "Demo agent (rule-based)",
            "description": "Offline demo: docstrings, sorted imports, short explanations.",
            "command": [sys.executable, "-m", "jupyter_copilot.demo_agent"],
        },
        **config["agents"],
    }
    return config


async def new_conversation(lab: Any) -> None:
    await lab.page.evaluate(
        "() => window.jupyterapp.commands.execute('jupyter-copilot:new-conversation')"
    )


async def test_earlier_conversations_show_whole_titles_filter_export_delete_and_resume(
    lab_server: Any, jp_fetch: Any, jp_root_dir: Path, tmp_path: Path
) -> None:
    make_notebook(jp_root_dir, "analysis.ipynb", CELLS)
    make_notebook(jp_root_dir, "other.ipynb", ["x = 1"])
    async with lab_page(lab_server, width=1280) as lab:
        page = lab.page
        await page.set_viewport_size({"width": 1280, "height": 800})
        chat = Chat(lab)
        # The panel opens wide enough for its menus and a line of code.
        box = await page.locator(".jp-Copilot-Panel").bounding_box()
        assert box is not None and box["width"] >= 360
        await open_notebook(lab, jp_fetch, "analysis.ipynb")
        await chat.send(LONG)
        await chat.idle()
        first = await chat.root.get_attribute("data-conversation-id")
        await new_conversation(lab)
        await open_notebook(lab, jp_fetch, "other.ipynb")
        await chat.send("explain")
        await chat.idle()
        second = await chat.root.get_attribute("data-conversation-id")
        await new_conversation(lab)

        await page.locator(".jp-Copilot-Archive").click()
        entries = page.locator(".jp-Copilot-ArchiveEntry")
        await eventually(lambda: _count_is(entries, 2), "both earlier conversations")
        title = page.locator(
            f".jp-Copilot-ArchiveItem[data-conversation-id='{first}'] .jp-Copilot-ArchiveTitle"
        )
        # The whole title, wrapped, never cut off; and as the tooltip.
        assert await title.inner_text() == LONG[:80].strip()
        assert await title.evaluate("n => n.scrollWidth <= n.clientWidth")
        assert await title.evaluate("n => n.getBoundingClientRect().height > 20")
        item = page.locator(f".jp-Copilot-ArchiveItem[data-conversation-id='{first}']")
        assert await item.get_attribute("title") == LONG[:80]

        # Only the active notebook's conversations (other.ipynb is the active one).
        await page.locator(".jp-Copilot-ArchiveFilter").click()
        assert await page.locator(".jp-Copilot-ArchiveFilterText").inner_text() == (
            "Only other.ipynb"
        )
        await eventually(lambda: _count_is(entries, 1), "only other.ipynb's conversation")
        assert await entries.get_attribute("data-conversation-id") == second
        await page.locator(".jp-Copilot-ArchiveFilter").click()
        await eventually(lambda: _count_is(entries, 2), "every conversation again")
        await lab.screenshot("copilot-history.png")

        # Export: a Markdown file named after the title, the cell linked to its notebook.
        entry = page.locator(f".jp-Copilot-ArchiveEntry[data-conversation-id='{first}']")
        async with page.expect_download() as download_info:
            await entry.locator(".jp-Copilot-ArchiveExport").click()
        download = await download_info.value
        assert download.suggested_filename.startswith("copilot-explain-what-clean-does")
        assert download.suggested_filename.endswith(".md")
        saved = tmp_path / download.suggested_filename
        await download.save_as(saved)
        text = saved.read_text()
        assert text.startswith(f"# {LONG[:80].strip()}\n")
        assert "- Notebooks: [analysis.ipynb](analysis.ipynb)" in text
        assert f"## You\n\n{LONG}\n" in text

        # Delete asks first; Cancel keeps it, Delete forgets it on the server too.
        other = page.locator(f".jp-Copilot-ArchiveEntry[data-conversation-id='{second}']")
        await other.locator(".jp-Copilot-ArchiveDelete").click()
        dialog = page.locator(".jp-Dialog")
        await dialog.wait_for(state="visible")
        assert "Delete this conversation?" in await dialog.inner_text()
        await lab.screenshot("copilot-history-delete.png")
        await dialog.locator("button", has_text="Cancel").click()
        await dialog.wait_for(state="hidden")
        assert await other.count() == 1
        await other.locator(".jp-Copilot-ArchiveDelete").click()
        await dialog.locator("button", has_text="Delete").click()
        await eventually(lambda: _count_is(entries, 1), "the deleted conversation gone")
        response = await jp_fetch("copilot", "api", "conversations", second, raise_error=False)
        assert response.code == 404

        # Resume: the earlier conversation becomes the current one and goes on.
        await entry.locator(".jp-Copilot-ArchiveResume").click()
        await eventually(lambda: _attribute_is(chat.root, "data-view", "current"), "the chat")
        assert await chat.root.get_attribute("data-conversation-id") == first
        assert await chat.messages("user").count() == 1
        await chat.send("explain")
        await chat.idle()
        assert await chat.messages("user").count() == 2
        assert await chat.root.get_attribute("data-conversation-id") == first


async def test_code_in_a_reply_keeps_its_lines_whole_and_scrolls(
    lab_server: Any, jp_fetch: Any, jp_root_dir: Path
) -> None:
    long_line = "result = compute_the_weighted_average_of_rows(rows, weights=normalised_weights)"
    async with lab_page(lab_server, width=1280) as lab:
        await lab.page.set_viewport_size({"width": 1280, "height": 800})
        chat = Chat(lab)
        await chat.choose_agent("scripted", chat_only=True)
        await chat.send(f"reply ```python\n{long_line}\n```")
        await chat.idle()
        pre = chat.messages("agent").last.locator("pre")
        await pre.wait_for(state="visible")
        assert await pre.inner_text() == long_line
        style = await pre.evaluate("n => getComputedStyle(n).whiteSpace")
        assert style == "pre"
        # One line that scrolls sideways, not a token cut over several lines.
        assert await pre.evaluate("n => n.scrollWidth > n.clientWidth")
        line_height = await pre.evaluate(
            "n => parseFloat(getComputedStyle(n.querySelector('code') || n).lineHeight) || 18"
        )
        code = pre.locator("code")
        height = await (code if await code.count() else pre).evaluate(
            "n => n.getBoundingClientRect().height"
        )
        assert height < 2 * line_height
        await lab.screenshot("copilot-reply-code.png")


async def _count_is(locator: Any, n: int) -> bool:
    return bool(await locator.count() == n)


async def _attribute_is(locator: Any, name: str, expected: str) -> bool:
    return bool(await locator.get_attribute(name) == expected)
