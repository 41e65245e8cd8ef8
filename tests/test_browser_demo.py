"""The Binder demo notebook, followed step by step as its Markdown says, in real JupyterLab.

The notebook is the real ``binder/demo.ipynb`` with its data folder, no agent is configured
(so the panel offers the shipped demo agent), and every text the walkthrough quotes is
checked twice: it is in the notebook's Markdown, and the page shows it at that step.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from jupyter_copilot.demo_agent import rules
from tests.eventually import eventually
from tests.lab import (
    UNUSED_EXTENSIONS,
    Lab,
    lab_page,
    lab_server_config,
    widgets_labextensions_dir,
)
from tests.test_browser_chat import Chat
from tests.test_browser_mcp import model_source, open_notebook

# Real JupyterLab in Chromium: `pytest -m "not browser"` leaves these out.
pytestmark = pytest.mark.browser

BINDER = Path(__file__).parent.parent / "binder"
NOTEBOOK = "demo.ipynb"

# The cells the walkthrough works on, by index in the notebook.
IMPORTS, LOAD, FUNCTIONS, SLIDER, LARGE = 1, 2, 3, 9, 11

DOCUMENTED = '''def group_by_city(rows):
    """Group by city."""
    temps = defaultdict(list)
    for row in rows:
        temps[row["city"]].append(row["temp"])
    return temps


def summarize_by_city(rows):
    """Summarize by city."""
    return {
        city: {"days": len(t), "mean": round(statistics.mean(t), 1), "max": max(t)}
        for city, t in group_by_city(rows).items()
    }


summarize_by_city(rows)'''

SORTED_WITH_JSON = (
    "from collections import defaultdict\n"
    "import csv\n"
    "import json\n"
    "from pathlib import Path\n"
    "import statistics"
)

# What the walkthrough says the page shows, word for word.
PILL_LABEL = "Selected python cell"
PILL_LINES = "15 lines"
CHIP = "Code cell 4"
MODE = "Ask before edits"
TOOL = "Propose a whole-cell edit"
OPERATION = "Whole-cell diff, reviewed before anything changes"
TARGET = "Cell 4 of 12 in demo.ipynb"
REVIEW_LABEL = "Proposed by a Copilot tool"
PENDING_LABEL = "New Markdown cell proposed by a Copilot tool"
PROPOSED = (
    "I proposed adding docstrings to this cell. Review the diff in the cell and choose "
    "Keep or Undo."
)
STALE = (
    "I could not propose sorting the imports of the cell (stale-source). The cell changed "
    "after I read it; ask me again to work on its new source."
)
DENIED = "It was not approved, so nothing changed."
NO_TOOLS_CLAIM = "it can explain an attached cell but cannot propose edits"
CONFLICT = "The cell changed since this was proposed; nothing was applied."
TOO_LARGE = "This cell is too large to attach"


@pytest.fixture
def jp_server_config(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """JupyterLab with every extension it ships, jupyter-copilot and the ipywidgets manager,
    and no agent configured."""
    config = lab_server_config(
        tmp_path, tmp_path_factory.getbasetemp(), {"discover_agents": False}, every_extension=True
    )
    shared = widgets_labextensions_dir(tmp_path_factory.getbasetemp())
    config["LabApp"]["extra_labextensions_path"].append(str(shared))
    return config


@pytest.fixture
def demo(jp_root_dir: Path) -> dict[str, Any]:
    """The real demo notebook and its data in the server's root; its cells as saved."""
    shutil.copy(BINDER / NOTEBOOK, jp_root_dir / NOTEBOOK)
    (jp_root_dir / "data").mkdir()
    for data in (BINDER / "data").iterdir():
        shutil.copyfile(data, jp_root_dir / "data" / data.name)
    return json.loads((BINDER / NOTEBOOK).read_text(encoding="utf-8"))


def source_of(notebook: dict[str, Any], index: int) -> str:
    return "".join(notebook["cells"][index]["source"])


def walkthrough(notebook: dict[str, Any]) -> str:
    """The notebook's Markdown on one line, without emphasis marks."""
    text = " ".join(
        source_of(notebook, i)
        for i, cell in enumerate(notebook["cells"])
        if cell["cell_type"] == "markdown"
    )
    return " ".join(text.replace("*", "").replace("`", "").split())


