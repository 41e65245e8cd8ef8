"""Plots and images of an attached cell reach agents that take images, resized, and are
described to the others (docs/conversations.md, "Plots and images").

The server, the agent subprocess and ACP are real; the page is scripted over the real
bridge WebSocket and answers with real PNG and JPEG files made by Pillow.
"""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from jupyter_copilot.agents.images import ImageProblem, fit_image, image_blocks
from jupyter_copilot.mcp.tools import READ_CELLS
from jupyter_copilot.page.context import source_hash
from tests.conftest import make_notebook
from tests.conversations import agent_log, create, end_of, scripted_agents, send
from tests.mcpclient import read_cells_answer
from tests.pages import ScriptedPage, context_answer, notebook_state
from tests.server import start_session

pytestmark = pytest.mark.shared_kernel

SOURCE = "plt.plot(x)\n"
ALT = "<Figure size 4000x3000 with 1 Axes>"


def png(width: int, height: int) -> bytes:
    """A real PNG of that size, with some detail so it does not compress to nothing."""
    image = Image.new("RGB", (width, height), (240, 240, 240))
    for x in range(0, width, 50):
        for y in range(height):
            image.putpixel((x, y), (20, 60, 200))
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def jpeg(width: int, height: int) -> bytes:
    """A real JPEG of that size."""
    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(out, "JPEG")
    return out.getvalue()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


@pytest.fixture
def log(tmp_path: Path) -> Path:
    """Where the scripted agent records what it received."""
    return tmp_path / "agent.jsonl"


@pytest.fixture
def images_agent() -> bool:
    """Whether the scripted agent announces ``promptCapabilities.image``."""
    return True


@pytest.fixture
def max_pixels() -> int:
    """``CopilotApp.agent_image_max_pixels`` for the test."""
    return 1024


@pytest.fixture
def copilot_config(log: Path, images_agent: bool, max_pixels: int) -> dict[str, Any]:
    """Only the scripted agent, with or without images."""
    config = scripted_agents(log)
    if images_agent:
        config["agents"]["scripted"]["env"]["SCRIPTED_AGENT_IMAGES"] = "1"
    config["agent_image_max_pixels"] = max_pixels
    return config


async def attach_cell_with(
    jp_fetch: Any, jp_ws_fetch: Any, root: Path, copilot: Any, images: list[dict[str, Any]]
) -> tuple[ScriptedPage, dict[str, str]]:
    """``a.ipynb`` active in a scripted page whose first cell has ``images`` as outputs;
    the attachment of that cell."""
    import nbformat

    path = make_notebook(root, "a.ipynb", [SOURCE])
    await start_session(jp_fetch, "a.ipynb")
    cells = [
        {"cellId": c.id, "cellType": c.cell_type, "source": c.source}
        for c in nbformat.read(path, as_version=4).cells
    ]
    page = await ScriptedPage.connect(jp_ws_fetch, "p-1")
    await page.send_state(notebook_state("a.ipynb", selected=[cells[0]["cellId"]]))

    def respond(request: dict[str, Any]) -> dict[str, Any]:
        if request["action"] == READ_CELLS:
            answer = read_cells_answer(cells, request)
            if request["data"].get("includeImages"):
                answer["cells"][0]["images"] = images
            return answer
        return context_answer("a.ipynb", SOURCE, selected=[cells[0]["cellId"]])

    page.respond = respond
    attachment = {
        "artifactId": copilot.jupyter_server.artifact_id("a.ipynb"),
        "cellId": cells[0]["cellId"],
        "expectedSourceHash": source_hash(SOURCE),
    }
    return page, attachment


def prompt_blocks(log: Path) -> list[dict[str, Any]]:
    [prompt] = agent_log(log, "prompt")
    return list(prompt["blocks"])


def no_base64_in_text(blocks: list[dict[str, Any]], *payloads: str) -> None:
    for block in blocks:
        if block["type"] == "text":
            for payload in payloads:
                assert payload[:64] not in block["text"]


