"""An agent's files on the server's disk: read and written without following any link.

``files.resolve`` checks a path once, by name, after symlinks. What is then opened is
opened again from the root one folder at a time with ``O_NOFOLLOW``, so that a link put in
place after that check is never followed, and every check of the file itself is made on the
opened descriptor (``fstat``), never on the path: it is a regular file with exactly one
hard link. A second hard link is another name for the same file, possibly a notebook, which
an agent may never read or write as a file; which file that is cannot be told from here, so
every file with more than one link is refused (docs/protocol.md section 11, "Agents' own
tools"). A write compares the file's content and writes it through the same descriptor.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat

from ..protocol.refusals import Refusal

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
#: ``O_NONBLOCK``: opening a FIFO planted at the path must not hang the server.
_FILE_FLAGS = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def text_hash(text: str | None) -> str | None:
    """``sha256:<hex>`` of a file's text, ``None`` for a file that does not exist."""
    if text is None:
        return None
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def read_text(root: str, path: str, cap: int) -> str | None:
    """The UTF-8 text of the file at contents-API ``path`` under ``root``; ``None`` if none.

    Raises ``outside-root`` for a link met on the way, ``not-permitted`` for a file with
    more than one hard link, ``invalid-input`` for a folder, anything but a regular file or
    text that is not UTF-8, and ``over-budget`` for more than ``cap`` bytes.
    """
    fd = _open(root, path, os.O_RDONLY)
    if fd is None:
        return None
    try:
        return _read(fd, cap)
    finally:
        os.close(fd)


def write_text(root: str, path: str, content: str, base_hash: str | None, cap: int) -> None:
    """Write ``content`` to the file at ``path`` only if it still has ``base_hash``.

    ``base_hash`` ``None``: the file must still not exist, and is created (``O_EXCL``).
    Otherwise the file is opened once, checked on its descriptor (regular, one link), read
    and compared through that descriptor, then truncated and written through it. Raises
    ``stale-source`` when the file changed (or appeared, or went away), and the refusals of
    :func:`read_text`.
    """
    data = content.encode("utf-8")
    if base_hash is None:
        fd = _open(root, path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, missing_ok=False)
    else:
        fd = _open(root, path, os.O_RDWR)
    if fd is None:
        raise _stale()
    try:
        if base_hash is not None:
            if text_hash(_read(fd, cap)) != base_hash:
                raise _stale()
            os.lseek(fd, 0, os.SEEK_SET)
            os.ftruncate(fd, 0)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def _open(root: str, path: str, flags: int, missing_ok: bool = True) -> int | None:
    """Open ``root/path``, each folder on the way and the file itself without following a
    link; the descriptor of a regular file with one link, ``None`` when there is none."""
    parts = [p for p in path.split("/") if p]
    if not parts or any(p in (".", "..") for p in parts):
        raise Refusal("invalid-input", "That path is a folder, not a file.")
    folder = os.open(os.path.realpath(root), _DIR_FLAGS)
    try:
        for part in parts[:-1]:
            try:
                inner = os.open(part, _DIR_FLAGS, dir_fd=folder)
            except OSError as e:
                if e.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
                    _refuse_link(folder, part)
                    return None
                raise
            os.close(folder)
            folder = inner
        try:
            fd = os.open(parts[-1], flags | _FILE_FLAGS, 0o666, dir_fd=folder)
        except FileExistsError:
            # Only a file to be created: something (perhaps a link) appeared meanwhile.
            _refuse_link(folder, parts[-1])
            raise _stale() from None
        except OSError as e:
            if e.errno == errno.EISDIR:
                raise Refusal("invalid-input", "That path is a folder, not a file.") from None
            if e.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
                _refuse_link(folder, parts[-1])
                if missing_ok:
                    return None
                raise _stale() from None
            raise
    finally:
        os.close(folder)
    try:
        _check_opened(os.fstat(fd))
    except BaseException:
        os.close(fd)
        raise
    return fd


def _check_opened(st: os.stat_result) -> None:
    """What an agent may read or write: a regular file that has no other name."""
    if stat.S_ISDIR(st.st_mode):
        raise Refusal("invalid-input", "That path is a folder, not a file.")
    if not stat.S_ISREG(st.st_mode):
        raise Refusal("invalid-input", "That path is not a regular file.")
    if st.st_nlink > 1:
        raise Refusal(
            "not-permitted",
            "That file has more than one hard link: it is also another file (possibly a "
            "notebook) under another name, so agents may not read or write it.",
        )


def _refuse_link(folder: int, name: str) -> None:
    """Raise ``outside-root`` when ``name`` in ``folder`` is a symbolic link: it was not one
    when the path was checked, and is never followed now."""
    try:
        st = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except OSError:
        return
    if stat.S_ISLNK(st.st_mode):
        raise Refusal(
            "outside-root",
            "That path became a link after it was checked; links are not followed, so "
            "nothing was read or written.",
        )


def _read(fd: int, cap: int) -> str:
    chunks = []
    size = 0
    while size <= cap:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    if size > cap:
        raise Refusal("over-budget", f"The file is larger than {cap} bytes; read it in parts.")
    try:
        return b"".join(chunks).decode("utf-8")
    except UnicodeDecodeError:
        raise Refusal("invalid-input", "The file is not UTF-8 text.") from None


def _stale() -> Refusal:
    return Refusal("stale-source", "The file changed since this was proposed; nothing was written.")