def says(notebook: dict[str, Any], *claims: str) -> None:
    """Each claim is in the walkthrough, word for word."""
    text = walkthrough(notebook)
    for claim in claims:
        assert " ".join(claim.split()) in text, f"the walkthrough does not say: {claim}"


async def cell_id(lab: Lab, index: int) -> str:
    return await lab.page.evaluate(  # type: ignore[no-any-return]
        "i => window.jupyterapp.shell.currentWidget.content.model.cells.get(i).id", index
    )


async def attach(lab: Lab, index: int) -> None:
    """Select one cell and press the pill's Attach button."""
    await lab.click_cell(NOTEBOOK, index)
    pill = lab.page.locator(f".jp-Copilot-Pill[data-cell-id='{await cell_id(lab, index)}']")
    await pill.wait_for(state="visible")
    toggle = pill.locator(".jp-Copilot-AttachToggle")
    await toggle.click()
    await eventually(lambda: _text_is(toggle, "Attached"), "the Attached toggle")


async def type_at_end(lab: Lab, index: int, text: str) -> None:
    """Click into a cell and type at the end of its source, as a person does."""
    await lab.click_cell(NOTEBOOK, index)
    await lab.page.keyboard.press("Control+End")
    await lab.page.keyboard.type(text)


async def reply(chat: Chat) -> str:
    """The text of the agent's last reply, without its tool cards."""
    replies = chat.messages("agent")
    last = replies.nth(await replies.count() - 1)
    return " ".join((await last.locator(".jp-Copilot-Reply").inner_text()).split())


async def tool_cards(lab: Lab) -> list[tuple[str, str]]:
    """The tool cards of the agent's last reply: title and status."""
    replies = lab.page.locator(".jp-Copilot-Message[data-role=agent]")
    cards = replies.nth(await replies.count() - 1).locator(".jp-Copilot-ToolCard")
    return [
        (
            await c.locator(".jp-Copilot-ToolCardTitle").inner_text(),
            await c.get_attribute("data-status"),
        )
        for c in await cards.all()
    ]


def review(lab: Lab) -> Any:
    return lab.page.locator(".jp-Copilot-Review")


def card(lab: Lab) -> Any:
    return lab.page.locator(".jp-Copilot-Approval")


async def run_cell(lab: Lab, index: int) -> list[dict[str, Any]]:
    """Run one cell with Shift+Enter and return its outputs once its kernel is idle again."""
    await lab.run_cell(NOTEBOOK, index)

    async def ran() -> dict[str, Any] | None:
        cell = await lab.page.evaluate(
            """i => {
                const panel = window.jupyterapp.shell.currentWidget;
                const cell = panel.content.model.cells.get(i).toJSON();
                const busy = panel.sessionContext.session?.kernel?.status !== 'idle';
                return {count: cell.execution_count, outputs: cell.outputs, busy};
            }""",
            index,
        )
        return cell if cell["count"] and not cell["busy"] else None

    return (await eventually(ran, f"cell {index} to run", timeout=60))["outputs"]  # type: ignore[no-any-return]


