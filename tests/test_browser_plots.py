"""A matplotlib plot made in a real kernel reaches a multimodal model as an image within the
size limit: real JupyterLab in Chromium, a real ipykernel, the built-in model agent and the
scripted OpenAI-compatible endpoint on 127.0.0.1 (tests/scriptedmodel.py); docs/
conversations.md, "Plots and images"."""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_notebook
from tests.eventually import eventually
from tests.lab import lab_page
from tests.scriptedmodel import ScriptedModel
from tests.test_browser_chat import Chat
from tests.test_browser_mcp import open_notebook

pytest.importorskip("pydantic_ai", reason="the models extra is not installed")
pytest.importorskip("matplotlib", reason="the test extra is not installed")
Image = pytest.importorskip("PIL.Image", reason="the test extra is not installed")

pytestmark = pytest.mark.browser

#: A plot of 2000 × 1500 pixels (before matplotlib trims its margins).
PLOT = (
    "import matplotlib.pyplot as plt\n"
    "fig, ax = plt.subplots(figsize=(20, 15), dpi=100)\n"
    "ax.plot([1, 3, 2])\n"
    "plt.show()"
)


@pytest.fixture
def copilot_config(scripted_model: ScriptedModel) -> dict[str, Any]:
    """One model endpoint, the scripted one; outputs may be granted."""
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


def images_in(request: dict[str, Any]) -> list[tuple[str, bytes]]:
    """The images of a chat-completions request's user messages: MIME type and bytes."""
    found = []
    for message in request["messages"]:
        content = message.get("content")
        if message.get("role") != "user" or not isinstance(content, list):
            continue
        for part in content:
            if part.get("type") == "image_url":
                url = part["image_url"]["url"]
                head, _, data = url.partition(",")
                found.append((head.removeprefix("data:").split(";")[0], base64.b64decode(data)))
    return found


async def test_a_matplotlib_plot_reaches_a_multimodal_model_as_an_image_within_the_limit(
    lab_server: Any, jp_fetch: Any, jp_root_dir: Path, scripted_model: ScriptedModel
) -> None:
    scripted_model.script = ["A line that goes up, then down."]
    make_notebook(jp_root_dir, "plot.ipynb", [PLOT])
    async with lab_page(lab_server, width=1280) as lab:
        page = lab.page
        await page.set_viewport_size({"width": 1280, "height": 800})
        await open_notebook(lab, jp_fetch, "plot.ipynb")
        await lab.click_cell("plot.ipynb", 0)
        await page.keyboard.press("Control+Enter")
        plot = lab.notebook("plot.ipynb").locator(".jp-OutputArea-output img")
        await plot.wait_for(state="visible", timeout=60_000)

        chat = Chat(lab)
        await chat.choose_agent("team-model")
        await page.locator(".jp-Copilot-ContextPicker").click()
        popover = page.locator(".jp-Copilot-ContextPopover")
        await popover.wait_for(state="visible")
        outputs = popover.locator("input[data-context-ref='cell_outputs']")
        if not await outputs.is_checked():
            await outputs.click()
        await page.keyboard.press("Escape")
        await lab.click_cell("plot.ipynb", 0)
        toggle = page.locator(".jp-Copilot-Pill .jp-Copilot-AttachToggle")
        await toggle.click()
        await eventually(lambda: _text_is(toggle, "Attached"), "the Attached toggle")
        await chat.send("What does this plot show?")
        await chat.idle()
        assert "goes up, then down" in await chat.last_reply()
        await lab.screenshot("copilot-plot-to-model.png")
    scripted_model.check()

    [request] = scripted_model.requests
    [(mime, data)] = images_in(request)
    assert mime == "image/png"
    with Image.open(io.BytesIO(data)) as sent:
        assert sent.format == "PNG"
        # Made smaller to the limit (1024 px, the default), its proportions kept.
        assert max(sent.size) == 1024
        assert sent.size[1] < sent.size[0]
    # Never as base64 text: no text part of the request holds the image's data.
    encoded = base64.b64encode(data).decode()[:200]
    for message in request["messages"]:
        content = message.get("content")
        texts = (
            [content]
            if isinstance(content, str)
            else [p.get("text", "") for p in content or [] if isinstance(p, dict)]
        )
        assert not any(encoded in t for t in texts)


async def _text_is(locator: Any, expected: str) -> bool:
    return bool((await locator.inner_text()).strip() == expected)
