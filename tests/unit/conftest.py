"""The unit layer's fixture: one :class:`~tests.unit.scene.Scene` per test."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.scene import Scene


@pytest.fixture
def scene(tmp_path: Path) -> Scene:
    """The server's collaborators with one page on ``a.ipynb`` (tests/unit/scene.py)."""
    return Scene(tmp_path)