async def test_the_walkthrough_add_docstrings_review_keep_and_undo(
    lab_server, jp_fetch, demo
) -> None:
    original = source_of(demo, FUNCTIONS)
    assert rules.add_docstrings(original) == DOCUMENTED
    async with lab_page(lab_server) as lab:
        chat = Chat(lab)
        await open_notebook(lab, jp_fetch, NOTEBOOK)
        functions = await cell_id(lab, FUNCTIONS)
        await lab.kernel_ready(NOTEBOOK)
        # The demo runs in JupyterLab with every extension it ships.
        for name in UNUSED_EXTENSIONS:
            assert await lab.extension_on(name), name
        # No agent is configured: the demo agent is offered, in Ask before edits.
        says(demo, "Demo agent (rule-based)")
        picker = lab.page.locator(".jp-Copilot-AgentPicker")
        await eventually(lambda: _title_has(picker, "Demo agent (rule-based)"), "the demo agent")
        mode = lab.page.locator(".jp-Copilot-ModeSelect")
        assert await mode.input_value() == "interactive"
        assert await mode.locator("option:checked").inner_text() == MODE

        # 1. Select the cell: the pill, its line count and Attach; never the code.
        says(demo, f"{PILL_LABEL} with {PILL_LINES}", "an Attach button")
        await lab.click_cell(NOTEBOOK, FUNCTIONS)
        pill = lab.page.locator(f".jp-Copilot-Pill[data-cell-id='{functions}']")
        await pill.wait_for(state="visible")
        assert await pill.locator(".jp-Copilot-PillLabel").inner_text() == PILL_LABEL
        assert await pill.locator(".jp-Copilot-PillMeta").inner_text() == PILL_LINES
        toggle = pill.locator(".jp-Copilot-AttachToggle")
        assert await toggle.inner_text() == "Attach"
        assert (
            "summarize_by_city" not in await lab.page.locator("#jupyter-copilot-panel").inner_text()
        )

        # 2. Attach: the toggle says Attached and the chip names the cell.
        says(demo, "The button turns into Attached", f"{CHIP} appears above the message box")
        await toggle.click()
        await eventually(lambda: _text_is(toggle, "Attached"), "the Attached toggle")
        chip = lab.page.locator(".jp-Copilot-ComposerAttachment")
        await chip.wait_for(state="visible")
        assert await chip.get_attribute("data-cell-id") == functions
        assert await chip.inner_text() == CHIP
        assert await chip.locator("button.jp-Copilot-CellLink").inner_text() == CHIP

        # 3. Ask in Ask before edits.
        says(demo, f"says {MODE}, type add docstrings and press Send")
        box = lab.page.locator(".jp-Copilot-Composer textarea")
        await box.fill("add docstrings")
        shot = await lab.screenshot("demo-attach.png")
        assert shot.stat().st_size > 10_000
        await lab.page.locator(".jp-Copilot-Send").click()

        # 4. The approval card: what, where, and its two buttons; nothing open yet.
        says(demo, TOOL, OPERATION, TARGET, "Press Allow once", "Deny")
        approval = card(lab)
        await approval.wait_for(state="visible", timeout=30000)
        says(demo, "a card appears under Approvals")
        approvals = lab.page.locator(".jp-Copilot-SectionTitle", has_text="Approvals")
        assert await approvals.is_visible()
        assert await approval.locator(".jp-Copilot-ApprovalTool").inner_text() == TOOL
        assert await approval.locator(".jp-Copilot-ApprovalOperation").inner_text() == OPERATION
        assert await approval.locator(".jp-Copilot-ApprovalTarget").inner_text() == TARGET
        allow = approval.locator(".jp-Copilot-ApprovalAllow")
        assert await allow.inner_text() == "Allow once"
        assert await approval.locator(".jp-Copilot-ApprovalDeny").inner_text() == "Deny"
        assert await review(lab).count() == 0
        assert await model_source(lab, functions) == original
        shot = await lab.screenshot("demo-approval.png")
        assert shot.stat().st_size > 10_000
        await allow.click()
        await approval.wait_for(state="detached")

        # 5. The diff opens inside the cell; the notebook is unchanged until Keep.
        says(demo, REVIEW_LABEL, "Your cell is still exactly as it was", PROPOSED)
        opened = review(lab)
        await opened.wait_for(state="visible", timeout=30000)
        assert await opened.get_attribute("data-cell-id") == functions
        inside = (
            lab.notebook(NOTEBOOK).locator(".jp-Cell").nth(FUNCTIONS).locator(".jp-Copilot-Review")
        )
        assert await inside.count() == 1
        assert await opened.locator(".jp-Copilot-ReviewLabel").inner_text() == REVIEW_LABEL
        diff = await opened.locator(".jp-Copilot-ReviewDiff .jp-Copilot-DiffText").inner_text()
        assert '"""Group by city."""' in diff and '"""Summarize by city."""' in diff
        keep = opened.locator(".jp-Copilot-ReviewKeep")
        assert await keep.inner_text() == "Keep"
        assert await opened.locator(".jp-Copilot-ReviewUndo").inner_text() == "Undo"
        await chat.idle()
        assert await reply(chat) == PROPOSED
        assert await tool_cards(lab) == [("Propose an edit of the cell", "completed")]
        assert await model_source(lab, functions) == original
        shot = await lab.screenshot("demo-review.png")
        assert shot.stat().st_size > 10_000

        # 6. Keep writes exactly the proposal; one Ctrl+Z in the cell undoes it.
        says(demo, "Keep writes the proposal into the cell", "press Ctrl+Z", "once")
        await keep.click()
        await opened.wait_for(state="detached")
        assert await model_source(lab, functions) == DOCUMENTED
        await lab.click_cell(NOTEBOOK, FUNCTIONS)
        await lab.page.keyboard.press("Control+z")
        await eventually(lambda: _source_is(lab, functions, original), "one Ctrl+Z to undo Keep")

        # 7. The message's chip and the tool card's "Cell N" are links to the cell.
        message = chat.messages("user").last
        links = [
            message.locator("button.jp-Copilot-CellLink.jp-Copilot-AttachmentChip"),
            chat.messages("agent").last.locator(".jp-Copilot-ToolCardCell"),
        ]
        assert await links[0].inner_text() == CHIP
        assert await links[1].inner_text() == f"Cell {FUNCTIONS + 1}"
        assert await links[1].get_attribute("data-cell-id") == functions
        for link in links:
            await lab.click_cell(NOTEBOOK, IMPORTS)
            await eventually(lambda: _active_is(lab, IMPORTS), "another cell active")
            await link.click()
            await eventually(lambda: _active_is(lab, FUNCTIONS), "the link to show its cell")


