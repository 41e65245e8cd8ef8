"""Where conversations last: one SQLite file, per person, in the Jupyter data directory.

Each conversation is one row (its settings as the panel sees them, its owner and the agent's
ACP session id) and each of its turns one row (what the transcript shows: the message, the
reply, notices, tool cards and how the turn ended). Conversation tokens and the agent's
environment are never written. Rows are keyed by the conversation's owner (the principal of
``callers.principal_of``), so two people sharing a store never read each other's.

The store never stops the panel from working: a store that cannot be opened or written is
reported once as a warning and the conversations go on in memory; a store that is not a
SQLite database (or fails its integrity check) is moved aside next to itself, with a
timestamped suffix, and a new one is started. Warnings carry no paths (they are logged at
DEBUG) and no content.

The store is private to the server's user (docs/security.md, "Smaller guarantees"): its
folder is created 0700 and its file 0600, and neither is followed through a link. A folder or
file that is a symbolic link, belongs to another user, or can be written by other users, a
file with other hard links, or SQLite journal files of that kind next to it, are refused
before SQLite opens anything: the store stays off (conversations in memory only), the files
are left exactly as they are, and an error says what was wrong. Once the folder is checked
(the server user's own, writable by no one else), no one else can plant a link in it between
the check and SQLite opening the file.

All access goes through one connection guarded by a lock, with a busy timeout for another
server process writing the same file; writes are small and run on the event loop's thread
like the file-ID service's.
"""

from __future__ import annotations

import datetime
import errno
import json
import logging
import os
import sqlite3
import stat
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

#: The schema version in ``PRAGMA user_version``; a file of a newer version is left alone
#: and not used (conversations stay in memory).
SCHEMA_VERSION = 1
#: Seconds a write waits for another process holding the file's lock.
BUSY_TIMEOUT_SECONDS = 5.0
#: The files SQLite keeps next to the store while it writes (rollback journal, WAL).
SIDE_FILES = ("-journal", "-wal", "-shm")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    data TEXT NOT NULL,
    updated TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS conversations_owner ON conversations (owner);
CREATE TABLE IF NOT EXISTS turns (
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (conversation_id, seq)
);
"""


class UnsafeStore(Exception):
    """The store's file or folder is not safely the server user's own; ``why`` says how,
    in words without a path."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


@dataclass(frozen=True)
class Stored:
    """One stored conversation: its owner, its settings and its turns, as written."""

    owner: str
    data: dict[str, Any]
    turns: list[dict[str, Any]]


