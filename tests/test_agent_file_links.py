"""An agent's own file reads and writes never go through a link or a second hard link.

docs/security.md, "Smaller guarantees", and docs/protocol.md section 11: a file with more
than one hard link (``notes.txt`` that is also ``secret.ipynb``) is neither read nor written
(``not-permitted``); a link put in place after the path was checked is never followed
(``outside-root``); Keep compares and writes through one descriptor of the file. Without
the ``files`` grant, every read ends ``blocked`` before anything about the path is looked at.

A real server and the scripted ACP agent, which asks us over ACP to read and write files; the
JupyterLab page is scripted over the real bridge.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from jupyter_copilot.agents import diskfiles
from jupyter_copilot.agents.filereviews import FileReviews
from jupyter_copilot.protocol.refusals import Refusal
from tests.conversations import agent_log, api, create, scripted_agents, send
from tests.pages import ScriptedPage, next_of, notebook_state

NOTEBOOK = json.dumps({"cells": [], "metadata": {"canary": "secret-notebook-5e1"}})
NOTES = "first line\nsecond line\n"


@pytest.fixture
def log(tmp_path: Path) -> Path:
    """Where the scripted agent records what it received."""
    return tmp_path / "agent.jsonl"


@pytest.fixture
def copilot_config(log: Path) -> dict[str, Any]:
    """Only the scripted agent."""
    return scripted_agents(log)


@pytest.fixture
def tree(jp_root_dir: Path, tmp_path: Path) -> dict[str, Path]:
    """A notebook, a text file that is a second hard link to it, a plain text file, and a
    file outside the root."""
    (jp_root_dir / "secret.ipynb").write_text(NOTEBOOK, encoding="utf-8")
    os.link(jp_root_dir / "secret.ipynb", jp_root_dir / "notes-link.txt")
    (jp_root_dir / "notes.txt").write_text(NOTES, encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "elsewhere.txt").write_text(NOTES, encoding="utf-8")
    return {
        "notebook": jp_root_dir / "secret.ipynb",
        "link": jp_root_dir / "notes-link.txt",
        "notes": jp_root_dir / "notes.txt",
        "outside": outside / "elsewhere.txt",
    }


def last(log: Path, what: str) -> dict[str, Any]:
    return agent_log(log, what)[-1]  # type: ignore[no-any-return]


def refusal_of(log: Path, what: str) -> str | None:
    """The refusal code of the agent's last ``what`` request, ``None`` if it went through."""
    entry = last(log, what)
    return entry["code"] if entry["refused"] else None


def write(path: Any, content: str) -> str:
    return f"write {path} {json.dumps(content)}"


