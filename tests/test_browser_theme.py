"""The Copilot panel under JupyterLab Dark, and the person's preferences from JupyterLab's
settings, in real JupyterLab (Debian's Chromium) with the scripted ACP agent."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_notebook
from tests.conversations import api, create, scripted_agents, send
from tests.eventually import eventually
from tests.lab import Lab, lab_page
from tests.test_browser_chat import Chat

# Real JupyterLab in Chromium: `pytest -m "not browser"` leaves these out. No test here runs
# code, so the kernel sessions attach to one real kernel per test process (tests/kernels.py).
pytestmark = [pytest.mark.browser, pytest.mark.shared_kernel]

PLUGIN = "jupyterlab-agent-review:plugin"

# The WCAG contrast of an element's text against the background it is drawn on: the first
# opaque background among its ancestors, with the translucent ones above it blended in.
# Chromium gives colours as rgb()/rgba(), or as color(srgb ...) for color-mix().
CONTRAST_JS = """
selectors => {
  const parse = value => {
    const m = value.match(/^rgba?\\(([^)]*)\\)$/);
    if (m) {
      const [r, g, b, a] = m[1].split(/[ ,\\/]+/).filter(Boolean).map(Number);
      return [r / 255, g / 255, b / 255, a === undefined ? 1 : a];
    }
    const c = value.match(/^color\\(srgb ([^)]*)\\)$/);
    if (c) {
      const [r, g, b, a] = c[1].split(/[ \\/]+/).filter(Boolean).map(Number);
      return [r, g, b, a === undefined ? 1 : a];
    }
    return null;
  };
  const over = (top, below) => {
    const a = top[3];
    return [0, 1, 2].map(i => top[i] * a + below[i] * (1 - a)).concat([1]);
  };
  const background = element => {
    const layers = [];
    for (let e = element; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c[3] > 0) {
        layers.push(c);
        if (c[3] >= 1) break;
      }
    }
    let color = [1, 1, 1, 1];
    for (const layer of layers.reverse()) color = over(layer, color);
    return color;
  };
  const luminance = c =>
    c.slice(0, 3)
      .map(v => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4))
      .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
  const out = {};
  for (const selector of selectors) {
    const element = document.querySelector(selector);
    if (!element || !element.getClientRects().length) {
      out[selector] = null;
      continue;
    }
    const bg = background(element);
    const fg = over(parse(getComputedStyle(element).color), bg);
    const [l1, l2] = [luminance(fg), luminance(bg)].sort((a, b) => b - a);
    out[selector] = {
      contrast: (l1 + 0.05) / (l2 + 0.05),
      text: luminance(fg),
      background: luminance(bg)
    };
  }
  return out;
}
"""

# Text a person reads: at least WCAG AA for normal text (4.5:1).
READ = [
    ".jp-Copilot-Header",
    ".jp-Copilot-Context .jp-Copilot-SectionTitle",
    ".jp-Copilot-PillLabel",
    ".jp-Copilot-ChatTitle",
    ".jp-Copilot-Message[data-role=user] .jp-Copilot-MessageText",
    ".jp-Copilot-Message[data-role=agent] .jp-Copilot-Reply",
    ".jp-Copilot-Composer textarea",
    ".jp-Copilot-AgentPicker",
    ".jp-Copilot-ModeSelect",
    ".jp-Copilot-Approvals .jp-Copilot-SectionTitle",
    ".jp-Copilot-ApprovalTool",
    ".jp-Copilot-ApprovalOperation",
]
# Secondary text and controls: at least 3:1 (WCAG AA for large text and UI components).
SEE = [
    ".jp-Copilot-PillMeta",
    ".jp-Copilot-AttachToggle",
    ".jp-Copilot-Stop",
    ".jp-Copilot-ApprovalOption[data-option-id='yes-once']",
    ".jp-Copilot-ApprovalOption[data-option-id='no']",
]


@pytest.fixture
def copilot_config(tmp_path: Path) -> dict[str, Any]:
    """Only the scripted agent."""
    return scripted_agents(tmp_path / "agent.jsonl")


async def change_theme(lab: Lab, theme: str) -> None:
    """Switch JupyterLab's theme as the Settings menu does, and wait until it applies."""
    light = "false" if "Dark" in theme else "true"
    await lab.page.evaluate(
        "theme => window.jupyterapp.commands.execute('apputils:change-theme', {theme})", theme
    )
    await lab.page.wait_for_function(
        "light => document.body.dataset.jpThemeLight === light", arg=light, timeout=30000
    )


