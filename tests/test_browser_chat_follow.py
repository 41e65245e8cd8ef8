"""The chat keeps its newest message in view while approval cards come and go above it, in
real JupyterLab (Debian's Chromium) with the scripted ACP agent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conversations import scripted_agents
from tests.eventually import eventually
from tests.lab import Lab, lab_page
from tests.test_browser_chat import Chat
from tests.test_browser_review import screenshots
from tests.test_browser_theme import allow, permission_card

# Real JupyterLab in Chromium: `pytest -m "not browser"` leaves these out. No test here runs
# code, so the kernel sessions attach to one real kernel per test process (tests/kernels.py).
pytestmark = [pytest.mark.browser, pytest.mark.shared_kernel]

# How far the current conversation's list is from its bottom, and whether its newest message
# is drawn whole inside it.
BOTTOM_JS = """
() => {
  const list = document.querySelector(
    '.jp-Copilot-Chat .jp-Copilot-Messages:not(.jp-mod-readonly)');
  const messages = list.querySelectorAll('.jp-Copilot-Message');
  const last = messages[messages.length - 1].getBoundingClientRect();
  const box = list.getBoundingClientRect();
  return {
    below: list.scrollHeight - list.scrollTop - list.clientHeight,
    lastShown: last.bottom <= box.bottom + 1,
    height: list.clientHeight,
  };
}
"""


@pytest.fixture
def copilot_config(tmp_path: Path) -> dict[str, Any]:
    """Only the scripted agent."""
    return scripted_agents(tmp_path / "agent.jsonl")


async def _at_bottom(lab: Lab) -> bool:
    seen = await lab.page.evaluate(BOTTOM_JS)
    return bool(seen["below"] <= 2 and seen["lastShown"])


async def test_the_chat_stays_at_the_bottom_as_approval_cards_come_and_go(
    lab_server, jp_fetch
) -> None:
    async with lab_page(lab_server, width=1280) as lab:
        await lab.page.set_viewport_size({"width": 1280, "height": 800})
        chat = Chat(lab)
        await chat.root.wait_for(state="visible")
        await chat.choose_agent("scripted")
        # More messages than the list can show: it scrolls, and follows the newest.
        for _ in range(2):
            await chat.send("paragraphs 6")
            await chat.idle()
        await eventually(lambda: _at_bottom(lab), "the chat at its bottom")
        before = (await lab.page.evaluate(BOTTOM_JS))["height"]
        # Another conversation's agent asks for permission: its card comes on top of the
        # panel, and nothing changes in this conversation's messages.
        card, turn = await permission_card(lab, jp_fetch)
        await card.wait_for(state="visible")
        assert (await lab.page.evaluate(BOTTOM_JS))["height"] < before - 50
        await eventually(lambda: _at_bottom(lab), "the chat at its bottom with the card")
        await screenshots(lab, "copilot-chat-card-bottom")
        await allow(jp_fetch, card, turn)
        await card.wait_for(state="detached")
        await eventually(lambda: _at_bottom(lab), "the chat at its bottom after the card")
        # In the panel's own turn: the person's message and the reply after the card.
        await chat.send("permission")
        card = lab.page.locator(".jp-Copilot-Approval[data-kind=permission]")
        await card.wait_for(state="visible", timeout=30000)
        await eventually(lambda: _at_bottom(lab), "the person's message in view with the card")
        await card.locator("[data-option-id='yes-once']").click()
        await card.wait_for(state="detached")
        await chat.idle()
        assert "chose yes-once" in await chat.last_reply()
        await eventually(lambda: _at_bottom(lab), "the reply in view after the card")
