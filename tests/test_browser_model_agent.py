"""The built-in model agent as a person meets it in real JupyterLab: it is in the Agent menu
under its entry's label, and it answers, streamed from the scripted OpenAI-compatible
endpoint (tests/scriptedmodel.py); an edit it proposes waits for the person's approval card
and then opens as a review in the cell, which only Keep applies."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_notebook
from tests.lab import lab_page
from tests.scriptedmodel import ScriptedModel, read_then_edit, tool_names
from tests.test_browser_chat import Chat
from tests.test_browser_mcp import model_source, open_notebook

pytest.importorskip("pydantic_ai", reason="the models extra is not installed")

# Real JupyterLab in Chromium: `pytest -m "not browser"` leaves these out. No test here runs
# code, so the kernel sessions attach to one real kernel per test process (tests/kernels.py).
pytestmark = [pytest.mark.browser, pytest.mark.shared_kernel]

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


OLD = "x = 1\n"
#: What the model proposes; the marker shows whether any of it reached the card.
CANARY = "canary-5d2e-never-in-the-card"
NEW = f"x = 2  # {CANARY}\n"
READ = "notebook_read_selected_cell"
EDIT = "notebook_edit_cell"


async def test_an_edit_the_model_proposes_asks_first_then_opens_a_review_only_keep_applies(
    lab_server: Any, scripted_model: ScriptedModel, jp_fetch: Any, jp_root_dir: Path
) -> None:
    scripted_model.script = read_then_edit(READ, EDIT, NEW)
    path = make_notebook(jp_root_dir, "a.ipynb", [OLD])
    before = path.read_bytes()
    async with lab_page(lab_server) as lab:
        chat = Chat(lab)
        await open_notebook(lab, jp_fetch, "a.ipynb")
        await chat.choose_agent("team-model")
        await chat.mode("interactive")
        await lab.click_cell("a.ipynb", 0)
        pill = await lab.pill_of(0)
        await (await pill.query_selector("button")).click()
        await lab.page.locator(".jp-Copilot-ComposerAttachment").wait_for(state="visible")
        cell_id = await lab.page.evaluate(
            "() => window.jupyterapp.shell.currentWidget.content.model.cells.get(0).id"
        )
        await chat.send("Make x equal 2.")

        # The edit waits for the person: a card with what and where, none of the new source.
        card = lab.page.locator(".jp-Copilot-Approval")
        await card.wait_for(state="visible", timeout=30000)
        assert await card.get_attribute("data-state") == "pending"
        text = await card.inner_text()
        assert "Propose a whole-cell edit" in text and "Cell 1 of 1 in a.ipynb" in text
        assert f"{len(NEW.encode())} bytes" in text
        assert CANARY not in await card.evaluate("node => node.outerHTML")
        review = lab.page.locator(".jp-Copilot-Review")
        assert await review.count() == 0
        assert len(scripted_model.requests) == 2  # the read, then the edit: no answer yet
        assert await model_source(lab, cell_id) == OLD
        assert path.read_bytes() == before

        # Allow once: the review opens in the cell; neither the page nor the file changed.
        await card.locator(".jp-Copilot-ApprovalAllow").click()
        await review.wait_for(state="visible", timeout=30000)
        assert await lab.notebook("a.ipynb").locator(".jp-Cell .jp-Copilot-Review").count() == 1
        await card.wait_for(state="detached")
        await chat.idle()
        assert "Review opened: True." in (await chat.last_reply()).splitlines()
        # The reply's tokens: three requests to the endpoint, each counted 10 in and 5 out.
        usage = lab.page.locator(".jp-Copilot-Usage").last
        await usage.wait_for(state="visible")
        assert await usage.inner_text() == "30 in · 15 out tokens (conversation: 30 in · 15 out)"
        assert await model_source(lab, cell_id) == OLD
        assert path.read_bytes() == before

        # Keep: the cell has the model's source.
        await review.locator(".jp-Copilot-ReviewKeep").click()
        await review.wait_for(state="detached")
        assert await model_source(lab, cell_id) == NEW
    scripted_model.check()
    assert {READ, EDIT} <= set(tool_names(scripted_model.requests[0]))
