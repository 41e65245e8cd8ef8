"""The built-in model agent as a person meets it in real JupyterLab: it is in the Agent menu
under its entry's label, and it answers, streamed from the scripted OpenAI-compatible
endpoint (tests/scriptedmodel.py)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lab import lab_page
from tests.scriptedmodel import ScriptedModel
from tests.test_browser_chat import Chat

pytest.importorskip("pydantic_ai", reason="the models extra is not installed")

# Real JupyterLab in Chromium: `pytest -m "not browser"` leaves these out.
pytestmark = pytest.mark.browser

REPLY = "Hello from the team model."


@pytest.fixture
def copilot_config(scripted_model: ScriptedModel) -> dict[str, Any]:
    """One model endpoint, the scripted one, next to the demo agent."""
    return {
        "models": {
            "team-model": {
                "label": "Team model",
                "provider": "openai-compatible",
                "base_url": scripted_model.url,
                "model": "scripted",
            }
        },
        "discover_agents": False,
    }


async def test_the_model_agent_is_in_the_agent_menu_and_answers(
    lab_server: Any, scripted_model: ScriptedModel
) -> None:
    scripted_model.script = [REPLY]
    async with lab_page(lab_server) as lab:
        chat = Chat(lab)
        await chat.root.wait_for(state="visible")
        await lab.page.locator(".jp-Copilot-AgentPicker").click()
        popover = lab.page.locator(".jp-Copilot-AgentPopover")
        await popover.wait_for(state="visible")
        ids = await popover.locator("[data-agent-id]").evaluate_all(
            "es => es.map(e => e.dataset.agentId)"
        )
        assert ids == ["team-model", "demo"]
        assert "Team model" in await popover.locator('[data-agent-id="team-model"]').inner_text()
        await lab.page.keyboard.press("Escape")
        await chat.choose_agent("team-model", chat_only=True)
        await chat.send("Say hello")
        await chat.idle()
        # The reply, then its tokens on a quiet line of their own.
        assert (await chat.last_reply()).strip().splitlines()[0] == REPLY
        # Its tokens, quietly under the reply (the scripted endpoint counts 10 in, 5 out).
        usage = lab.page.locator(".jp-Copilot-Usage").last
        await usage.wait_for(state="visible")
        assert await usage.inner_text() == "10 in · 5 out tokens (conversation: 10 in · 5 out)"
    scripted_model.check()
