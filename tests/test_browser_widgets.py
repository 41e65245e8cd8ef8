"""A live ipywidgets view, read over MCP as its widget type and model id.

The kernel runs real ipywidgets and JupyterLab runs the real widget manager; nothing is
saved, so the widget type can only come from the live manager in the page.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_notebook
from tests.eventually import eventually
from tests.lab import lab_page, lab_server_config, widgets_labextensions_dir
from tests.mcpclient import mcp_client, mcp_url, structured

# Real JupyterLab in Chromium: `pytest -m "not browser"` leaves these out.
pytestmark = pytest.mark.browser


@pytest.fixture
def jp_server_config(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """JupyterLab with jupyter-copilot and the ipywidgets manager; outputs may be read."""
    config = lab_server_config(
        tmp_path,
        tmp_path_factory.getbasetemp(),
        {"external_context_refs": ["active_notebook", "cell_outputs"]},
    )
    shared = widgets_labextensions_dir(tmp_path_factory.getbasetemp())
    config["LabApp"]["extra_labextensions_path"].append(str(shared))
    return config


async def test_a_live_widget_is_read_as_its_type_and_model_id(lab_server, jp_root_dir) -> None:
    make_notebook(
        jp_root_dir,
        "w.ipynb",
        ["import ipywidgets as widgets\nwidgets.IntSlider(value=3, description='canary-w')"],
    )
    headers = {"Authorization": f"token {lab_server.identity_provider.token}"}
    url = mcp_url(lab_server.port, lab_server.base_url)
    async with lab_page(lab_server) as lab, mcp_client(url, headers) as client:
        await lab.open("w.ipynb")
        await lab.click_cell("w.ipynb", 0)
        await lab.page.evaluate(
            """async () => {
                const panel = window.jupyterapp.shell.currentWidget;
                await panel.sessionContext.ready;
                await window.jupyterapp.commands.execute('notebook:run-cell');
            }"""
        )
        await lab.page.wait_for_selector(".widget-slider", timeout=60000)

        async def widget_output() -> dict[str, Any] | None:
            page = structured(
                await client.call_tool("notebook_read_cells", {"includeOutputs": True})
            )
            for output in page["cells"][0].get("outputs", []):
                view = output.get("data", {}).get("application/vnd.jupyter.widget-view+json")
                if view is not None:
                    return output  # type: ignore[no-any-return]
            return None

        output = await eventually(widget_output, "the widget's output over MCP", timeout=30)
    view = output["data"]["application/vnd.jupyter.widget-view+json"]
    assert view["widgetType"] == "IntSliderModel"
    assert len(view["modelId"]) >= 16
    assert output["data"]["text/plain"]["text"].startswith("IntSlider(")
    # The slider is the cell's value: an execute_result with its execution count.
    assert output["outputType"] == "execute_result"
    assert output["executionCount"] == 1
