"""The sandbox's command lines (agents/sandbox.py), checked without running bubblewrap."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from jupyter_copilot.agents.sandbox import AUTO, Sandbox, runtime_folders, wrap


def test_the_root_is_read_only_and_state_folders_stay_writable() -> None:
    argv = wrap("bwrap", ["agent", "--acp"], "/srv/root", ["/srv/root/.claude"])
    assert argv[:7] == ["bwrap", "--bind", "/", "/", "--ro-bind", "/srv/root", "/srv/root"]
    assert argv[argv.index("--bind", 2) + 1] == "/srv/root/.claude"
    assert argv[-3:] == ["--", "agent", "--acp"]


def test_a_hidden_root_is_an_empty_read_only_folder_with_the_runtime_shown_again() -> None:
    argv = wrap("bwrap", ["agent"], "/srv/root", [], hide_root=True, shown=["/srv/root/.venv"])
    text = " ".join(argv)
    assert "--tmpfs /srv/root --ro-bind /srv/root/.venv /srv/root/.venv" in text
    assert "--remount-ro /srv/root" in text
    assert "--ro-bind /srv/root /srv/root" not in text


def test_settings_folders_in_the_root_are_hidden(tmp_path: Path) -> None:
    (tmp_path / ".gemini").mkdir()
    (tmp_path / ".claude").mkdir()
    sandbox = Sandbox(AUTO, "bwrap", str(tmp_path))
    text = " ".join(sandbox.command([sys.executable], "/nonexistent-home", ()))
    assert f"--tmpfs {tmp_path / '.gemini'}" in text and f"--tmpfs {tmp_path / '.claude'}" in text
    # The agent's own state folder is never hidden: when the root is HOME, it is ~/.claude.
    text = " ".join(sandbox.command([sys.executable], str(tmp_path), (".claude",)))
    assert f"--tmpfs {tmp_path / '.claude'}" not in text
    assert f"--bind {tmp_path / '.claude'} {tmp_path / '.claude'}" in text


def test_an_agent_installed_in_node_modules_is_shown_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "node_modules" / "@scope" / "agent" / "dist"
    package.mkdir(parents=True)
    script = package / "index.js"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    bin_dir = tmp_path / "node_modules" / ".bin"
    bin_dir.mkdir()
    (bin_dir / "agent").symlink_to(script)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    assert str(tmp_path / "node_modules") in runtime_folders(["agent"])
    assert os.path.realpath(sys.prefix) in runtime_folders(["agent"])


def test_with_the_root_shown_every_notebook_in_it_is_an_empty_file(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.ipynb").write_text("{}")
    (tmp_path / "sub" / "B.IPYNB").write_text("{}")
    (tmp_path / "notes.txt").write_text("x")
    sandbox = Sandbox(AUTO, "bwrap", str(tmp_path))
    text = " ".join(sandbox.command(["agent"], "/nonexistent-home", ()))
    for notebook in (tmp_path / "a.ipynb", tmp_path / "sub" / "B.IPYNB"):
        assert f"--ro-bind /dev/null {notebook}" in text
    assert "notes.txt" not in text
    # Hidden whole, nothing to list one by one.
    text = " ".join(sandbox.command(["agent"], "/nonexistent-home", (), hide_root=True))
    assert "/dev/null" not in text


def test_too_many_notebooks_hide_the_whole_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("jupyter_copilot.agents.sandbox.MAX_HIDDEN_NOTEBOOKS", 3)
    for i in range(5):
        (tmp_path / f"n{i}.ipynb").write_text("{}")
    sandbox = Sandbox(AUTO, "bwrap", str(tmp_path))
    text = " ".join(sandbox.command(["agent"], "/nonexistent-home", ()))
    assert f"--tmpfs {tmp_path}" in text and "/dev/null" not in text
