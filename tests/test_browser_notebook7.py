"""Jupyter Notebook 7 (the `notebook` extra): the Copilot panel in its right sidebar, whole,
and the review loop of JupyterLab, on Notebook 7's own notebook page."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_notebook
from tests.lab import lab_page, lab_server_config

# Real JupyterLab in Chromium: `pytest -m "not browser"` leaves these out. No test here runs
# code, so the kernel sessions attach to one real kernel per test process (tests/kernels.py).
pytestmark = [pytest.mark.browser, pytest.mark.shared_kernel]

FUNCTIONS = "def total(xs):\n    return sum(xs)"
SOURCE_JS = (
    "() => window.jupyterapp.shell.currentWidget.content.model.cells.get(0).sharedModel.getSource()"
)


@pytest.fixture
def lab_config(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, copilot_config: dict[str, Any]
) -> dict[str, Any]:
    """JupyterLab's test config, with every extension it ships, and Notebook 7's server
    extension, its settings and workspaces under the test's folder like JupyterLab's."""
    config = lab_server_config(
        tmp_path, tmp_path_factory.getbasetemp(), copilot_config, every_extension=True
    )
    config["ServerApp"]["jpserver_extensions"]["notebook"] = True
    shared = ("extra_labextensions_path", "user_settings_dir", "workspaces_dir")
    config["JupyterNotebookApp"] = {k: config["LabApp"][k] for k in shared}
    config["JupyterNotebookApp"]["expose_app_in_browser"] = True
    return config


async def test_in_notebook_7_the_panel_fits_its_sidebar_and_an_edit_waits_for_keep(
    lab_server: Any, jp_root_dir: Path
) -> None:
    pytest.importorskip("notebook", reason="Notebook 7 comes with the `notebook` extra")
    path = make_notebook(jp_root_dir, "nb7.ipynb", [FUNCTIONS])
    before = path.read_text()
    async with lab_page(lab_server, "nb7.ipynb", width=1280, notebook7=True) as lab:
        page = lab.page
        assert "/notebooks/nb7.ipynb" in page.url
        # As a person asks about a cell: its context menu opens the panel with it attached.
        editor = page.locator(".jp-Notebook .jp-CodeCell .jp-InputArea-editor").first
        await editor.click()
        await editor.click(button="right")
        await page.locator(".lm-Menu-itemLabel", has_text="Ask Copilot About This Cell").click()
        box = page.locator(".jp-Copilot-Composer textarea")
        await box.wait_for(state="visible")
        # The panel is whole: nothing of it is past the window's right edge.
        panel = await page.locator("#jupyter-copilot-panel").bounding_box()
        assert panel is not None and panel["width"] >= 360
        assert panel["x"] + panel["width"] <= 1280 + 0.5, panel
        await box.fill("add docstrings")
        await box.press("Enter")
        allow = page.get_by_role("button", name=re.compile("Allow once"))
        await allow.first.wait_for(state="visible")
        assert await page.evaluate(SOURCE_JS) == FUNCTIONS
        await allow.first.click()
        review = page.locator(".jp-Copilot-Review")
        await review.wait_for(state="visible")
        await review.scroll_into_view_if_needed()
        await lab.screenshot("copilot-notebook7.png")
        # Under review, nothing has changed: not the live cell, not the file.
        assert await page.evaluate(SOURCE_JS) == FUNCTIONS
        assert path.read_text() == before
        await review.locator(".jp-Copilot-ReviewKeep").click()
        await review.wait_for(state="detached")
        kept = await page.evaluate(SOURCE_JS)
        assert kept.startswith('def total(xs):\n    """') and kept.endswith("return sum(xs)")
