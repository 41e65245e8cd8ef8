"""A newcomer's first hour with the demo agent, in real JupyterLab: what the cards, the modes
and the settings say (docs/conversations.md, "Cards and modes in plain words").

Each test drives the shipped demo agent on the real Binder notebook, as a person does, and
checks the words the person reads: tool titles instead of tool names, where a new cell goes,
no hashes, a calm notice for what the person chose, a live warning on a run card, Chat only
visible in the bar, and the Settings Editor in the panel's words.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.eventually import eventually
from tests.lab import Lab, lab_page, open_copilot_panel, settled
from tests.test_browser_chat import Chat
from tests.test_browser_demo import (
    FUNCTIONS,
    IMPORTS,
    LOAD,
    NOTEBOOK,
    attach,
    card,
    cell_id,
    reply,
    run_cell,
    type_at_end,
)
from tests.test_browser_demo import demo as demo  # noqa: F401  (a fixture)
from tests.test_browser_demo import jp_server_config as jp_server_config  # noqa: F401
from tests.test_browser_mcp import model_source, open_notebook

# Real JupyterLab in Chromium: `pytest -m "not browser"` leaves these out.
pytestmark = pytest.mark.browser

SETTINGS = "jupyterlab-agent-review:plugin"
COLOR = "node => getComputedStyle(node).color"
#: The theme's error colour, as a computed colour.
ERROR_COLOR = """() => {
    const probe = document.createElement('div');
    probe.style.color = 'var(--jp-error-color1)';
    document.body.append(probe);
    const color = getComputedStyle(probe).color;
    probe.remove();
    return color;
}"""


def panel(lab: Lab) -> Any:
    return lab.page.locator("#jupyter-copilot-panel")


async def no_hash_in_panel(lab: Lab) -> None:
    """Hashes are for machines: the panel never shows one."""
    assert "sha256" not in await panel(lab).inner_text()


async def last_tool_card(lab: Lab) -> Any:
    replies = lab.page.locator(".jp-Copilot-Message[data-role=agent]")
    return replies.nth(await replies.count() - 1).locator(".jp-Copilot-ToolCard").last


async def test_chat_only_shows_in_the_bar_and_plus_starts_with_the_notebook_tools(
    lab_server, jp_fetch, demo
) -> None:
    async with lab_page(lab_server, width=1280) as lab:
        await lab.page.set_viewport_size({"width": 1280, "height": 800})
        chat = Chat(lab)
        await open_notebook(lab, jp_fetch, NOTEBOOK)
        badge = lab.page.locator(".jp-Copilot-AgentPicker .jp-Copilot-Badge")
        await chat.root.wait_for(state="visible")
        assert await badge.is_hidden()

        # Ticked in the Agent menu, Chat only shows on the agent button at all times.
        await chat.choose_agent("demo", chat_only=True)
        await badge.wait_for(state="visible")
        assert await badge.inner_text() == "Chat only"
        await attach(lab, IMPORTS)
        await chat.send("sort the imports")
        await chat.idle()
        text = await reply(chat)
        # The refusal says exactly what to press.
        assert text.startswith("This conversation has no notebook tools (Chat only is on")
        assert "Press + for a new conversation: it starts with Chat only off." in text
        assert await card(lab).count() == 0
        shot = await lab.screenshot("copilot-chat-only-badge.png")
        assert shot.stat().st_size > 10_000

        # "+" starts with the notebook tools: the same request now shows its card.
        await lab.page.locator(".jp-Copilot-NewConversation").click()
        await badge.wait_for(state="hidden")
        await lab.page.locator(".jp-Copilot-AgentPicker").click()
        box = lab.page.locator(".jp-Copilot-AgentPopover input[data-chat-only]")
        assert not await box.is_checked()
        await lab.page.keyboard.press("Escape")
        await attach(lab, IMPORTS)
        await chat.send("sort the imports")
        await card(lab).wait_for(state="visible", timeout=30000)
        await card(lab).locator(".jp-Copilot-ApprovalDeny").click()
        await chat.idle()


async def test_plan_mode_and_a_declined_card_read_as_calm_notices(
    lab_server, jp_fetch, demo
) -> None:
    async with lab_page(lab_server, width=1280) as lab:
        await lab.page.set_viewport_size({"width": 1280, "height": 800})
        chat = Chat(lab)
        await open_notebook(lab, jp_fetch, NOTEBOOK)
        await chat.root.wait_for(state="visible")

        # Deny: the tool card says "You declined this.", an information, not an error.
        await attach(lab, IMPORTS)
        await chat.send("sort the imports")
        await card(lab).wait_for(state="visible", timeout=30000)
        await card(lab).locator(".jp-Copilot-ApprovalDeny").click()
        await chat.idle()
        tool = await last_tool_card(lab)
        assert await tool.get_attribute("data-outcome") == "declined"
        note = tool.locator(".jp-Copilot-ToolCardError")
        assert await note.inner_text() == "You declined this."
        assert "jp-mod-notice" in (await note.get_attribute("class") or "")
        assert await tool.locator(".jp-Copilot-ToolCardIcon").get_attribute("aria-label") == (
            "Not done"
        )
        assert "person denied" not in await panel(lab).inner_text()
        # No raw error behind a Details either: the notice is the whole story.
        assert await tool.locator(".jp-Copilot-ToolCardDetails").is_hidden()

        # Plan: the refusal the person's own mode causes is a notice in plain words.
        await chat.mode("plan")
        await attach(lab, IMPORTS)
        await chat.send("sort the imports")
        await chat.idle()
        tool = await last_tool_card(lab)
        assert await tool.get_attribute("data-status") == "failed"
        assert await tool.get_attribute("data-outcome") == "plan-mode"
        note = tool.locator(".jp-Copilot-ToolCardError")
        text = await note.inner_text()
        assert text.startswith("Not done: this conversation is in Plan mode")
        assert "Ask before edits" in text and "plan-mode" not in text
        assert "jp-mod-notice" in (await note.get_attribute("class") or "")
        assert await note.evaluate(COLOR) != await lab.page.evaluate(ERROR_COLOR)
        assert await tool.locator(".jp-Copilot-ToolCardDetails").is_hidden()
        # The demo agent says it calmly too: no refusal code.
        said = await reply(chat)
        assert said.startswith("This conversation is in Plan mode, so I can only suggest.")
        assert "plan-mode" not in said
        await tool.scroll_into_view_if_needed()
        shot = await lab.screenshot("copilot-plan-mode-notice.png")
        assert shot.stat().st_size > 10_000


async def test_cards_name_the_tool_where_the_cell_goes_and_the_review_keys(
    lab_server, jp_fetch, demo
) -> None:
    async with lab_page(lab_server, width=1280) as lab:
        await lab.page.set_viewport_size({"width": 1280, "height": 800})
        chat = Chat(lab)
        await open_notebook(lab, jp_fetch, NOTEBOOK)
        await chat.root.wait_for(state="visible")

        # An edit card: the spec's title, the tool name as its tooltip, the review keys.
        await attach(lab, FUNCTIONS)
        await chat.send("add docstrings")
        await card(lab).wait_for(state="visible", timeout=30000)
        tool = card(lab).locator(".jp-Copilot-ApprovalTool")
        assert await tool.inner_text() == "Propose a whole-cell edit"
        assert await tool.get_attribute("title") == "notebook_edit_cell"
        hint = card(lab).locator(".jp-Copilot-ApprovalHint")
        assert await hint.inner_text() == (
            "Escape denies. After Allow once the change opens in its cell: Alt+Shift+Enter "
            "keeps it, Alt+Shift+Backspace undoes it, Alt+Shift+N goes to the next one."
        )
        await card(lab).locator(".jp-Copilot-ApprovalDeny").click()
        await chat.idle()

        # An insert card says where the new cell goes; never its source.
        await attach(lab, FUNCTIONS)
        await chat.send("add a note that describes this cell")
        await card(lab).wait_for(state="visible", timeout=30000)
        assert await tool.inner_text() == "Propose a new cell"
        target = card(lab).locator(".jp-Copilot-ApprovalTarget")
        assert await target.inner_text() == f"After cell {FUNCTIONS + 1} of 12 in demo.ipynb"
        assert "About the cell above" not in await panel(lab).inner_text()
        await no_hash_in_panel(lab)
        shot = await lab.screenshot("copilot-insert-card.png")
        assert shot.stat().st_size > 10_000
        await card(lab).locator(".jp-Copilot-ApprovalDeny").click()
        await chat.idle()


async def test_a_run_card_warns_at_once_when_the_cell_changes_under_it(
    lab_server, jp_fetch, demo
) -> None:
    async with lab_page(lab_server, width=1280) as lab:
        await lab.page.set_viewport_size({"width": 1280, "height": 800})
        chat = Chat(lab)
        await open_notebook(lab, jp_fetch, NOTEBOOK)
        await run_cell(lab, IMPORTS)
        load = await cell_id(lab, LOAD)
        await attach(lab, LOAD)
        await chat.send("run this cell")
        run = lab.page.locator(".jp-Copilot-Approval[data-kind='run']")
        await run.wait_for(state="visible", timeout=30000)
        assert await run.locator(".jp-Copilot-ApprovalTool").inner_text() == "Ask to run a cell"
        line = run.locator(".jp-Copilot-ApprovalSource")
        assert await line.inner_text() == "Runs the cell as the agent read it"
        assert await line.get_attribute("data-stale") == "false"
        assert await line.locator(".jp-Copilot-ApprovalSourceIcon").is_hidden()
        await no_hash_in_panel(lab)
        assert await run.locator(".jp-Copilot-ApprovalHint").is_hidden()

        # The person types while the card waits: the card warns before Allow once.
        await type_at_end(lab, LOAD, "\n# mine")
        await eventually(lambda: _stale(line), "the card's warning")
        assert await line.inner_text() == (
            "The cell changed while this card waited: Allow once will not run it. "
            "Undo your change, or Deny and ask the agent again."
        )
        assert await line.locator(".jp-Copilot-ApprovalSourceIcon").is_visible()
        assert await line.get_attribute("role") == "status"
        await run.scroll_into_view_if_needed()
        shot = await lab.screenshot("copilot-run-card-changed.png")
        assert shot.stat().st_size > 10_000
        await run.locator(".jp-Copilot-ApprovalAllow").click()
        await chat.idle()
        assert "stale-source" in await reply(chat)
        assert (await model_source(lab, load)).endswith("# mine")


async def _stale(line: Any) -> bool:
    return bool(await line.get_attribute("data-stale") == "true")


async def test_the_settings_editor_speaks_the_panels_words_and_an_unknown_agent_is_said(
    lab_server, jp_fetch, demo
) -> None:
    async with lab_page(lab_server, width=1280) as lab:
        await lab.page.set_viewport_size({"width": 1280, "height": 800})
        chat = Chat(lab)
        await chat.root.wait_for(state="visible")
        await lab.page.evaluate(
            "() => window.jupyterapp.commands.execute('settingeditor:open', {query: 'Copilot'})"
        )
        form = lab.page.locator(".jp-SettingsPanel")
        select = form.locator("select[id$='defaultMode']")
        await select.wait_for(state="visible", timeout=30000)
        labels = [o.strip() for o in await select.locator("option").all_inner_texts()]
        assert labels == ["The server's default", "Plan", "Ask before edits", "Autopilot"]
        text = await form.inner_text()
        assert "interactive" not in text
        assert "point at an agent to see its id" in text

        # An agent id this server does not offer: left aside, and the panel says so.
        await lab.page.evaluate(
            """async ([id, value]) => {
                const registry = window.jupyterapp.serviceManager.settings;
                const raw = JSON.stringify({defaultAgent: value});
                await registry.save(id, raw);
            }""",
            [SETTINGS, "no-such-agent"],
        )
        await lab.page.reload()
        await lab.page.wait_for_selector("#jupyter-copilot-panel", state="attached", timeout=60000)
        await settled(lab.page)
        await open_copilot_panel(lab.page)
        notice = lab.page.locator(".jp-Copilot-ComposerNotice")
        await notice.wait_for(state="visible", timeout=30000)
        assert await notice.inner_text() == (
            'Your default agent "no-such-agent" (Settings Editor, Copilot) is not offered by '
            "this server, so Demo agent (rule-based) is used. The Agent menu lists the agents "
            "on offer: point at one to see its id."
        )
        picker = lab.page.locator(".jp-Copilot-AgentPicker")
        assert "Demo agent" in (await picker.get_attribute("title") or "")
        await lab.page.locator(".jp-Copilot-AgentPicker").click()
        item = lab.page.locator(".jp-Copilot-AgentPopover [data-agent-id='demo']")
        assert await item.get_attribute("title") == "id: demo"
        await lab.page.keyboard.press("Escape")
        await lab.page.evaluate(
            "() => window.jupyterapp.commands.execute('settingeditor:open', {query: 'Copilot'})"
        )
        await select.wait_for(state="visible", timeout=30000)
        shot = await lab.screenshot("copilot-settings-editor.png")
        assert shot.stat().st_size > 10_000