async def test_the_walkthrough_a_new_cell_then_a_run_after_allow(
    lab_server, jp_fetch, demo
) -> None:
    async with lab_page(lab_server) as lab:
        chat = Chat(lab)
        await open_notebook(lab, jp_fetch, NOTEBOOK)
        count = len(demo["cells"])
        assert count == 12
        functions, load = await cell_id(lab, FUNCTIONS), await cell_id(lab, LOAD)

        # A new cell: a card, then a pending cell; the notebook's cells change only at Keep.
        says(demo, "send add a note that describes this cell and press Allow once on the card")
        says(demo, "(Propose a new cell, After cell 4 of 12 in demo.ipynb)")
        says(demo, f"{PENDING_LABEL}. It is not in the notebook yet")
        await attach(lab, FUNCTIONS)
        await chat.send("add a note that describes this cell")
        await card(lab).wait_for(state="visible", timeout=30000)
        tool = card(lab).locator(".jp-Copilot-ApprovalTool")
        assert await tool.inner_text() == "Propose a new cell"
        target = card(lab).locator(".jp-Copilot-ApprovalTarget")
        assert await target.inner_text() == "After cell 4 of 12 in demo.ipynb"
        await card(lab).locator(".jp-Copilot-ApprovalAllow").click()
        pending = lab.notebook(NOTEBOOK).locator(".jp-Cell").nth(FUNCTIONS)
        pending = pending.locator(".jp-Copilot-PendingCell")
        await pending.wait_for(state="visible", timeout=30000)
        assert await pending.locator(".jp-Copilot-ReviewLabel").inner_text() == PENDING_LABEL
        await chat.idle()
        assert await cell_count(lab) == count
        says(demo, "Keep inserts it (Z in command mode takes it out again)")
        await pending.locator(".jp-Copilot-ReviewKeep").click()
        await pending.wait_for(state="detached")
        assert await cell_count(lab) == count + 1
        note = await lab.page.evaluate(
            "i => window.jupyterapp.shell.currentWidget.content.model.cells.get(i).toJSON()",
            FUNCTIONS + 1,
        )
        assert note["cell_type"] == "markdown"
        assert note["source"].startswith("### About the cell above")
        # Z in command mode, with the new (rendered Markdown) cell selected by its prompt.
        new_cell = lab.notebook(NOTEBOOK).locator(".jp-Cell").nth(FUNCTIONS + 1)
        await new_cell.locator(".jp-InputPrompt").click()
        await eventually(lambda: _active_is(lab, FUNCTIONS + 1), "the new cell selected")
        await lab.page.keyboard.press("Escape")
        await lab.page.keyboard.press("z")
        await eventually(lambda: _cell_count_is(lab, count), "Z to take the new cell out")

        # A run: the person runs the imports, the agent asks to run the loading cell.
        says(demo, "run the imports cell yourself (Shift+Enter)", "send run this cell")
        says(demo, "Ask to run a cell, Cell 3 of 12 in demo.ipynb (a link to the cell)")
        says(demo, "Runs the cell as the agent read it", "in every mode")
        await run_cell(lab, IMPORTS)
        await attach(lab, LOAD)
        await chat.send("run this cell")
        run = lab.page.locator(".jp-Copilot-Approval[data-kind='run']")
        await run.wait_for(state="visible", timeout=30000)
        assert await run.locator(".jp-Copilot-ApprovalTool").inner_text() == "Ask to run a cell"
        target = run.locator(".jp-Copilot-ApprovalTarget")
        assert await target.inner_text() == "Cell 3 of 12 in demo.ipynb"
        line = await run.locator(".jp-Copilot-ApprovalSource").inner_text()
        assert line == "Runs the cell as the agent read it"
        assert await execution_count(lab, load) is None
        says(demo, "Type in the cell while the card waits, and the card warns at once")
        says(demo, "The cell changed while this card waited: it will not run.")
        says(demo, "After Allow once the cell runs in the notebook's kernel")
        await run.locator(".jp-Copilot-ApprovalAllow").click()
        await chat.idle()
        text = await reply(chat)
        ran = await execution_count(lab, load)
        says(demo, "The cell ran (execution count 2). and the readings it printed")
        assert ran == 2, "the imports ran first, as the walkthrough says"
        assert f"The cell ran (execution count {ran})." in text
        assert "readings from data/temperatures.csv" in text
        assert await model_source(lab, functions) == source_of(demo, FUNCTIONS)


