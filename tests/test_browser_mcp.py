"""An outside MCP client against real JupyterLab: approval cards, reviews and paged reads.

The MCP client is the real SDK over HTTP with the person's Jupyter token; the page is real
JupyterLab in Debian's Chromium.
"""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

import nbformat
import pytest

from jupyter_copilot.page.context import entry_size, source_hash
from tests.conftest import make_notebook
from tests.eventually import eventually
from tests.lab import Lab, lab_page
from tests.mcpclient import mcp_client, mcp_url, refusal_code, structured
from tests.server import registrations

# Real JupyterLab in Chromium: `pytest -m "not browser"` leaves these out. No test here runs
# code, so the kernel sessions attach to one real kernel per test process (tests/kernels.py).
pytestmark = [pytest.mark.browser, pytest.mark.shared_kernel]

CANARY = "canary-91e4-never-in-the-card"
OLD = "def total(xs):\n    return sum(xs)\n"
NEW = f"def total(xs):\n    # {CANARY}\n    return sum(x for x in xs if x is not None)\n"
CELLS = ["import os", OLD, "total([1, 2])"]


@pytest.fixture
def copilot_config() -> dict[str, Any]:
    """Outside clients may read everything here; approvals stay interactive."""
    return {"external_context_refs": ["selected_cell", "active_notebook", "cell_outputs"]}


def url_of(server: Any) -> str:
    return mcp_url(server.port, server.base_url)


def token_of(server: Any) -> dict[str, str]:
    return {"Authorization": f"token {server.identity_provider.token}"}


async def open_notebook(lab: Lab, jp_fetch: Any, path: str) -> None:
    """Open a notebook and wait until its kernel session holds the edit tool."""
    await lab.open(path)

    async def registered() -> bool:
        return any(r["path"] == path for r in await registrations(jp_fetch))

    await eventually(registered, "the kernel session's registration", timeout=30)


async def read_selected(client: Any, lab: Lab, path: str, index: int) -> dict[str, Any]:
    """Click a cell and read it over MCP once the page serves it."""
    await lab.click_cell(path, index)
    cell_id = await lab.notebook(path).locator(".jp-Cell").nth(index).get_attribute("data-cell-id")

    async def served() -> dict[str, Any] | None:
        cell = structured(await client.call_tool("notebook_read_selected_cell", {}))["cell"]
        return cell if cell and cell_id in (None, cell["cellId"]) else None

    return await eventually(served, f"cell {index} over MCP")  # type: ignore[no-any-return]


async def model_source(lab: Lab, cell_id: str) -> str:
    return await lab.page.evaluate(  # type: ignore[no-any-return]
        """cellId => {
            const nb = window.jupyterapp.shell.currentWidget.content;
            const cell = [...nb.model.cells].find(c => c.id === cellId);
            return cell ? cell.sharedModel.getSource() : null;
        }""",
        cell_id,
    )


async def read_cells(client: Any, args: dict[str, Any]) -> Any:
    """``notebook_read_cells`` once the server knows the page's active notebook: the page
    reports a newly opened notebook in its next state message, and a read that arrives
    before it is refused as not a notebook (``not-authoring-view``)."""

    async def answered() -> Any:
        result = await client.call_tool("notebook_read_cells", args)
        if result.is_error and refusal_code(result) == "not-authoring-view":
            return None
        return result

    return await eventually(answered, "a read of the opened notebook")


def edit_of(cell: dict[str, Any], new_source: str = NEW) -> dict[str, Any]:
    return {
        "artifactId": cell["artifactId"],
        "cellId": cell["cellId"],
        "expectedSourceHash": cell["expectedSourceHash"],
        "newSource": new_source,
    }


async def allow_then_keep(lab: Lab, card: Any, call: Any, cell: dict[str, Any]) -> Any:
    """Allow the edit's card: the review opens on the unchanged cell, and Keep applies it.
    Returns the call's result."""
    await card.locator(".jp-Copilot-ApprovalAllow").click()
    result = structured(await asyncio.wait_for(call, 15))
    assert result["diffReviewOpened"] is True
    review = lab.page.locator(".jp-Copilot-Review")
    await review.wait_for(state="visible")
    assert await model_source(lab, cell["cellId"]) == OLD
    await review.locator(".jp-Copilot-ReviewKeep").click()
    await review.wait_for(state="detached")
    assert await model_source(lab, cell["cellId"]) == NEW
    return result