async def test_a_huge_png_reaches_an_image_agent_resized_to_the_limit_never_as_text(
    jp_fetch: Any, jp_ws_fetch: Any, jp_root_dir: Path, copilot: Any, log: Path
) -> None:
    huge = b64(png(4000, 3000))
    item = {"mime": "image/png", "bytes": len(huge) * 3 // 4, "alt": ALT, "data": huge}
    page, attachment = await attach_cell_with(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, [item])
    conversation = await create(jp_fetch, contextRefs=["selected_cell", "cell_outputs"])
    events = await send(
        jp_fetch, conversation, "reply plotted", page_id="p-1", attachment=attachment
    )
    assert end_of(events)["stopReason"] == "end_turn"
    blocks = prompt_blocks(log)
    assert [b["type"] for b in blocks] == ["text", "resource", "image"]
    image = blocks[2]
    assert image["mimeType"] == "image/png"
    with Image.open(io.BytesIO(base64.b64decode(image["data"]))) as sent:
        assert sent.format == "PNG"
        assert sent.size == (1024, 768)
    assert image["_meta"] == {
        "width": 1024,
        "height": 768,
        "originalWidth": 4000,
        "originalHeight": 3000,
    }
    no_base64_in_text(blocks, huge, image["data"])
    [request] = [r for r in page.requests if r["data"].get("includeImages")]
    assert request["data"]["includeOutputs"] is False
    # The turn as stored and listed holds no image.
    _, detail = await api_detail(jp_fetch, conversation)
    assert huge[:64] not in json.dumps(detail) and image["data"][:64] not in json.dumps(detail)


async def api_detail(jp_fetch: Any, conversation: str) -> tuple[int, dict[str, Any]]:
    from tests.conversations import api

    return await api(jp_fetch, "conversations", conversation)


@pytest.mark.parametrize("max_pixels", [200])
async def test_the_configured_limit_applies_and_a_jpeg_stays_a_jpeg(
    jp_fetch: Any, jp_ws_fetch: Any, jp_root_dir: Path, copilot: Any, log: Path
) -> None:
    small = b64(png(120, 80))
    photo = b64(jpeg(900, 1200))
    items = [
        {"mime": "image/png", "bytes": 1, "alt": "small", "data": small},
        {"mime": "image/jpeg", "bytes": 1, "alt": "photo", "data": photo},
    ]
    _, attachment = await attach_cell_with(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, items)
    conversation = await create(jp_fetch, contextRefs=["selected_cell", "cell_outputs"])
    await send(jp_fetch, conversation, "reply ok", page_id="p-1", attachment=attachment)
    blocks = prompt_blocks(log)
    assert [b["type"] for b in blocks] == ["text", "resource", "image", "image"]
    # An image within the limit is sent as it is, byte for byte.
    assert blocks[2]["data"] == small
    assert blocks[3]["mimeType"] == "image/jpeg"
    with Image.open(io.BytesIO(base64.b64decode(blocks[3]["data"]))) as sent:
        assert sent.format == "JPEG"
        assert sent.size == (150, 200)


async def test_a_corrupted_image_is_left_out_with_a_note_and_the_turn_goes_on(
    jp_fetch: Any, jp_ws_fetch: Any, jp_root_dir: Path, copilot: Any, log: Path
) -> None:
    broken = b64(png(300, 200)[:100] + b"\x00" * 400)
    items = [
        {"mime": "image/png", "bytes": 500, "alt": "broken plot", "data": broken},
        {"mime": "image/jpeg", "bytes": 9, "alt": "not base64", "data": "***"},
        {"mime": "image/png", "bytes": 12_000_000, "alt": "too big for the page"},
    ]
    _, attachment = await attach_cell_with(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, items)
    conversation = await create(jp_fetch, contextRefs=["selected_cell", "cell_outputs"])
    events = await send(jp_fetch, conversation, "reply fine", page_id="p-1", attachment=attachment)
    assert end_of(events)["stopReason"] == "end_turn"
    blocks = prompt_blocks(log)
    assert [b["type"] for b in blocks] == ["text", "resource", "text"]
    note = blocks[2]["text"].splitlines()
    assert note == [
        'Image 1 of the attached cell\'s outputs (image/png, 500 bytes), alt text "broken plot"; '
        "not sent: the data is not a readable image.",
        'Image 2 of the attached cell\'s outputs (image/jpeg, 9 bytes), alt text "not base64"; '
        "not sent: the data is not base64.",
        "Image 3 of the attached cell's outputs (image/png, 11719 KB), alt text "
        '"too big for the page"; not sent: it is larger than the page sends.',
    ]
    no_base64_in_text(blocks, broken)


@pytest.mark.parametrize("images_agent", [False])
async def test_an_agent_without_image_support_gets_the_size_and_alt_text(
    jp_fetch: Any, jp_ws_fetch: Any, jp_root_dir: Path, copilot: Any, log: Path
) -> None:
    data = b64(png(640, 480))
    item = {"mime": "image/png", "bytes": 1, "alt": ALT, "data": data}
    _, attachment = await attach_cell_with(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, [item])
    conversation = await create(jp_fetch, contextRefs=["selected_cell", "cell_outputs"])
    await send(jp_fetch, conversation, "reply ok", page_id="p-1", attachment=attachment)
    blocks = prompt_blocks(log)
    assert [b["type"] for b in blocks] == ["text", "resource", "text"]
    size = round(len(base64.b64decode(data)) / 1024)
    assert blocks[2]["text"] == (
        f"Image 1 of the attached cell's outputs (image/png, {size} KB, 640×480 px), alt text "
        f'"{ALT}".\nThis agent does not take images, so only these descriptions are sent.'
    )
    no_base64_in_text(blocks, data)


async def test_without_the_cell_outputs_grant_no_image_is_read_or_sent(
    jp_fetch: Any, jp_ws_fetch: Any, jp_root_dir: Path, copilot: Any, log: Path
) -> None:
    item = {"mime": "image/png", "bytes": 1, "alt": ALT, "data": b64(png(64, 64))}
    page, attachment = await attach_cell_with(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, [item])
    conversation = await create(jp_fetch, contextRefs=["selected_cell"])
    await send(jp_fetch, conversation, "reply ok", page_id="p-1", attachment=attachment)
    assert [b["type"] for b in prompt_blocks(log)] == ["text", "resource"]
    assert not [r for r in page.requests if r["data"].get("includeImages")]


# -- the pure part -----------------------------------------------------------------------------


def test_fit_image_refuses_data_that_is_not_the_type_it_claims() -> None:
    with pytest.raises(ImageProblem, match="not a PNG image"):
        fit_image(jpeg(10, 10), "image/png", 1024)


def test_fit_image_refuses_a_decompression_bomb_without_decoding_it() -> None:
    # 10,000 × 10,000 pixels of one colour: a small file that would take 300 MB decoded.
    with pytest.raises(ImageProblem, match="too large to decode"):
        fit_image(png(10_000, 10_000), "image/png", 1024)


def test_more_images_than_the_cap_are_described_not_sent() -> None:
    item = {"mime": "image/png", "bytes": 1, "alt": "", "data": b64(png(20, 20))}
    blocks = image_blocks([item] * 9, True, 1024)
    assert [b.type for b in blocks] == ["image"] * 8 + ["text"]
    assert "at most 8 images" in blocks[-1].text  # type: ignore[union-attr]


def test_the_model_agent_passes_images_to_its_model_as_binary_images() -> None:
    pytest.importorskip("pydantic_ai", reason="the models extra is not installed")
    from acp.schema import ImageContentBlock, TextContentBlock
    from pydantic_ai import BinaryContent

    from jupyter_copilot.model_agent.agent import prompt_content

    data = png(30, 20)
    content = prompt_content(
        [
            TextContentBlock(type="text", text="What is this?"),
            ImageContentBlock(type="image", mime_type="image/png", data=b64(data)),
        ]
    )
    assert content == ["What is this?", BinaryContent(data, media_type="image/png")]
    assert prompt_content([TextContentBlock(type="text", text="hi")]) == "hi"


def test_a_model_entry_with_images_false_makes_its_agent_announce_none() -> None:
    from jupyter_copilot.agents.models import parse_model
    from jupyter_copilot.model_agent.settings import from_environment

    entry = {"provider": "ollama", "base_url": "http://127.0.0.1:9/v1", "model": "m"}
    spec = parse_model("m", {**entry, "images": False})
    env = {k: str(v) for k, v in dict(spec.env).items()}
    assert from_environment(env).images is False
    default = {k: str(v) for k, v in dict(parse_model("m", entry).env).items()}
    assert from_environment(default).images is True
    with pytest.raises(Exception, match="'images' must be true or false"):
        parse_model("m", {**entry, "images": "yes"})
