"""Shared fixtures: a real Jupyter server with jupyter-copilot and the file-ID service."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from traitlets.config import Config

pytest_plugins = ("pytest_jupyter.jupyter_server",)

DATA = Path(__file__).parent / "data"


@pytest.fixture
def copilot_config() -> dict[str, Any]:
    """Extra ``CopilotApp`` settings for one test; override or update it in a test module."""
    return {}


@pytest.fixture
def jp_server_config(tmp_path: Path, copilot_config: dict[str, Any]) -> Config:
    """Enable jupyter-copilot and the file-ID service, with a database under the test dir."""
    return Config(
        {
            "ServerApp": {
                "jpserver_extensions": {"jupyter_copilot": True, "jupyter_server_fileid": True},
            },
            "BaseFileIdManager": {"db_path": str(tmp_path / "file_id.db")},
            "CopilotApp": copilot_config,
        }
    )


@pytest.fixture
def copilot(jp_serverapp: Any) -> Any:
    """The running ``CopilotApp``."""
    return jp_serverapp.web_app.settings["jupyter_copilot"]


def make_notebook(root: Path, name: str, sources: list[str], language: str = "python") -> Path:
    """Write a real notebook with one code cell per source and a python3 kernelspec."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": language,
    }
    nb.metadata["language_info"] = {"name": language}
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def load_json(name: str) -> Any:
    """A JSON file from ``tests/data``."""
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test of a module that opens JupyterLab in Chromium carries the ``browser`` mark,
    so that ``pytest -m "not browser"`` runs everything else."""
    from tests.lab import lab_page

    unmarked = sorted(
        {
            item.nodeid.split("::")[0]
            for item in items
            if getattr(getattr(item, "module", None), "lab_page", None) is lab_page
            and item.get_closest_marker("browser") is None
        }
    )
    if unmarked:
        raise pytest.UsageError(
            "These modules open Chromium but lack `pytestmark = pytest.mark.browser`: "
            + ", ".join(unmarked)
        )
