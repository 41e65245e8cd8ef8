"""The administrator's policy as a person sees it in the Copilot panel (real JupyterLab).

The server enforces the policy (``tests/test_admin_policy.py``); the panel only offers what
it allows.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest

from tests.conftest import make_notebook
from tests.conversations import SCRIPTED_AGENT, agent_log, scripted_agents
from tests.eventually import eventually
from tests.lab import lab_page
from tests.test_browser_chat import Chat

# Real JupyterLab in Chromium: `pytest -m "not browser"` leaves these out. No test here runs
# code, so the kernel sessions attach to one real kernel per test process (tests/kernels.py).
pytestmark = [pytest.mark.browser, pytest.mark.shared_kernel]


@pytest.fixture
def log(tmp_path: Path) -> Path:
    """What the scripted agents received."""
    return tmp_path / "agent.jsonl"


@pytest.fixture
def copilot_config(log: Path) -> dict[str, Any]:
    """Two scripted agents, of which the policy allows one, two modes and two references."""
    config = scripted_agents(log)
    config["agents"]["other"] = {
        "label": "Other agent",
        "command": [sys.executable, str(SCRIPTED_AGENT)],
        "env": {"SCRIPTED_AGENT_LOG": str(log)},
    }
    config.update(
        allowed_agents=["other"],
        allowed_modes=["plan", "interactive"],
        allowed_context_refs=["selected_cell", "active_notebook"],
        default_mode="plan",
    )
    return config


async def test_the_panel_offers_only_what_the_policy_allows(lab_server: Any, log: Path) -> None:
    async with lab_page(lab_server) as lab:
        chat = Chat(lab)
        await chat.root.wait_for(state="visible")
        mode = lab.page.locator(".jp-Copilot-ModeSelect")

        async def modes() -> list[str]:
            return list(await mode.locator("option").evaluate_all("os => os.map(o => o.value)"))

        await eventually(lambda: _equals(modes, ["plan", "interactive"]), "the allowed modes")
        assert await mode.input_value() == "plan"

        await lab.page.locator(".jp-Copilot-AgentPicker").click()
        popover = lab.page.locator(".jp-Copilot-AgentPopover")
        await popover.wait_for(state="visible")
        agents = popover.locator("[data-agent-id]")
        ids = await agents.evaluate_all("es => es.map(e => e.dataset.agentId)")
        assert ids == ["other"]
        await lab.page.keyboard.press("Escape")

        await lab.page.locator(".jp-Copilot-ContextPicker").click()
        context = lab.page.locator(".jp-Copilot-ContextPopover")
        await context.wait_for(state="visible")
        refs = await context.locator("input[data-context-ref]").evaluate_all(
            "es => es.map(e => e.dataset.contextRef)"
        )
        assert refs == ["selected_cell", "active_notebook"]
        await lab.page.keyboard.press("Escape")

        await chat.choose_agent("other", chat_only=True)
        await chat.send("Reply with the word allowed")
        await chat.idle()
        assert (await chat.last_reply()).strip() == "allowed"
        assert len(agent_log(log, "prompt")) == 1


async def test_without_cell_outputs_an_error_shows_no_fix_or_explain(
    lab_server: Any, jp_root_dir: Path
) -> None:
    # Fix and Explain attach the error, an output: the policy here leaves outputs out, so
    # the message they prepare would be refused (tests/test_browser_mentions.py shows them).
    path = make_notebook(jp_root_dir, "e.ipynb", ["1 / 0"])
    notebook = nbformat.read(path, as_version=4)
    notebook.cells[0].outputs = [
        nbformat.v4.new_output(
            "error", ename="ZeroDivisionError", evalue="division by zero", traceback=["1 / 0"]
        )
    ]
    nbformat.write(notebook, path)
    async with lab_page(lab_server) as lab:
        async with lab.page.expect_response(lambda r: r.url.split("?")[0].endswith("/agents")):
            await lab.open("e.ipynb")
        cell = lab.notebook("e.ipynb").locator(".jp-Cell").first
        await cell.locator(".jp-OutputArea-output").wait_for(state="visible")
        await asyncio.sleep(1.0)  # the point: no buttons come, so a fixed wait
        assert await cell.locator(".jp-Copilot-ErrorActions").count() == 0


async def _equals(read: Any, expected: list[str]) -> bool:
    return bool(await read() == expected)
