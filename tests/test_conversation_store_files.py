"""The conversation store is the server user's own: no links, no one else's, no one else's writes.

docs/security.md, "Smaller guarantees": a store file or folder planted by someone else (a
symbolic link to a file elsewhere, a file or folder other users may write, a file of another
user, a second hard link) is refused before SQLite opens anything. The store stays off, the
planted files are left untouched, and an error names the problem without the path. The tests
run as root, so another user's file is simulated by handing it to uid 65534 (``nobody``).
"""

from __future__ import annotations

import logging
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from jupyter_copilot.agents.store import ConversationStore
from tests.conversations import api, create, scripted_agents

NOBODY = 65534
CONTENT = b"the target of a planted link, which the store must never write"


def open_store(path: Path, caplog: pytest.LogCaptureFixture) -> tuple[ConversationStore, str]:
    """A store at ``path`` that tried to save a conversation; the one error it logged."""
    with caplog.at_level(logging.DEBUG, logger="test-store-files"):
        store = ConversationStore(str(path), logging.getLogger("test-store-files"))
        store.save("owner", {"id": "c1"}, [(0, {"reply": "private"})])
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1, errors
    assert [r for r in caplog.records if r.levelno == logging.WARNING] == []
    return store, errors[0]


def assert_refused(store: ConversationStore, error: str, why: str, secret: str) -> None:
    """The store is off, says why at ERROR, and the log names no path."""
    assert not store.available and store.load() == []
    assert store.problem is not None and why in store.problem
    assert why in error and "not stored" in error
    assert secret not in error
    store.close()


def test_a_new_store_is_0600_in_a_0700_folder(tmp_path: Path) -> None:
    path = tmp_path / "new-folder" / "c.db"
    store = ConversationStore(str(path), logging.getLogger("test-store-files"))
    store.save("owner", {"id": "c1"}, [(0, {"reply": "x"})])
    assert store.available
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700
    store.close()