async def cell_count(lab: Lab) -> int:
    count = "() => window.jupyterapp.shell.currentWidget.content.model.cells.length"
    return await lab.page.evaluate(count)  # type: ignore[no-any-return]


async def _cell_count_is(lab: Lab, count: int) -> bool:
    return await cell_count(lab) == count


async def execution_count(lab: Lab, cell: str) -> int | None:
    return await lab.page.evaluate(  # type: ignore[no-any-return]
        """id => {
            const cells = window.jupyterapp.shell.currentWidget.content.model.cells;
            for (const c of cells) { if (c.id === id) { return c.executionCount ?? null; } }
            return undefined;
        }""",
        cell,
    )


async def _active_is(lab: Lab, index: int) -> bool:
    active = "() => window.jupyterapp.shell.currentWidget.content.activeCellIndex"
    return await lab.page.evaluate(active) == index  # type: ignore[no-any-return]


async def test_the_walkthrough_when_the_cell_changes_under_a_proposal(
    lab_server, jp_fetch, demo
) -> None:
    imports = source_of(demo, IMPORTS)
    async with lab_page(lab_server) as lab:
        chat = Chat(lab)
        await open_notebook(lab, jp_fetch, NOTEBOOK)
        cell = await cell_id(lab, IMPORTS)

        # Deny: the agent gets no edit and says so; nothing opens, nothing changes.
        says(demo, f"Deny ends it here: the agent answers {DENIED}")
        await attach(lab, IMPORTS)
        await chat.send("sort the imports")
        await card(lab).wait_for(state="visible", timeout=30000)
        await card(lab).locator(".jp-Copilot-ApprovalDeny").click()
        await chat.idle()
        assert (await reply(chat)).endswith(DENIED)
        assert await review(lab).count() == 0
        assert await model_source(lab, cell) == imports

        # The cell changes while the approval card waits: Allow once opens nothing, the
        # agent explains stale-source, and the person's line is still there.
        says(demo, "Before you press Allow once, add a line to the cell, e.g. import json")
        says(demo, f"no diff opens, and the agent answers {STALE} Your line is still there.")
        await attach(lab, IMPORTS)
        await chat.send("sort the imports")
        await card(lab).wait_for(state="visible", timeout=30000)
        await type_at_end(lab, IMPORTS, "\nimport json")
        typed = imports + "\nimport json"
        await eventually(lambda: _source_is(lab, cell, typed), "the typed line")
        await card(lab).locator(".jp-Copilot-ApprovalAllow").click()
        await chat.idle()
        assert await reply(chat) == STALE
        [(title, status)] = await tool_cards(lab)
        assert (title, status) == ("Propose an edit of the cell", "failed")
        assert await review(lab).count() == 0
        assert await model_source(lab, cell) == typed

        # Asked again, the proposal sorts the new line too.
        says(demo, "Attach the cell and ask again: the new proposal sorts your line too.")
        await attach(lab, IMPORTS)
        await chat.send("sort the imports")
        await card(lab).wait_for(state="visible", timeout=30000)
        await card(lab).locator(".jp-Copilot-ApprovalAllow").click()
        opened = review(lab)
        await opened.wait_for(state="visible", timeout=30000)
        diff = await opened.locator(".jp-Copilot-ReviewDiff .jp-Copilot-DiffText").inner_text()
        assert "import json" in diff
        assert rules.sort_imports(typed) == SORTED_WITH_JSON
        await chat.idle()

        # The cell changes while the diff is open: Keep applies nothing and says why, the
        # diff goes, Undo becomes Dismiss, and the typing stays.
        says(demo, "type something in the cell, then press Keep", CONFLICT)
        says(demo, "Keep is gone and Undo becomes Dismiss. Your typing stays.")
        await type_at_end(lab, IMPORTS, "\n# my note")
        noted = typed + "\n# my note"
        await eventually(lambda: _source_is(lab, cell, noted), "the typed note")
        await opened.locator(".jp-Copilot-ReviewKeep").click()
        await eventually(lambda: _attribute_is(opened, "data-state", "conflict"), "the conflict")
        assert await opened.locator(".jp-Copilot-ReviewMessage").inner_text() == CONFLICT
        assert await opened.locator(".jp-Copilot-ReviewKeep").is_hidden()
        assert await opened.locator(".jp-Copilot-ReviewDiff").is_hidden()
        dismiss = opened.locator(".jp-Copilot-ReviewUndo")
        assert await dismiss.inner_text() == "Dismiss"
        assert await model_source(lab, cell) == noted
        meta = lab.page.locator(f".jp-Copilot-Pill[data-cell-id='{cell}'] .jp-Copilot-PillMeta")
        await eventually(lambda: _text_is(meta, "6 lines"), "the pill of the typed cell")
        shot = await lab.screenshot("demo-stale.png")
        assert shot.stat().st_size > 10_000
        await dismiss.click()
        await opened.wait_for(state="detached")
        assert await model_source(lab, cell) == noted

        # Plan: no card, no diff; the agent shows what it would propose.
        says(demo, "Ask sort the imports in Plan mode: no card, no diff")
        await chat.mode("plan")
        await attach(lab, IMPORTS)
        await chat.send("sort the imports")
        await chat.idle()
        text = await reply(chat)
        assert "This conversation is in Plan mode, so I can only suggest." in text
        says(demo, "its tool call says Not done: this conversation is in Plan mode")
        says(demo, "a notice, not an error")
        notice = chat.messages("agent").last.locator(".jp-Copilot-ToolCardError")
        assert (await notice.inner_text()).startswith("Not done: this conversation is in Plan mode")
        assert " ".join(rules.sort_imports(noted).split()) in text  # type: ignore[union-attr]
        assert await card(lab).count() == 0 and await review(lab).count() == 0
        assert await model_source(lab, cell) == noted

        # Autopilot: no card, but the diff opens and waits for Keep.
        says(demo, "Autopilot: no approval card; the diff still opens in the cell")
        functions = await cell_id(lab, FUNCTIONS)
        await chat.mode("autopilot")
        await attach(lab, FUNCTIONS)
        await chat.send("add docstrings")
        await opened.wait_for(state="visible", timeout=30000)
        assert await card(lab).count() == 0
        assert await model_source(lab, functions) == source_of(demo, FUNCTIONS)
        await opened.locator(".jp-Copilot-ReviewUndo").click()
        await opened.wait_for(state="detached")
        await chat.idle()
        assert await model_source(lab, functions) == source_of(demo, FUNCTIONS)

        # Chat only, in a new conversation: explain works, edits do not.
        says(demo, "start a new conversation with +", "tick Chat only", NO_TOOLS_CLAIM)
        says(demo, "Chat only shows on the agent button while it is on")
        await lab.page.locator(".jp-Copilot-NewConversation").click()
        await chat.choose_agent("demo", chat_only=True)
        badge = lab.page.locator(".jp-Copilot-AgentPicker .jp-Copilot-Badge")
        assert await badge.inner_text() == "Chat only"
        # Attached from the cell's context menu, as step 2 offers.
        says(demo, "right-click the cell and choose Ask Copilot About This Cell")
        menu_cell = lab.notebook(NOTEBOOK).locator(".jp-Cell").nth(FUNCTIONS)
        await menu_cell.locator(".jp-InputPrompt").click(button="right")
        await lab.page.locator(".lm-Menu-itemLabel", has_text="Ask Copilot About This Cell").click()
        chip = lab.page.locator(".jp-Copilot-ComposerAttachment")
        await chip.wait_for(state="visible")
        assert await chip.get_attribute("data-cell-id") == functions
        assert await chip.inner_text() == CHIP
        await chat.send("explain")
        await chat.idle()
        assert (await reply(chat)).startswith("This cell has 15 lines of Python.")
        await attach(lab, FUNCTIONS)
        await chat.send("add docstrings")
        await chat.idle()
        assert (await reply(chat)).startswith("This conversation has no notebook tools")
        assert await card(lab).count() == 0 and await review(lab).count() == 0


