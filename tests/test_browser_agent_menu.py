"""The Agent menu as a person meets it in real JupyterLab: known agents that are not installed
are listed, greyed out, with their install command; with personal keys allowed, a person sets,
replaces and removes their own key for the team model, which never shows again, and their
conversation's model agent reaches the scripted endpoint (tests/scriptedmodel.py) with it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.eventually import eventually
from tests.lab import lab_page
from tests.scriptedmodel import ScriptedModel
from tests.test_browser_chat import Chat

pytest.importorskip("pydantic_ai", reason="the models extra is not installed")

# Real JupyterLab in Chromium: `pytest -m "not browser"` leaves these out. No test here runs
# code, so the kernel sessions attach to one real kernel per test process (tests/kernels.py).
pytestmark = [pytest.mark.browser, pytest.mark.shared_kernel]

#: The person's own key: it may reach the endpoint and nothing the page holds.
KEY = "sk-browser-personal-canary-61c0"
TEAM_KEY = "sk-team-key-for-everyone"
GEMINI = "Not installed: npm install -g @google/gemini-cli, then restart JupyterLab."


@pytest.fixture
def copilot_config(
    scripted_model: ScriptedModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, Any]:
    """The team model with personal keys allowed; known agents discovered on a PATH that
    holds none of them (and unguarded ones allowed, so the list is the same with or without
    a working sandbox)."""
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", f"{empty}:/usr/bin:/bin")
    monkeypatch.setenv("TEST_TEAM_KEY", TEAM_KEY)
    return {
        "models": {
            "team-model": {
                "label": "Team model",
                "provider": "openai-compatible",
                "base_url": scripted_model.url,
                "model": "scripted",
                "api_key": {"fromEnv": "TEST_TEAM_KEY"},
            }
        },
        "allow_personal_models": True,
        "allow_unguarded_agents": True,
        "discover_models": False,
    }


async def test_missing_agents_are_greyed_out_and_a_personal_key_is_used_and_never_shown(
    lab_server: Any, scripted_model: ScriptedModel
) -> None:
    scripted_model.script = ["Hello with your key."]
    async with lab_page(lab_server) as lab:
        page = lab.page
        chat = Chat(lab)
        await chat.root.wait_for(state="visible")
        await page.locator(".jp-Copilot-AgentPicker").click()
        popover = page.locator(".jp-Copilot-AgentPopover")
        await popover.wait_for(state="visible")
        items = popover.locator("[data-agent-id]")
        states = await items.evaluate_all(
            "es => es.map(e => [e.dataset.agentId, e.disabled, 'unavailable' in e.dataset])"
        )
        assert states == [
            ["team-model", False, False],
            ["demo", False, False],
            ["claude-code", True, True],
            ["codex", True, True],
            ["gemini", True, True],
            ["goose", True, True],
        ]
        gemini = popover.locator('[data-agent-id="gemini"]')
        assert GEMINI in await gemini.inner_text()
        # A click on it chooses nothing: the default (the team model) stays.
        await gemini.click(force=True)
        assert await items.first.get_attribute("aria-checked") == "true"
        assert await gemini.get_attribute("aria-checked") == "false"

        row = popover.locator('[data-key-model-id="team-model"]')
        await row.wait_for(state="visible")
        assert await row.locator(".jp-Copilot-KeyStatus").inner_text() == "No key set"
        await row.locator(".jp-Copilot-KeyInput").fill(KEY)
        await row.locator(".jp-Copilot-KeySave").click()

        async def key_set() -> bool:
            status = popover.locator('[data-key-model-id="team-model"] .jp-Copilot-KeyStatus')
            return await status.inner_text() == "Key set"

        await eventually(key_set, "the key to be set")
        row = popover.locator('[data-key-model-id="team-model"]')
        assert await row.locator(".jp-Copilot-KeyInput").input_value() == ""
        assert await row.locator(".jp-Copilot-KeySave").inner_text() == "Replace"
        await lab.screenshot("copilot-personal-keys.png")
        # Nowhere in the page, its fields included.
        html = await page.evaluate(
            "() => document.documentElement.outerHTML + [...document.querySelectorAll("
            "'input, textarea')].map(e => e.value).join('')"
        )
        assert KEY not in html
        await page.keyboard.press("Escape")
        await popover.wait_for(state="hidden")

        await chat.choose_agent("team-model", chat_only=True)
        await chat.send("Say hello")
        await chat.idle()
        assert (await chat.last_reply()).strip().splitlines()[0] == "Hello with your key."
        assert scripted_model.authorizations == [f"Bearer {KEY}"]

        await page.locator(".jp-Copilot-AgentPicker").click()
        await popover.wait_for(state="visible")
        await popover.locator('[data-key-model-id="team-model"] .jp-Copilot-KeyRemove').click()

        async def key_gone() -> bool:
            status = popover.locator('[data-key-model-id="team-model"] .jp-Copilot-KeyStatus')
            return await status.inner_text() == "No key set"

        await eventually(key_gone, "the key to be removed")
        assert KEY not in await page.content()
    scripted_model.check()