async def keep(jp_fetch: Any, review: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    return await api(
        jp_fetch, "file-reviews", review["reviewId"], method="POST", body={"decision": "keep"}
    )


# -- the grant comes first -------------------------------------------------------------------


async def test_without_the_grant_a_missing_and_an_existing_file_are_refused_alike(
    jp_fetch: Any, jp_root_dir: Path, tree: dict[str, Path], log: Path
) -> None:
    conversation = await create(jp_fetch, contextRefs=["selected_cell"])
    answers = []
    for path in (
        tree["notes"],
        jp_root_dir / "missing.txt",
        tree["outside"],
        tree["notebook"],
        jp_root_dir,
    ):
        await send(jp_fetch, conversation, f"read {path}")
        entry = last(log, "read")
        assert entry["refused"] and entry["code"] == "blocked", path
        answers.append(json.dumps({k: v for k, v in entry.items() if k != "path"}))
    # Not a word of difference between a file that exists, one that does not, one outside
    # the root, a notebook and a folder.
    assert len(set(answers)) == 1, answers


# -- hard links ------------------------------------------------------------------------------


async def test_a_hard_link_to_a_notebook_is_neither_read_nor_written(
    jp_fetch: Any, jp_ws_fetch: Any, tree: dict[str, Path], log: Path
) -> None:
    page = await ScriptedPage.connect(jp_ws_fetch, "p-1")
    await page.send_state(notebook_state("secret.ipynb"))
    conversation = await create(jp_fetch, contextRefs=["files"], mode="autopilot")
    events = await send(jp_fetch, conversation, f"read {tree['link']}")
    assert refusal_of(log, "read") == "not-permitted"
    assert "hard link" in json.dumps(events)
    assert "secret-notebook-5e1" not in log.read_text()
    assert "secret-notebook-5e1" not in json.dumps(events)

    await send(jp_fetch, conversation, write(tree["link"], "overwritten\n"))
    assert refusal_of(log, "write") == "not-permitted"
    assert tree["notebook"].read_text(encoding="utf-8") == NOTEBOOK
    # No review was opened: the next message of the page is the write of a plain file.
    await send(jp_fetch, conversation, write(tree["notes"], "agent\n"))
    review = (await next_of(page, "file-review"))["review"]
    assert review["path"] == "notes.txt"
    page.close()


async def test_keep_refuses_a_file_that_got_a_second_hard_link_after_the_proposal(
    jp_fetch: Any, jp_ws_fetch: Any, jp_root_dir: Path, tree: dict[str, Path], log: Path
) -> None:
    page = await ScriptedPage.connect(jp_ws_fetch, "p-1")
    await page.send_state(notebook_state("secret.ipynb"))
    conversation = await create(jp_fetch, mode="autopilot")
    await send(jp_fetch, conversation, write(tree["notes"], "agent\n"))
    review = (await next_of(page, "file-review"))["review"]
    # Same content, but now also another file's: Keep checks the opened file, not the name.
    os.link(tree["notes"], jp_root_dir / "another-name.txt")
    status, body = await keep(jp_fetch, review)
    assert (status, body["error"]["code"]) == (403, "not-permitted")
    assert tree["notes"].read_text(encoding="utf-8") == NOTES
    assert (await next_of(page, "file-review-ended"))["decision"] == "conflict"
    page.close()


async def test_keep_never_writes_through_a_link_put_in_place_after_the_proposal(
    jp_fetch: Any, jp_ws_fetch: Any, tree: dict[str, Path], log: Path
) -> None:
    page = await ScriptedPage.connect(jp_ws_fetch, "p-1")
    await page.send_state(notebook_state("secret.ipynb"))
    conversation = await create(jp_fetch, mode="autopilot")
    await send(jp_fetch, conversation, write(tree["notes"], "agent\n"))
    review = (await next_of(page, "file-review"))["review"]
    # The checked name now leads outside the root, to a file with the very same content.
    tree["notes"].unlink()
    tree["notes"].symlink_to(tree["outside"])
    status, body = await keep(jp_fetch, review)
    assert (status, body["error"]["code"]) == (403, "outside-root")
    assert tree["outside"].read_text(encoding="utf-8") == NOTES
    assert (await next_of(page, "file-review-ended"))["decision"] == "conflict"
    page.close()


# -- the descriptor checks, directly -----------------------------------------------------------


def test_a_folder_that_became_a_link_is_not_followed(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "a.txt").write_text("inside", encoding="utf-8")
    assert diskfiles.read_text(str(root), "sub/a.txt", 100) == "inside"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.txt").write_text("outside", encoding="utf-8")
    (root / "sub" / "a.txt").unlink()
    (root / "sub").rmdir()
    (root / "sub").symlink_to(outside, target_is_directory=True)
    for call in (
        lambda: diskfiles.read_text(str(root), "sub/a.txt", 100),
        lambda: diskfiles.write_text(
            str(root), "sub/a.txt", "x", diskfiles.text_hash("outside"), 100
        ),
        lambda: diskfiles.write_text(str(root), "sub/new.txt", "x", None, 100),
    ):
        with pytest.raises(Refusal) as refused:
            call()
        assert refused.value.code == "outside-root"
    assert (outside / "a.txt").read_text(encoding="utf-8") == "outside"
    assert sorted(p.name for p in outside.iterdir()) == ["a.txt"]


def test_a_link_where_a_new_file_goes_is_not_followed(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    target = tmp_path / "target.txt"
    (root / "new.txt").symlink_to(target)
    with pytest.raises(Refusal) as refused:
        diskfiles.write_text(str(root), "new.txt", "x", None, 100)
    assert refused.value.code == "outside-root"
    assert not target.exists()


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.txt")
    with pytest.raises(Refusal) as refused:
        diskfiles.read_text(str(tmp_path), "pipe.txt", 100)
    assert refused.value.code == "invalid-input"


def test_a_missing_file_or_folder_reads_as_none(tmp_path: Path) -> None:
    (tmp_path / "file.txt").write_text("x", encoding="utf-8")
    assert diskfiles.read_text(str(tmp_path), "missing.txt", 100) is None
    assert diskfiles.read_text(str(tmp_path), "missing/a.txt", 100) is None
    assert diskfiles.read_text(str(tmp_path), "file.txt/a.txt", 100) is None


async def test_a_file_the_server_cannot_open_is_a_refusal_not_an_error(tmp_path: Path) -> None:
    # As root nothing is unreadable; a name longer than the file system allows fails to
    # open just the same.
    class Contents:
        root_dir = str(tmp_path)

    reviews = FileReviews(lambda: Contents(), lambda: False)
    with pytest.raises(Refusal) as refused:
        await reviews.read("n" * 300 + ".txt")
    assert refused.value.code == "invalid-input"
    assert "cannot be read" in refused.value.message
