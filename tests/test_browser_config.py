"""Invalid settings, as a person sees them in JupyterLab (docs/admin.md, "Invalid settings").

A server whose `CopilotApp` settings do not validate starts with agents and tools off; the
Copilot side panel then holds only a plain message naming the settings an administrator must
fix, and no chat, context or bridge.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.lab import lab_page

# Real JupyterLab in Chromium: `pytest -m "not browser"` leaves these out. No test here runs
# code, so the kernel sessions attach to one real kernel per test process (tests/kernels.py).
pytestmark = [pytest.mark.browser, pytest.mark.shared_kernel]

SCREENSHOT = "/tmp/copilot-config-error.png"


@pytest.fixture
def copilot_config() -> dict[str, Any]:
    """One invalid setting, one misspelt one, and a valid one."""
    return {"agent_sandbox": "yes", "allowed_mode": ["plan"], "approval_timeout_seconds": 60.0}


async def test_the_panel_names_the_invalid_settings_and_offers_nothing_else(lab_server) -> None:
    # The panel that names the invalid settings shows itself at start.
    async with lab_page(lab_server, open_panel=False) as lab:
        message = lab.page.locator("#jupyter-copilot-panel .jp-Copilot-ConfigError")
        await message.wait_for(state="visible")
        assert await message.get_attribute("role") == "alert"
        assert await message.inner_text() == (
            "This server's jupyter-copilot settings are invalid (agent_sandbox, allowed_mode): "
            "an administrator must fix them; agents and tools are off."
        )
        panel = lab.page.locator("#jupyter-copilot-panel")
        for absent in (".jp-Copilot-Chat", ".jp-Copilot-Context", "textarea", "button"):
            assert await panel.locator(absent).count() == 0, absent
        assert lab.traffic.opened == 0  # no page bridge: pages cannot connect
        await lab.page.screenshot(path=SCREENSHOT)