async def test_an_outside_client_edit_waits_for_the_card_then_opens_the_review(
    lab_server, jp_fetch, jp_root_dir
) -> None:
    make_notebook(jp_root_dir, "analysis.ipynb", CELLS)
    async with (
        lab_page(lab_server) as lab,
        mcp_client(url_of(lab_server), token_of(lab_server)) as client,
    ):
        await open_notebook(lab, jp_fetch, "analysis.ipynb")
        cell = await read_selected(client, lab, "analysis.ipynb", 1)
        assert cell["source"] == OLD
        call = asyncio.ensure_future(client.call_tool("notebook_edit_cell", edit_of(cell)))
        card = lab.page.locator(".jp-Copilot-Approval")
        await card.wait_for(state="visible")
        assert await card.get_attribute("data-state") == "pending"
        text = await card.inner_text()
        # The tool in plain words; its name is the tooltip.
        assert "Propose a whole-cell edit" in text
        tool = card.locator(".jp-Copilot-ApprovalTool")
        assert await tool.get_attribute("title") == "notebook_edit_cell"
        assert "analysis.ipynb" in text and "Cell 2 of 3" in text
        assert f"{len(NEW.encode())} bytes" in text
        # Metadata only: nothing of the proposal reaches the card.
        html = await card.evaluate("node => node.outerHTML")
        assert CANARY not in html and "sum(x for x" not in html
        assert not call.done()
        assert await lab.page.locator(".jp-Copilot-Review").count() == 0
        await lab.screenshot("copilot-approval-card.png")

        result = await allow_then_keep(lab, card, call, cell)
        await card.wait_for(state="detached")
        assert result["sourceHashAfter"] == source_hash(NEW)


#: The lab extension's files the page has loaded so far.
LOADED_JS = """() => performance.getEntriesByType('resource').map(e => e.name)
    .filter(n => n.includes('/lab/extensions/jupyterlab-agent-review/'))"""


async def test_with_the_panel_never_opened_a_card_loads_it_and_the_review_follows(
    lab_server, jp_fetch, jp_root_dir
) -> None:
    make_notebook(jp_root_dir, "analysis.ipynb", CELLS)
    async with (
        lab_page(lab_server, open_panel=False) as lab,
        mcp_client(url_of(lab_server), token_of(lab_server)) as client,
    ):
        await open_notebook(lab, jp_fetch, "analysis.ipynb")
        # At start the panel is its tab only: its parts are neither loaded nor shown.
        panel = lab.page.locator("#jupyter-copilot-panel")
        assert not await panel.is_visible()
        assert await panel.locator(".jp-Copilot-Context, .jp-Copilot-Approvals").count() == 0
        at_start = set(await lab.page.evaluate(LOADED_JS))
        # Reading needs none of them: the page's start serves the context.
        cell = await read_selected(client, lab, "analysis.ipynb", 1)
        assert set(await lab.page.evaluate(LOADED_JS)) == at_start

        # The approval message comes before the parts that show it: the page holds it,
        # loads them, and the card shows in the panel, which opens for it.
        call = asyncio.ensure_future(client.call_tool("notebook_edit_cell", edit_of(cell)))
        card = lab.page.locator(".jp-Copilot-Approval")
        await card.wait_for(state="visible")
        assert await panel.is_visible()
        assert set(await lab.page.evaluate(LOADED_JS)) > at_start
        await allow_then_keep(lab, card, call, cell)


@pytest.mark.parametrize("key", ["Enter", "Escape"])
async def test_deny_from_the_keyboard_ends_the_call_and_opens_nothing(
    lab_server, jp_fetch, jp_root_dir, key: str
) -> None:
    make_notebook(jp_root_dir, "a.ipynb", CELLS)
    async with (
        lab_page(lab_server) as lab,
        mcp_client(url_of(lab_server), token_of(lab_server)) as client,
    ):
        await open_notebook(lab, jp_fetch, "a.ipynb")
        cell = await read_selected(client, lab, "a.ipynb", 1)
        call = asyncio.ensure_future(client.call_tool("notebook_edit_cell", edit_of(cell)))
        card = lab.page.locator(".jp-Copilot-Approval")
        await card.wait_for(state="visible")
        if key == "Enter":
            await card.locator(".jp-Copilot-ApprovalDeny").focus()
        else:
            await card.locator(".jp-Copilot-ApprovalAllow").focus()
        await lab.page.keyboard.press(key)
        result = await asyncio.wait_for(call, 15)
        assert refusal_code(result) == "denied"
        await card.wait_for(state="detached")
        assert await lab.page.locator(".jp-Copilot-Review").count() == 0
        assert await model_source(lab, cell["cellId"]) == OLD


