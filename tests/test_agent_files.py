"""The pure rules for an agent's own file, shell and permission requests (agents/files.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jupyter_copilot.agents import files
from jupyter_copilot.protocol.refusals import Refusal


def code(call) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(Refusal) as e:
        call()
    return e.value.code


def test_paths_resolve_inside_the_root_after_symlinks(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "data").mkdir(parents=True)
    (root / "data" / "a.txt").write_text("a")
    outside = tmp_path / "secret.txt"
    outside.write_text("s")
    (root / "link-out").symlink_to(outside)
    (root / "link-in").symlink_to(root / "data" / "a.txt")
    (root / "dir-out").symlink_to(tmp_path)

    assert files.resolve(str(root), str(root / "data" / "a.txt")) == "data/a.txt"
    assert files.resolve(str(root), "data/a.txt") == "data/a.txt"
    assert files.resolve(str(root), str(root / "data" / "new.txt")) == "data/new.txt"
    assert files.resolve(str(root), str(root)) == ""
    # A symlink inside that points inside resolves to its target.
    assert files.resolve(str(root), str(root / "link-in")) == "data/a.txt"
    for escape in (
        str(outside),
        str(root / "link-out"),
        str(root / "dir-out" / "secret.txt"),
        str(root / ".." / "secret.txt"),
        "../secret.txt",
        "/etc/passwd",
        str(tmp_path / "root-sibling" / "x"),
    ):
        assert code(lambda p=escape: files.resolve(str(root), p)) == "outside-root", escape
    for bad in ("", "a\x00b", "x" * 5000):
        assert code(lambda p=bad: files.resolve(str(root), p)) == "invalid-input"


def test_a_root_reached_through_a_symlink_still_holds(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    alias = tmp_path / "alias"
    alias.symlink_to(real)
    assert files.resolve(str(alias), str(alias / "x.txt")) == "x.txt"
    assert files.resolve(str(alias), str(real / "x.txt")) == "x.txt"
    assert code(lambda: files.resolve(str(alias), str(tmp_path / "x.txt"))) == "outside-root"


def test_notebooks_are_never_files_whatever_the_case_or_the_link() -> None:
    for path in ("a.ipynb", "dir/B.IPYNB", f"x{os.sep}y.Ipynb"):
        assert code(lambda p=path: files.refuse_notebook(p)) == "notebook-file"
    # A link named like a text file that resolves to a notebook is a notebook.
    assert code(lambda: files.refuse_notebook("notes.txt", "real.ipynb")) == "notebook-file"
    files.refuse_notebook("notes.txt", "ipynb.txt", "a.ipynb.bak")
    with pytest.raises(Refusal) as e:
        files.refuse_notebook("a.ipynb")
    assert "notebook_edit_cell" in e.value.message


def test_reads_need_the_files_grant_and_no_chat_only() -> None:
    assert files.read_refusal(False, ["files"]) is None
    refused = [
        files.read_refusal(False, ["selected_cell", "active_notebook"]),
        files.read_refusal(False, []),
        files.read_refusal(True, ["files"]),
    ]
    assert [r.code for r in refused if r] == ["blocked"] * 3


def test_writes_are_refused_in_plan_and_chat_only() -> None:
    assert files.write_refusal(False, "interactive") is None
    assert files.write_refusal(False, "autopilot") is None
    assert [
        r.code
        for r in (files.write_refusal(False, "plan"), files.write_refusal(True, "autopilot"))
        if r
    ] == [
        "plan-mode",
        "plan-mode",
    ]


def test_shell_needs_ask_and_a_mode_that_edits() -> None:
    assert files.shell_refusal(False, "interactive", "ask") is None
    assert files.shell_refusal(False, "autopilot", "ask") is None
    for chat_only, mode, policy in (
        (False, "interactive", "never"),
        (False, "plan", "ask"),
        (True, "interactive", "ask"),
    ):
        refusal = files.shell_refusal(chat_only, mode, policy)
        assert refusal is not None and refusal.code == "not-permitted"


@pytest.mark.parametrize(
    ("chat_only", "mode", "kind", "rejected"),
    [
        (False, "plan", "edit", True),
        (False, "plan", "delete", True),
        (False, "plan", "move", True),
        (False, "plan", "execute", True),
        (False, "plan", "fetch", True),
        (False, "plan", "switch_mode", True),
        (False, "plan", None, True),
        (False, "plan", "other", True),
        (False, "plan", "read", False),
        (False, "plan", "search", False),
        (True, "interactive", "read", True),
        (True, "autopilot", "edit", True),
        (False, "interactive", "edit", False),
        (False, "autopilot", "execute", False),
    ],
)
def test_the_agents_own_requests_follow_the_mode(
    chat_only: bool, mode: str, kind: str | None, rejected: bool
) -> None:
    assert files.rejects_at_once(chat_only, mode, kind) is rejected


NAMES = ("context_snapshot", "notebook_read_selected_cell", "notebook_edit_cell")


@pytest.mark.parametrize(
    ("title", "kind", "ours"),
    [
        ("mcp__jupyter-copilot__notebook_edit_cell", "other", True),
        ("notebook_read_selected_cell (jupyter-copilot MCP Server)", None, True),
        ("mcp_jupyter-copilot_context_snapshot", "read", True),
        # A changing kind is never ours, whatever the title says.
        ("mcp__jupyter-copilot__notebook_edit_cell", "execute", False),
        ("mcp__jupyter-copilot__notebook_edit_cell", "edit", False),
        # Only exact titles: a command or another server that looks alike is not.
        ("mcp__jupyter-copilot__context_snapshot; rm -rf ~", "other", False),
        ("mcp__evil__notebook_edit_cell", "other", False),
        ("mcp__jupyter-copilot__shell", "other", False),
        ("NotebookEdit", "other", False),
        (None, None, False),
    ],
)
def test_only_our_own_mcp_tools_are_recognised_by_their_exact_titles(
    title: str | None, kind: str | None, ours: bool
) -> None:
    assert files.is_our_tool(title, kind, NAMES, "jupyter-copilot") is ours
