"""The unit layer's fixtures: scenes (tests/unit/scene.py), each with a folder of its own."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.unit.scene import Scene


@pytest.fixture(scope="session")
def scenes_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder for every scene of the session (cheaper than a tmp_path per test)."""
    return tmp_path_factory.mktemp("scenes")


@pytest.fixture
def new_scene(scenes_root: Path) -> Callable[[], Scene]:
    """Builds a fresh scene, each with its own config folder for the kill switch."""
    return lambda: Scene(Path(tempfile.mkdtemp(dir=scenes_root)))


@pytest.fixture
def scene(new_scene: Callable[[], Scene]) -> Scene:
    """The server's collaborators with one page on ``a.ipynb``."""
    return new_scene()