async def open_settings_editor(lab: Lab) -> Any:
    """Open the Copilot section of JupyterLab's Settings Editor; return its form."""
    await lab.page.evaluate(
        "() => window.jupyterapp.commands.execute('settingeditor:open', {query: 'Copilot'})"
    )
    form = lab.page.locator(".jp-SettingsPanel")
    select = form.locator("select[id$='defaultMode']")
    await select.wait_for(state="visible", timeout=30000)
    return select


async def permission_card(lab: Lab, jp_fetch: Any) -> tuple[Any, asyncio.Task[Any]]:
    """Start a turn whose agent asks for permission, outside the panel; its card and turn."""
    conversation = await create(jp_fetch, agentId="scripted")
    turn = asyncio.create_task(send(jp_fetch, conversation, "permission"))
    card = lab.page.locator(".jp-Copilot-Approval[data-kind=permission]")
    await card.wait_for(state="attached", timeout=30000)
    return card, turn


async def allow(jp_fetch: Any, card: Any, turn: asyncio.Task[Any]) -> None:
    """Decide a permission card as its owner would, and let its turn end."""
    request_id = await card.get_attribute("data-request-id")
    status, body = await api(
        jp_fetch, "approvals", request_id, method="POST", body={"optionId": "yes-once"}
    )
    assert status == 200, body
    await asyncio.wait_for(turn, 30)


async def test_the_panel_reads_well_in_jupyterlab_dark(lab_server, jp_root_dir: Path) -> None:
    make_notebook(jp_root_dir, "dark.ipynb", ["import math", "print(math.pi)"])
    async with lab_page(lab_server) as lab:
        await change_theme(lab, "JupyterLab Dark")
        chat = Chat(lab)
        await chat.root.wait_for(state="visible")
        await lab.open("dark.ipynb")
        await lab.click_cell("dark.ipynb", 1)
        await lab.pill_of(1)
        await chat.choose_agent("scripted")
        await chat.send("Reply with the word received")
        await chat.idle()
        # An agent's own permission request: its card waits on top of the panel.
        await chat.send("permission")
        card = lab.page.locator(".jp-Copilot-Approval[data-kind=permission]")
        await card.wait_for(state="visible", timeout=30000)
        await lab.page.mouse.move(0, 0)

        seen = await lab.page.evaluate(CONTRAST_JS, [".jp-Copilot-Panel", *READ, *SEE])
        missing = [s for s in READ + SEE if seen[s] is None]
        assert not missing, f"not shown: {missing}"
        panel = seen[".jp-Copilot-Panel"]
        assert panel["background"] < 0.05, f"the panel is not dark: {panel}"
        for selector in READ:
            assert seen[selector]["contrast"] >= 4.5, (selector, seen[selector])
            # Light text on the dark panel, never dark text on a light patch.
            assert seen[selector]["text"] > seen[selector]["background"], selector
        for selector in SEE:
            assert seen[selector]["contrast"] >= 3, (selector, seen[selector])
        await lab.screenshot("copilot-panel-dark.png")

        await card.locator("[data-option-id='yes-once']").click()
        await card.wait_for(state="detached")
        await chat.idle()
        # Send, enabled once there is something to send.
        await lab.page.locator(".jp-Copilot-Composer textarea").fill("Thanks")
        send = (await lab.page.evaluate(CONTRAST_JS, [".jp-Copilot-Send"]))[".jp-Copilot-Send"]
        assert send["contrast"] >= 3, send


async def test_the_default_mode_in_the_settings_is_the_mode_of_a_new_conversation(
    lab_server,
) -> None:
    async with lab_page(lab_server) as lab:
        chat = Chat(lab)
        await chat.root.wait_for(state="visible")
        picker = lab.page.locator(".jp-Copilot-ModeSelect")

        async def mode_is(mode: str) -> bool:
            return await picker.input_value() == mode

        # The server's default until the person says otherwise.
        await eventually(lambda: mode_is("interactive"), "the server's default mode")
        select = await open_settings_editor(lab)
        await select.select_option(label="Plan")
        await eventually(lambda: mode_is("plan"), "the preferred mode, live")

        # A conversation keeps its mode; the next one takes the preference of then.
        await chat.choose_agent("scripted", chat_only=True)
        await chat.send("Reply with the word received")
        await chat.idle()
        await select.select_option(label="Autopilot")
        # Nothing shows that the panel has seen a change it must not apply: give it time.
        await lab.page.wait_for_timeout(300)
        assert await mode_is("plan")
        await lab.page.locator(".jp-Copilot-NewConversation").click()
        await eventually(lambda: mode_is("autopilot"), "the preferred mode in a new conversation")

        # A mode the person picks stays, whatever the preference says meanwhile.
        await chat.mode("interactive")
        await select.select_option(label="Plan")
        await lab.page.wait_for_timeout(300)
        assert await mode_is("interactive")