async def test_the_data_cells_run_and_the_slider_renders(lab_server, jp_fetch, demo) -> None:
    async with lab_page(lab_server) as lab:
        await open_notebook(lab, jp_fetch, NOTEBOOK)
        says(demo, "Run the next three cells (Shift+Enter)", "data/temperatures.csv")
        assert await run_cell(lab, IMPORTS) == []
        loaded = await run_cell(lab, LOAD)
        assert [o["output_type"] for o in loaded] == ["stream", "execute_result"], loaded
        assert "".join(loaded[0]["text"]) == "30 readings from data/temperatures.csv\n"
        summary = await run_cell(lab, FUNCTIONS)
        assert [o["output_type"] for o in summary] == ["execute_result"], summary
        assert "'Lyon': {'days': 10, 'mean': 26.8, 'max': 31.5}" in "".join(
            summary[0]["data"]["text/plain"]
        )

        # The slider renders and lists the readings at or above its value.
        says(demo, "drag the slider: it lists the days at or above that temperature")
        outputs = await run_cell(lab, SLIDER)
        assert not [o for o in outputs if o["output_type"] == "error"], outputs
        cell = lab.notebook(NOTEBOOK).locator(".jp-Cell").nth(SLIDER)
        slider = cell.locator(".jupyter-widgets .widget-slider")
        await slider.wait_for(state="visible", timeout=60000)
        listing = cell.locator(".jupyter-widgets .jp-OutputArea-output")
        await eventually(
            lambda: _text_has(listing, "12 of 30 readings at or above 30 °C"), "the warm days"
        )
        await slider.locator(".noUi-handle").focus()
        await lab.page.keyboard.press("ArrowRight")
        await eventually(
            lambda: _text_has(listing, "11 of 30 readings at or above 31 °C"), "the slider's move"
        )
        assert "2024-07-04  Lyon" not in await listing.inner_text()

        # The last cell is over the context budget: its size and the limit, no Attach.
        says(demo, TOO_LARGE, "Attach is disabled")
        large = source_of(demo, LARGE)
        assert len(large.encode()) > 8192
        await lab.click_cell(NOTEBOOK, LARGE)
        pill = lab.page.locator(f".jp-Copilot-Pill[data-cell-id='{await cell_id(lab, LARGE)}']")
        await pill.wait_for(state="visible")
        message = await pill.locator(".jp-Copilot-PillMessage").inner_text()
        assert message.startswith(TOO_LARGE + ": ") and "the limit is 8 KB" in message
        assert await pill.locator(".jp-Copilot-AttachToggle").is_disabled()


async def _text_is(locator: Any, expected: str) -> bool:
    return bool(await locator.inner_text() == expected)


async def _attribute_is(locator: Any, name: str, expected: str) -> bool:
    return bool(await locator.get_attribute(name) == expected)


async def _text_has(locator: Any, expected: str) -> bool:
    return expected in await locator.inner_text()


async def _title_has(locator: Any, expected: str) -> bool:
    return expected in (await locator.get_attribute("title") or "")


async def _source_is(lab: Lab, cell: str, expected: str) -> bool:
    return await model_source(lab, cell) == expected
