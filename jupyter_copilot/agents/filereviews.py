"""File reviews: an agent's file write waits for the person's Keep before anything is written.

An agent that writes a file through ACP ``fs/write_text_file`` gets a review instead of a
write: the page of its conversation opens a diff of the whole file (the file as it is now
against the proposal) with Keep and Undo. Keep writes the proposal, as the person, only if
the file still holds what it held when the write was proposed (``stale-source`` otherwise; a
file that did not exist must still not exist). Nothing is ever written without Keep; a review
whose conversation ends is withdrawn.

Files are read and written on the server's disk under the contents manager's root, never
through a link and never when they have a second hard link (``diskfiles.py``), so the
contents manager's save hooks do not run for them.
"""

from __future__ import annotations

import posixpath
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jupyter_core.utils import ensure_async

from ..page.bridge import PageSession
from ..protocol.refusals import Refusal
from . import diskfiles
from .diskfiles import text_hash

#: The largest file an agent may read or propose through us, in UTF-8 bytes.
FILE_BYTES_CAP = 1024 * 1024

KEEP = "keep"
UNDO = "undo"
CONFLICT = "conflict"
WITHDRAWN = "withdrawn"


__all__ = ["FILE_BYTES_CAP", "FileReview", "FileReviews", "text_hash"]


@dataclass
class FileReview:
    """One proposed file write, waiting for the person."""

    review_id: str
    owner: str
    group: str
    page: PageSession
    path: str
    base_hash: str | None
    proposed: str


class FileReviews:
    """Open file reviews by id, and the contents manager whose root holds the files."""

    def __init__(self, contents: Callable[[], Any], tools_engaged: Callable[[], bool]) -> None:
        self._contents = contents
        self._tools_engaged = tools_engaged
        self._open: dict[str, FileReview] = {}

    # -- reading, as the person ---------------------------------------------------------------

    async def exists(self, path: str) -> bool:
        """Whether something (a file or a folder) is at ``path``."""
        manager = self._contents()
        return bool(
            await ensure_async(manager.file_exists(path))
            or await ensure_async(manager.dir_exists(path))
        )

    async def read(self, path: str) -> str | None:
        """The file's text now, ``None`` when there is no file at ``path``.

        Raises ``invalid-input`` for a folder or a file that is not UTF-8 text,
        ``over-budget`` for one larger than :data:`FILE_BYTES_CAP`, and the refusals of
        ``diskfiles.read_text`` for links.
        """
        try:
            return diskfiles.read_text(self._root(self._contents()), path, FILE_BYTES_CAP)
        except OSError as e:
            raise Refusal("invalid-input", f"The file cannot be read ({e.strerror}).") from e

    @staticmethod
    def _root(manager: Any) -> str:
        root = getattr(manager, "root_dir", None)
        if not isinstance(root, str) or not root:
            raise Refusal("not-permitted", "This server's files are not on its own disk.")
        return root

    # -- proposing, deciding ----------------------------------------------------------------

    async def propose(
        self, *, owner: str, group: str, page: PageSession, path: str, content: str, agent: str
    ) -> FileReview | None:
        """Open a review of writing ``content`` to ``path`` on ``page``.

        ``None`` when the file already holds exactly ``content`` (there is nothing to review).
        """
        if len(content.encode("utf-8", "surrogatepass")) > FILE_BYTES_CAP:
            raise Refusal("over-budget", f"The proposal is larger than {FILE_BYTES_CAP} bytes.")
        try:
            content.encode("utf-8")
        except UnicodeEncodeError:
            raise Refusal("invalid-input", "The content is not valid UTF-8 text.") from None
        parent = posixpath.dirname(path)
        if parent and not await ensure_async(self._contents().dir_exists(parent)):
            raise Refusal("invalid-input", "The folder of that file does not exist.")
        original = await self.read(path)
        if original == content:
            return None
        review = FileReview(
            review_id=uuid.uuid4().hex,
            owner=owner,
            group=group,
            page=page,
            path=path,
            base_hash=text_hash(original),
            proposed=content,
        )
        self._open[review.review_id] = review
        page.send(
            {
                "type": "file-review",
                "review": {
                    "reviewId": review.review_id,
                    "path": path,
                    "original": original,
                    "proposed": content,
                    "agentLabel": agent,
                },
            }
        )
        return review

    async def decide(self, review_id: str, principal: str, decision: str) -> str:
        """Keep or Undo a review; Keep writes only an unchanged file, and not while switched off.

        Returns the decision taken: ``keep`` or ``undo``. Raises ``aborted`` for a review that
        is not open, ``denied`` for someone else's, ``kill-switch`` for Keep while the kill
        switch is engaged (the review stays open), and ``stale-source`` when the file changed,
        ``not-permitted`` when it has another hard link and ``outside-root`` when a link took
        its place (the review ends with ``conflict``; nothing is written).
        """
        review = self._open.get(review_id)
        if review is None:
            raise Refusal("aborted", "This file review has already ended.")
        if principal != review.owner:
            raise Refusal("denied", "Only the person who owns this conversation may decide.")
        if decision == UNDO:
            self._end(review, UNDO)
            return UNDO
        if self._tools_engaged():
            raise Refusal("kill-switch")
        # Taken out before the write, so that a second Keep cannot write twice.
        self._open.pop(review_id, None)
        try:
            # Compared and written through one descriptor of the file (diskfiles.py).
            diskfiles.write_text(
                self._root(self._contents()),
                review.path,
                review.proposed,
                review.base_hash,
                FILE_BYTES_CAP,
            )
        except Refusal as refusal:
            self._end(review, CONFLICT)
            raise refusal from None
        except OSError as e:
            self._end(review, CONFLICT)
            raise Refusal("read-only", f"The file could not be written ({e.strerror}).") from e
        self._end(review, KEEP)
        return KEEP

    def end_group(self, group: str) -> None:
        """A conversation ended: its open reviews are withdrawn."""
        for review in [r for r in self._open.values() if r.group == group]:
            self._end(review, WITHDRAWN)

    def page_closed(self, page: PageSession) -> None:
        """The page that showed reviews went away: nobody can decide them any more."""
        for review in [r for r in self._open.values() if r.page is page]:
            self._open.pop(review.review_id, None)

    @property
    def open_count(self) -> int:
        """How many file reviews wait for a decision."""
        return len(self._open)

    def _end(self, review: FileReview, decision: str) -> None:
        self._open.pop(review.review_id, None)
        review.page.send(
            {"type": "file-review-ended", "reviewId": review.review_id, "decision": decision}
        )
