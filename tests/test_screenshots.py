"""Where the browser tests' screenshots go (tests/lab.py): a test run leaves the checkout
as it found it unless the docs' screenshots are asked for."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.lab import IMAGES, SCREENSHOTS_ENV, screenshots_dir


def test_a_test_run_keeps_its_screenshots_out_of_the_checkout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(SCREENSHOTS_ENV, raising=False)
    folder = screenshots_dir()
    assert folder.is_dir()
    checkout = Path(__file__).resolve().parent.parent
    assert not folder.resolve().is_relative_to(checkout)


def test_the_docs_screenshots_are_retaken_when_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SCREENSHOTS_ENV, "docs")
    assert screenshots_dir() == IMAGES
