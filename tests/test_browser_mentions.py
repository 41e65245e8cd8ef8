"""`@` in the composer and Fix beside an error, in real JupyterLab with the scripted agent.

`@df` offers the kernel's DataFrame only once Kernel variables is checked under Context;
picking it with the keyboard replaces the typed `@df` by a chip, and the agent receives the
variable's description with the message. A cell whose run raised shows Fix; Fix attaches the
cell and its error to a new message, and the agent's fix comes back as a review of that cell
that changes nothing until Keep.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_notebook
from tests.conversations import agent_log, scripted_agents
from tests.eventually import eventually
from tests.lab import Lab, lab_page
from tests.test_browser_chat import Chat
from tests.test_browser_review import model_source, open_notebook

# Real JupyterLab in Chromium: `pytest -m "not browser"` leaves these out.
pytestmark = pytest.mark.browser

FRAME = "import pandas as pd\ndf = pd.DataFrame({'a': [1, 2, 3]})\n"
FAILING = "x = 1/0\n"


@pytest.fixture
def log(tmp_path: Path) -> Path:
    """What the scripted agent received and its tool results."""
    return tmp_path / "agent.jsonl"


@pytest.fixture
def copilot_config(log: Path) -> dict[str, Any]:
    return scripted_agents(log)


def composer(lab: Lab) -> Any:
    return lab.page.locator(".jp-Copilot-Composer textarea")


def menu(lab: Lab) -> Any:
    return lab.page.locator(".jp-Copilot-MentionMenu")


async def check_context_ref(lab: Lab, ref: str) -> None:
    """Check one context reference in the Context popover, as a person does."""
    await lab.page.locator(".jp-Copilot-ContextPicker").click()
    popover = lab.page.locator(".jp-Copilot-ContextPopover")
    await popover.wait_for(state="visible")
    box = popover.locator(f"input[data-context-ref='{ref}']")
    if not await box.is_checked():
        await box.click()
    await lab.page.keyboard.press("Escape")
    await popover.wait_for(state="hidden")


async def test_at_df_and_at_a_file_are_offered_only_once_granted_and_the_agent_receives_them(
    lab_server, jp_fetch, jp_root_dir: Path, log: Path
) -> None:
    make_notebook(jp_root_dir, "a.ipynb", [FRAME, "total = 6\n"])
    (jp_root_dir / "notes.txt").write_text("sales rose in May\n", encoding="utf-8")
    async with lab_page(lab_server) as lab:
        await open_notebook(lab, jp_fetch, "a.ipynb")
        await lab.run_cell("a.ipynb", 0)
        chat = Chat(lab)
        await chat.choose_agent("scripted")
        box = composer(lab)

        # Not granted: `@` offers the notebook's cells, never its variables.
        await box.fill("")
        await box.type("describe @d")
        await menu(lab).wait_for(state="visible")
        items = menu(lab).locator(".jp-Copilot-MentionItem")
        await eventually(lambda: _has_items(items), "the cells to be offered")
        kinds = {await i.get_attribute("data-kind") for i in await items.all()}
        assert kinds == {"cell"}, kinds
        hint = "Check Kernel variables or Files under Context to attach them too."
        assert hint in await menu(lab).inner_text()
        # Escape closes the menu and leaves the text as typed.
        await box.press("Escape")
        await menu(lab).wait_for(state="hidden")
        assert await box.input_value() == "describe @d"

        await check_context_ref(lab, "kernel_variables")
        await box.fill("")
        await box.type("describe @df")
        await menu(lab).wait_for(state="visible")
        variable = menu(lab).locator(".jp-Copilot-MentionItem[data-kind=variable]")
        await variable.first.wait_for(state="visible", timeout=30000)
        first = menu(lab).locator(".jp-Copilot-MentionItem").first
        assert await first.get_attribute("data-kind") == "variable"
        assert "df" in await first.locator(".jp-Copilot-MentionLabel").inner_text()
        assert "DataFrame" in await first.inner_text()
        assert await first.get_attribute("aria-selected") == "true"
        await lab.page.set_viewport_size({"width": 1280, "height": 800})
        await lab.screenshot("copilot-mention-menu.png")

        # Down then Up comes back to df; Tab picks it: the chip replaces the typed `@df`.
        await box.press("ArrowDown")
        await box.press("ArrowUp")
        assert await first.get_attribute("aria-selected") == "true"
        await box.press("Tab")
        await menu(lab).wait_for(state="hidden")
        chip = lab.page.locator(".jp-Copilot-ReferenceChip[data-kind=variable]")
        await chip.wait_for(state="visible")
        assert await chip.locator(".jp-Copilot-ReferenceLabel").inner_text() == "@df"
        assert await box.input_value() == "describe "

        await box.fill("reply got it")
        await box.press("Enter")
        await chat.idle()
        await chip.wait_for(state="detached")
        prompt = agent_log(log, "prompt")[-1]["blocks"]
        assert prompt[0]["text"] == "reply got it"
        resources = [b["resource"] for b in prompt[1:]]
        assert [r["uri"] for r in resources] == ["jupyter-copilot://variable/df"]
        described = json.loads(resources[0]["text"])
        assert described["type"] == "pandas.DataFrame" and described["shape"] == [3, 1]

        # Files once Files is checked: Enter picks the file the menu marks.
        await check_context_ref(lab, "files")
        await box.fill("")
        await box.type("reply read @not")
        item = menu(lab).locator(".jp-Copilot-MentionItem[data-kind=file]")
        await item.first.wait_for(state="visible", timeout=30000)
        assert await item.count() == 1 and "notes.txt" in await item.inner_text()
        await box.press("Enter")
        await menu(lab).wait_for(state="hidden")
        file_chip = lab.page.locator(".jp-Copilot-ReferenceChip[data-kind=file]")
        assert await file_chip.inner_text() == "@notes.txt"
        assert await box.input_value() == "reply read "
        await box.press("Enter")
        await chat.idle()
        [_, resource] = agent_log(log, "prompt")[-1]["blocks"]
        assert resource["resource"]["uri"] == "jupyter-copilot://file/notes.txt"
        assert resource["resource"]["text"] == "sales rose in May\n"


async def test_fix_on_an_error_leads_to_a_review_of_that_cell_that_changes_nothing_until_keep(
    lab_server, jp_fetch, jp_root_dir: Path, log: Path
) -> None:
    make_notebook(jp_root_dir, "e.ipynb", ["y = 2\n", FAILING])
    async with lab_page(lab_server) as lab:
        await open_notebook(lab, jp_fetch, "e.ipynb")
        cells = lab.notebook("e.ipynb").locator(".jp-Cell")
        # No error, no Fix.
        await lab.run_cell("e.ipynb", 0)
        assert await cells.nth(0).locator(".jp-Copilot-ErrorActions").count() == 0
        await lab.run_cell("e.ipynb", 1)
        failing = cells.nth(1)
        fix = failing.locator(".jp-Copilot-ErrorFix")
        await fix.wait_for(state="visible", timeout=30000)
        assert await fix.inner_text() == "Fix"
        assert await failing.locator(".jp-Copilot-ErrorExplain").inner_text() == "Explain"
        assert await cells.nth(0).locator(".jp-Copilot-ErrorActions").count() == 0
        cell_id = await lab.page.evaluate(
            "() => window.jupyterapp.shell.currentWidget.content.model.cells.get(1).id"
        )
        await lab.page.set_viewport_size({"width": 1280, "height": 800})
        await lab.screenshot("copilot-error-fix.png")

        # Explain, then Fix: one chip for the cell's error, and Fix's request in the box.
        await failing.locator(".jp-Copilot-ErrorExplain").click()
        chat = Chat(lab)
        chip = lab.page.locator(".jp-Copilot-ReferenceChip[data-kind=error]")
        await chip.wait_for(state="visible", timeout=30000)
        assert await composer(lab).input_value() == "Explain this error."
        await fix.click()

        async def asks_for_a_fix() -> bool:
            return await composer(lab).input_value() == "Fix the error in this cell."

        await eventually(asks_for_a_fix, "Fix's request in the composer")
        assert await chip.count() == 1
        assert await chip.inner_text() == "Cell 2: ZeroDivisionError"
        await chat.choose_agent("scripted")

        await composer(lab).press("Enter")
        approval = lab.page.locator(".jp-Copilot-Approval")
        await approval.wait_for(state="visible", timeout=30000)
        prompt = agent_log(log, "prompt")[-1]["blocks"]
        uris = [b["resource"]["uri"] for b in prompt[1:]]
        assert uris[0].startswith("jupyter-copilot://cell/") and cell_id in uris[0]
        assert uris[1].startswith("jupyter-copilot://error/")
        error = prompt[2]["resource"]["text"]
        assert error.startswith("ZeroDivisionError: division by zero")
        assert "\x1b[" not in error and "----> 1 x = 1/0" in error
        assert await model_source(lab, cell_id) == FAILING

        await approval.locator(".jp-Copilot-ApprovalAllow").click()
        review = failing.locator(".jp-Copilot-Review")
        await review.wait_for(state="visible", timeout=30000)
        assert await review.get_attribute("data-cell-id") == cell_id
        assert await review.get_attribute("data-state") == "open"
        await chat.idle()
        # The review is open; the cell is as it was.
        assert await model_source(lab, cell_id) == FAILING

        await review.locator(".jp-Copilot-ReviewKeep").click()
        await review.wait_for(state="detached")
        assert await model_source(lab, cell_id) == "x = 1/1\n"


async def _has_items(items: Any) -> bool:
    return bool(await items.count())