async def test_a_new_approval_card_opens_the_panel_unless_the_person_turned_that_off(
    lab_server, jp_fetch
) -> None:
    async with lab_page(lab_server) as lab:
        panel = lab.page.locator("#jupyter-copilot-panel")
        await panel.wait_for(state="visible")

        # By default a card that arrives shows the collapsed panel.
        await lab.page.evaluate("() => window.jupyterapp.shell.collapseRight()")
        await panel.wait_for(state="hidden")
        card, turn = await permission_card(lab, jp_fetch)
        await panel.wait_for(state="visible")
        await allow(jp_fetch, card, turn)

        # Turned off in the Settings Editor: the card waits in the collapsed panel.
        await open_settings_editor(lab)
        box = lab.page.locator(".jp-SettingsPanel input[id$='openPanelOnApproval']")
        assert await box.is_checked()
        await box.uncheck()

        async def saved() -> bool:
            response = await jp_fetch("lab", "api", "settings", PLUGIN)
            raw = json.loads(response.body)["raw"]
            return re.search(r'"openPanelOnApproval"\s*:\s*false', raw) is not None

        await eventually(saved, "the preference saved")
        await lab.page.evaluate("() => window.jupyterapp.shell.collapseRight()")
        await panel.wait_for(state="hidden")
        card, turn = await permission_card(lab, jp_fetch)
        # Nothing marks a reveal that did not happen: give it the time one takes.
        await lab.page.wait_for_timeout(500)
        assert not await panel.is_visible()
        await allow(jp_fetch, card, turn)


# The Attach button and the cell chips: small text (10.8 px to 13 px) a person reads and
# presses, so WCAG AA for normal text (4.5:1) in both themes.
CHIPS = [
    ".jp-Copilot-AttachToggle",
    ".jp-Copilot-ComposerAttachmentLabel",
    ".jp-Copilot-Message[data-role=user] .jp-Copilot-AttachmentChip",
]


async def test_the_attach_button_and_the_cell_chips_read_at_aa_in_light_and_dark(
    lab_server, jp_root_dir: Path
) -> None:
    make_notebook(jp_root_dir, "chips.ipynb", ["import math", "print(math.pi)"])
    async with lab_page(lab_server, width=1280) as lab:
        await lab.page.set_viewport_size({"width": 1280, "height": 800})
        chat = Chat(lab)
        await chat.root.wait_for(state="visible")
        await lab.open("chips.ipynb")
        await lab.click_cell("chips.ipynb", 1)
        await lab.pill_of(1)
        await chat.choose_agent("scripted", chat_only=True)
        toggle = lab.page.locator(".jp-Copilot-AttachToggle")
        await chat.send("Reply with the word received")
        await chat.idle()
        for theme in ("JupyterLab Light", "JupyterLab Dark"):
            await change_theme(lab, theme)
            await lab.page.wait_for_selector("#jupyterlab-splash", state="detached")
            # Not attached, then attached: the button in both of its states.
            if await toggle.get_attribute("aria-pressed") == "true":
                await toggle.click()
            await lab.page.mouse.move(0, 0)
            seen = await lab.page.evaluate(CONTRAST_JS, [CHIPS[0]])
            assert seen[CHIPS[0]]["contrast"] >= 4.5, (theme, "not attached", seen)
            await toggle.click()
            await lab.page.locator(CHIPS[1]).wait_for(state="visible")
            await lab.page.mouse.move(0, 0)
            if theme == "JupyterLab Light":
                # A message sent with the cell attached shows its chip.
                await chat.send("Reply with the word received")
                await chat.idle()
                await toggle.click()
                await lab.page.locator(CHIPS[1]).wait_for(state="visible")
            await lab.page.mouse.move(0, 0)
            seen = await lab.page.evaluate(CONTRAST_JS, CHIPS)
            for selector in CHIPS:
                assert seen[selector] is not None, (theme, selector)
                assert seen[selector]["contrast"] >= 4.5, (theme, selector, seen[selector])
            name = "copilot-chips" + ("-dark" if "Dark" in theme else "")
            await lab.screenshot(f"{name}.png")
        await change_theme(lab, "JupyterLab Light")
