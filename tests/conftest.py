"""Shared test setup: the fixtures of each layer, as plugins, and helpers for notebooks and data.

Fixtures live in tests/fixtures/ by layer: ``unit`` (no Jupyter server), ``server``
(pytest-jupyter's Jupyter server with jupyter-copilot and the file-ID service) and
``browser`` (JupyterLab in Chromium, for tests marked ``browser``). Tests use them by name.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat

pytest_plugins = (
    "pytest_jupyter.jupyter_server",
    "tests.fixtures.unit",
    "tests.fixtures.server",
    "tests.fixtures.browser",
)

DATA = Path(__file__).parent / "data"


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