class ConversationStore:
    """The SQLite store of one server; ``available`` is False once it fell back to memory."""

    def __init__(self, path: str | None, log: logging.Logger | logging.LoggerAdapter[Any]) -> None:
        self.path = path
        self.log = log
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        #: Why the store is not in use, for the panel; None while it is.
        self.problem: str | None = None if path else "off"
        if path:
            self._open(path)

    @property
    def available(self) -> bool:
        """Whether conversations are being stored."""
        return self._db is not None

    # -- opening ---------------------------------------------------------------------------

    def _open(self, path: str) -> None:
        try:
            self._db = _open_private(path, self._connect)
        except UnsafeStore as e:
            self._unsafe(e)
        except sqlite3.DatabaseError as e:
            if isinstance(e, sqlite3.OperationalError) and not _is_corrupt(e):
                self._unusable("it cannot be opened or written", e)
                return
            self._replace_corrupt(path, e)
        except OSError as e:
            self._unusable("its folder cannot be created or written", e)

    @staticmethod
    def _connect(path: str) -> sqlite3.Connection:
        db = sqlite3.connect(
            path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None, check_same_thread=False
        )
        try:
            check = db.execute("PRAGMA quick_check").fetchone()
            if check is None or check[0] != "ok":
                raise sqlite3.DatabaseError("integrity check failed")
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise sqlite3.OperationalError("written by a newer jupyter-copilot")
            db.execute("PRAGMA foreign_keys = ON")
            db.executescript(_SCHEMA)
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except BaseException:
            db.close()
            raise
        return db

    def _replace_corrupt(self, path: str, error: Exception) -> None:
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        aside = f"{path}.corrupt-{stamp}"
        try:
            os.replace(path, aside)
            for suffix in SIDE_FILES:
                if os.path.lexists(path + suffix):
                    os.replace(path + suffix, aside + suffix)
            self._db = _open_private(path, self._connect)
        except UnsafeStore as e:
            self._unsafe(e)
            return
        except (OSError, sqlite3.Error) as e:
            self._unusable("it is damaged and could not be replaced", e)
            return
        self.log.warning(
            "jupyter-copilot: the conversation store was damaged; it was moved aside and a new "
            "one was started (earlier conversations are not shown)."
        )
        self.log.debug(
            "jupyter-copilot: damaged conversation store %s (%s) moved to %s", path, error, aside
        )

    def _unusable(self, why: str, error: BaseException) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
            self._db = None
        self.problem = why
        self.log.warning(
            "jupyter-copilot: conversations cannot be stored (%s: %s); they are kept in memory "
            "until the server stops. Check CopilotApp.conversations_db_path.",
            why,
            type(error).__name__,
        )
        self.log.debug("jupyter-copilot: conversation store %s: %s", self.path, error)

    def _unsafe(self, error: UnsafeStore) -> None:
        """Fail closed: nothing is stored, nothing of the files is touched, and an error
        names the problem (never the path, which is logged at DEBUG)."""
        self.problem = f"it is unsafe: {error.why}"
        self.log.error(
            "jupyter-copilot: the conversation store was refused because %s; conversations "
            "are not stored and are kept in memory until the server stops. Check "
            "CopilotApp.conversations_db_path: its folder and file must belong to the "
            "server's user, be writable by no one else, and not be links.",
            error.why,
        )
        self.log.debug("jupyter-copilot: unsafe conversation store %s", self.path)

    # -- reading and writing ---------------------------------------------------------------

    def load(self) -> list[Stored]:
        """Every stored conversation, oldest first, with its turns in order."""
        try:
            with self._lock:
                if self._db is None:
                    return []
                rows = self._db.execute(
                    "SELECT id, owner, data FROM conversations ORDER BY rowid"
                ).fetchall()
                turns: dict[str, list[dict[str, Any]]] = {}
                for conversation_id, data in self._db.execute(
                    "SELECT conversation_id, data FROM turns ORDER BY conversation_id, seq"
                ):
                    turns.setdefault(conversation_id, []).append(json.loads(data))
        except (sqlite3.Error, ValueError) as e:
            self._unusable("it cannot be read", e)
            return []
        stored = []
        for conversation_id, owner, data in rows:
            try:
                stored.append(Stored(owner, json.loads(data), turns.get(conversation_id, [])))
            except ValueError:
                self.log.warning("jupyter-copilot: a stored conversation is unreadable; skipped")
        return stored

    def save(
        self,
        owner: str,
        conversation: dict[str, Any],
        turns: Iterable[tuple[int, dict[str, Any]]] = (),
    ) -> None:
        """Write a conversation's settings and the given ``(index, turn)`` rows."""
        self._write(
            [
                (
                    "INSERT INTO conversations (id, owner, data, updated) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (id) DO UPDATE SET data = excluded.data, "
                    "updated = excluded.updated WHERE conversations.owner = excluded.owner",
                    (conversation["id"], owner, json.dumps(conversation), _now()),
                ),
                *(
                    (
                        # Only under the owner's own conversation row.
                        "INSERT OR REPLACE INTO turns (conversation_id, seq, data) "
                        "SELECT id, ?, ? FROM conversations WHERE id = ? AND owner = ?",
                        (index, json.dumps(turn), conversation["id"], owner),
                    )
                    for index, turn in turns
                ),
            ]
        )

    def delete(self, owner: str, conversation_id: str) -> None:
        """Forget a conversation and its turns."""
        self._write(
            [
                (
                    "DELETE FROM turns WHERE conversation_id IN "
                    "(SELECT id FROM conversations WHERE id = ? AND owner = ?)",
                    (conversation_id, owner),
                ),
                (
                    "DELETE FROM conversations WHERE id = ? AND owner = ?",
                    (conversation_id, owner),
                ),
            ]
        )

    def close(self) -> None:
        """Close the connection (the server stops)."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def _write(self, statements: list[tuple[str, tuple[Any, ...]]]) -> None:
        try:
            with self._lock:
                db = self._db
                if db is None:
                    return
                db.execute("BEGIN IMMEDIATE")
                try:
                    for sql, parameters in statements:
                        db.execute(sql, parameters)
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
                db.execute("COMMIT")
        except sqlite3.Error as e:
            self._unusable("it cannot be written", e)


def _open_private(path: str, connect: Callable[[str], sqlite3.Connection]) -> sqlite3.Connection:
    """Open the store at ``path`` with ``connect`` once its folder and files are checked.

    The folder is created 0700 when missing and the file 0600, without following a link at
    either. Raises :class:`UnsafeStore` for a folder, file or SQLite side file that is a
    link, belongs to another user or can be written by other users, and for a file with
    other hard links (writing it would write that other file).
    """
    directory = os.path.dirname(os.path.abspath(path))
    try:
        os.lstat(directory)
    except FileNotFoundError:
        os.makedirs(directory, mode=0o700, exist_ok=True)
    _check("its folder", os.lstat(directory), folder=True)
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise UnsafeStore("its file is a symbolic link") from None
        raise
    try:
        opened = os.fstat(fd)
    finally:
        # Closed before SQLite opens the file: closing a second descriptor of a file would
        # drop the POSIX locks SQLite holds on it.
        os.close(fd)
    _check("its file", opened)
    for suffix in SIDE_FILES:
        try:
            side = os.lstat(path + suffix)
        except FileNotFoundError:
            continue
        _check(f"its SQLite {suffix[1:]} file", side)
    db = connect(path)
    # The file SQLite opened is the one checked above: the checked folder lets no one else
    # swap it, so this only proves that the check and the open agree.
    now = os.lstat(path)
    if (now.st_dev, now.st_ino) != (opened.st_dev, opened.st_ino):
        db.close()
        raise UnsafeStore("its file was replaced while it was being opened")
    return db


def _check(what: str, st: os.stat_result, folder: bool = False) -> None:
    """Raise :class:`UnsafeStore` unless ``st`` is a folder (``folder``) or a regular file,
    the server user's own, writable by no one else and, for a file, its only name."""
    if stat.S_ISLNK(st.st_mode):
        raise UnsafeStore(f"{what} is a symbolic link")
    if not (stat.S_ISDIR(st.st_mode) if folder else stat.S_ISREG(st.st_mode)):
        raise UnsafeStore(f"{what} is not a {'folder' if folder else 'regular file'}")
    if st.st_uid != os.geteuid():
        raise UnsafeStore(f"{what} belongs to another user")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise UnsafeStore(f"{what} can be written by other users")
    if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
        raise UnsafeStore(f"{what} has other hard links")


def _is_corrupt(error: sqlite3.OperationalError) -> bool:
    return "malformed" in str(error) or "not a database" in str(error)


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