async def test_a_2000_cell_notebook_reads_from_the_live_page_in_pages_within_budget(
    lab_server, jp_fetch, jp_root_dir, copilot
) -> None:
    sources = [f"v{i} = {i}  # é\n" for i in range(2000)]
    sources[1500] = "big = '" + "y" * 10000 + "'"
    path = make_notebook(jp_root_dir, "big.ipynb", sources)
    ids = [c.id for c in nbformat.read(path, as_version=4).cells]
    budget = copilot.context_budget_bytes
    async with (
        lab_page(lab_server) as lab,
        mcp_client(url_of(lab_server), token_of(lab_server)) as client,
    ):
        await lab.open("big.ipynb")
        # An unsaved edit in the page is what the agent reads, not the file.
        await lab.page.evaluate(
            """() => {
                const nb = window.jupyterapp.shell.currentWidget.content;
                nb.model.cells.get(3).sharedModel.setSource('live = True\\n');
            }"""
        )
        sources[3] = "live = True\n"
        pages: list[dict[str, Any]] = []
        cursor = None
        while True:
            args = {"cursor": cursor} if cursor else {}
            result = await read_cells(client, args)
            page = structured(result)
            assert len(result.content[0].text.encode("utf-8")) <= budget
            assert entry_size(page) <= budget
            pages.append(page)
            cursor = page["nextCursor"]
            if cursor is None:
                break
    cells = [c for p in pages for c in p["cells"]]
    assert [c["cellId"] for c in cells] == ids
    assert [c["index"] for c in cells] == list(range(2000))
    assert cells[1500]["omitted"]["reason"] == "over-budget"
    assert "source" not in cells[1500]
    for cell in cells:
        if cell["index"] != 1500:
            assert cell["source"] == sources[cell["index"]]
            assert cell["expectedSourceHash"] == source_hash(sources[cell["index"]])
    assert all(p["cellCount"] == 2000 for p in pages)


PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(1000)).decode()


def notebook_with_outputs(root: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.metadata["widgets"] = {
        "application/vnd.jupyter.widget-state+json": {
            "version_major": 2,
            "version_minor": 0,
            "state": {
                "m-1": {
                    "model_name": "IntSliderModel",
                    "model_module": "@jupyter-widgets/controls",
                    "model_module_version": "2.0.0",
                    "state": {},
                }
            },
        }
    }
    cell = nbformat.v4.new_code_cell("plot()")
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="hello\n"),
        nbformat.v4.new_output(
            "display_data", data={"image/png": PNG, "text/plain": "<Figure size 640x480>"}
        ),
        nbformat.v4.new_output(
            "display_data",
            data={
                "application/vnd.jupyter.widget-view+json": {
                    "model_id": "m-1",
                    "version_major": 2,
                    "version_minor": 0,
                },
                "text/plain": "IntSlider(value=0)",
            },
        ),
        nbformat.v4.new_output("error", ename="ValueError", evalue="bad", traceback=["..."]),
    ]
    nb.cells = [cell, nbformat.v4.new_markdown_cell("# Notes")]
    nbformat.write(nb, root / "out.ipynb")


async def test_outputs_are_read_as_summaries_from_the_live_page(
    lab_server, jp_fetch, jp_root_dir
) -> None:
    notebook_with_outputs(jp_root_dir)
    async with (
        lab_page(lab_server) as lab,
        mcp_client(url_of(lab_server), token_of(lab_server)) as client,
    ):
        await lab.open("out.ipynb")
        page = structured(await read_cells(client, {"includeOutputs": True}))
    code, markdown = page["cells"]
    assert "outputs" not in markdown
    assert code["outputs"] == [
        {"outputType": "stream", "name": "stdout", "text": "hello\n"},
        {
            "outputType": "display_data",
            "data": {"image/png": {"bytes": 1008}, "text/plain": {"text": "<Figure size 640x480>"}},
        },
        {
            "outputType": "display_data",
            "data": {
                "application/vnd.jupyter.widget-view+json": {
                    "modelId": "m-1",
                    "widgetType": "IntSliderModel",
                },
                "text/plain": {"text": "IntSlider(value=0)"},
            },
        },
        {"outputType": "error", "ename": "ValueError", "evalue": "bad"},
    ]
    assert PNG not in json.dumps(page)