def test_a_symlink_at_the_path_is_refused_and_its_target_never_written(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    elsewhere = tmp_path / "elsewhere-secret"
    elsewhere.mkdir()
    target = elsewhere / "target.db"
    target.write_bytes(CONTENT)
    folder = tmp_path / "store"
    folder.mkdir(mode=0o700)
    (folder / "c.db").symlink_to(target)
    store, error = open_store(folder / "c.db", caplog)
    assert_refused(store, error, "its file is a symbolic link", "elsewhere-secret")
    assert target.read_bytes() == CONTENT
    assert (folder / "c.db").is_symlink()
    assert sorted(p.name for p in folder.iterdir()) == ["c.db"]


def test_a_dangling_symlink_at_the_path_creates_nothing_where_it_points(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    target = tmp_path / "elsewhere-secret.db"
    folder = tmp_path / "store"
    folder.mkdir(mode=0o700)
    (folder / "c.db").symlink_to(target)
    store, error = open_store(folder / "c.db", caplog)
    assert_refused(store, error, "its file is a symbolic link", "elsewhere-secret")
    assert not target.exists()


def test_a_symlinked_folder_is_refused(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    real = tmp_path / "elsewhere-secret"
    real.mkdir(mode=0o700)
    (tmp_path / "store").symlink_to(real, target_is_directory=True)
    store, error = open_store(tmp_path / "store" / "c.db", caplog)
    assert_refused(store, error, "its folder is a symbolic link", "elsewhere-secret")
    assert list(real.iterdir()) == []


def test_a_file_others_may_write_is_refused_and_left_as_it_is(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "secret-folder"
    folder.mkdir(mode=0o700)
    path = folder / "c.db"
    with sqlite3.connect(path) as planted:
        planted.execute("CREATE TABLE planted (x)")
    planted.close()
    path.chmod(0o666)
    before = path.read_bytes()
    store, error = open_store(path, caplog)
    assert_refused(store, error, "its file can be written by other users", "secret-folder")
    assert path.stat().st_mode & 0o777 == 0o666
    assert path.read_bytes() == before


def test_a_folder_others_may_write_is_refused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "secret-folder"
    folder.mkdir()
    folder.chmod(0o777)
    store, error = open_store(folder / "c.db", caplog)
    assert_refused(store, error, "its folder can be written by other users", "secret-folder")
    assert list(folder.iterdir()) == []


def test_a_file_of_another_user_is_refused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "secret-folder"
    folder.mkdir(mode=0o700)
    path = folder / "c.db"
    path.write_bytes(b"")
    path.chmod(0o600)
    os.chown(path, NOBODY, NOBODY)
    store, error = open_store(path, caplog)
    assert_refused(store, error, "its file belongs to another user", "secret-folder")
    assert path.stat().st_size == 0 and path.stat().st_uid == NOBODY


def test_a_folder_of_another_user_is_refused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "secret-folder"
    folder.mkdir(mode=0o700)
    os.chown(folder, NOBODY, NOBODY)
    store, error = open_store(folder / "c.db", caplog)
    assert_refused(store, error, "its folder belongs to another user", "secret-folder")
    assert list(folder.iterdir()) == []


def test_a_file_with_another_hard_link_is_refused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "secret-folder"
    folder.mkdir(mode=0o700)
    other = tmp_path / "other.db"
    other.write_bytes(b"")
    other.chmod(0o600)
    os.link(other, folder / "c.db")
    store, error = open_store(folder / "c.db", caplog)
    assert_refused(store, error, "its file has other hard links", "secret-folder")
    assert other.stat().st_size == 0


@pytest.mark.parametrize("suffix", ["-journal", "-wal"])
def test_a_symlink_planted_as_sqlites_journal_is_refused_and_its_target_never_written(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, suffix: str
) -> None:
    target = tmp_path / "elsewhere-secret"
    target.write_bytes(CONTENT)
    folder = tmp_path / "store"
    folder.mkdir(mode=0o700)
    (folder / f"c.db{suffix}").symlink_to(target)
    store, error = open_store(folder / "c.db", caplog)
    what = f"its SQLite {suffix[1:]} file is a symbolic link"
    assert_refused(store, error, what, "elsewhere-secret")
    assert target.read_bytes() == CONTENT


def test_a_damaged_store_is_still_replaced_in_a_safe_folder(tmp_path: Path) -> None:
    # The checks come first; a safe file that is not a database is moved aside as before.
    folder = tmp_path / "store"
    folder.mkdir(mode=0o700)
    path = folder / "c.db"
    path.write_bytes(b"not a database " * 100)
    path.chmod(0o600)
    store = ConversationStore(str(path), logging.getLogger("test-store-files"))
    assert store.available
    assert len(list(folder.glob("c.db.corrupt-*"))) == 1
    store.close()


# -- through the server ---------------------------------------------------------------------


@pytest.fixture
def planted(tmp_path: Path) -> dict[str, Path]:
    """A store path that is a symbolic link to a file elsewhere."""
    target = tmp_path / "elsewhere" / "target.db"
    target.parent.mkdir()
    target.write_bytes(CONTENT)
    folder = tmp_path / "store"
    folder.mkdir(mode=0o700)
    (folder / "conversations.db").symlink_to(target)
    return {"path": folder / "conversations.db", "target": target}


@pytest.fixture
def copilot_config(tmp_path: Path, planted: dict[str, Path]) -> dict[str, Any]:
    """The scripted agent, and the store at the planted link."""
    return {
        **scripted_agents(tmp_path / "agent.jsonl"),
        "conversations_db_path": str(planted["path"]),
    }


async def test_a_server_with_a_planted_store_says_conversations_are_not_stored(
    jp_fetch: Any, copilot: Any, planted: dict[str, Path]
) -> None:
    _, body = await api(jp_fetch, "conversations")
    assert body == {"conversations": [], "stored": False}
    # A new conversation lives in memory; nothing reaches the link's target.
    conversation = await create(jp_fetch, chatOnly=True)
    _, body = await api(jp_fetch, "conversations")
    assert [c["id"] for c in body["conversations"]] == [conversation]
    assert body["stored"] is False
    assert planted["target"].read_bytes() == CONTENT
    assert not copilot.conversations.stored()
