"""The ``kernel_variables`` grant as a person uses it in real JupyterLab.

The Context popover offers "Kernel variables", unchecked by default; the scripted agent's
``notebook_list_variables`` call is ``blocked`` until the person checks it, and then lists
the DataFrame the person's own run of a cell made. The tools themselves, against real
kernels, are tested in ``test_kernel_variables.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_notebook
from tests.conversations import agent_log, scripted_agents
from tests.lab import lab_page
from tests.test_browser_chat import Chat
from tests.test_browser_review import open_notebook

# Real JupyterLab in Chromium: `pytest -m "not browser"` leaves these out.
pytestmark = pytest.mark.browser

CELL = "import pandas as pd\ndf = pd.DataFrame({'a': [1, 2, 3]})\n"


@pytest.fixture
def log(tmp_path: Path) -> Path:
    """What the scripted agent received and its tool results."""
    return tmp_path / "agent.jsonl"


@pytest.fixture
def copilot_config(log: Path) -> dict[str, Any]:
    return scripted_agents(log)


async def test_kernel_variables_is_off_by_default_and_checking_it_lets_the_agent_list_them(
    lab_server, jp_fetch, jp_root_dir: Path, log: Path
) -> None:
    make_notebook(jp_root_dir, "a.ipynb", [CELL])
    async with lab_page(lab_server) as lab:
        await open_notebook(lab, jp_fetch, "a.ipynb")
        await lab.run_cell("a.ipynb", 0)
        prompt = lab.notebook("a.ipynb").locator(".jp-InputPrompt").first
        assert "[1]" in await prompt.inner_text()
        chat = Chat(lab)
        await chat.choose_agent("scripted")

        await lab.page.locator(".jp-Copilot-ContextPicker").click()
        popover = lab.page.locator(".jp-Copilot-ContextPopover")
        await popover.wait_for(state="visible")
        box = popover.locator("input[data-context-ref='kernel_variables']")
        assert not await box.is_checked()
        assert "Kernel variables" in await popover.inner_text()
        await lab.page.keyboard.press("Escape")

        await chat.send("mcp notebook_list_variables {}")
        await chat.idle()
        first = agent_log(log, "tool")[-1]
        assert first["name"] == "notebook_list_variables" and first["isError"], first
        assert first["result"]["error"]["code"] == "blocked"

        await lab.page.locator(".jp-Copilot-ContextPicker").click()
        await popover.wait_for(state="visible")
        await box.click()
        assert await box.is_checked()
        await lab.screenshot("copilot-context-kernel-variables.png")
        await lab.page.keyboard.press("Escape")

        await chat.send("mcp notebook_list_variables {}")
        await chat.idle()
        second = agent_log(log, "tool")[-1]
        assert not second["isError"], second
        names = {v["name"]: v for v in second["result"]["variables"]}
        assert names["df"]["type"] == "pandas.DataFrame" and names["df"]["shape"] == [3, 1]
