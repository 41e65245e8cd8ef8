"""File reviews: an agent's file write waits for the person's Keep before anything is written.

An agent that writes a file through ACP ``fs/write_text_file`` gets a review instead of a
write: the page of its conversation opens a diff of the whole file (the file as it is now
against the proposal) with Keep and Undo. Keep writes the proposal through the contents
manager, as the person, and only if the file still holds what it held when the write was
proposed (``stale-source`` otherwise; a file that did not exist must still not exist).
Nothing is ever written without Keep; a review whose conversation ends is withdrawn.
"""

from __future__ import annotations

import hashlib
import posixpath
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jupyter_core.utils import ensure_async
from tornado import web

from ..bridge import PageSession
from ..refusals import Refusal

#: The largest file an agent may read or propose through us, in UTF-8 bytes.
FILE_BYTES_CAP = 1024 * 1024

KEEP = "keep"
UNDO = "undo"
CONFLICT = "conflict"
WITHDRAWN = "withdrawn"


def text_hash(text: str | None) -> str | None:
    """``sha256:<hex>`` of a file's text, ``None`` for a file that does not exist."""
    if text is None:
        return None
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


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
    """Open file reviews by id, and the contents manager that Keep writes through."""

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

        Raises ``invalid-input`` for a folder, a file that is not UTF-8 text, one larger than
        :data:`FILE_BYTES_CAP`, or one the contents manager will not serve (hidden files).
        """
        manager = self._contents()
        if await ensure_async(manager.dir_exists(path)):
            raise Refusal("invalid-input", "That path is a folder, not a file.")
        if not await ensure_async(manager.file_exists(path)):
            return None
        try:
            model = await ensure_async(manager.get(path, content=True, type="file", format="text"))
        except web.HTTPError as e:
            raise Refusal(
                "invalid-input", f"The file cannot be read as text ({e.status_code})."
            ) from e
        content = model.get("content")
        if not isinstance(content, str):
            raise Refusal("invalid-input", "The file is not text.")
        if len(content.encode("utf-8", "surrogatepass")) > FILE_BYTES_CAP:
            raise Refusal(
                "over-budget", f"The file is larger than {FILE_BYTES_CAP} bytes; read it in parts."
            )
        return content

    # -- proposing, deciding ----------------------------------------------------------------

    async def propose(
        self, *, owner: str, group: str, page: PageSession, path: str, content: str, agent: str
    ) -> FileReview | None:
        """Open a review of writing ``content`` to ``path`` on ``page``.

        ``None`` when the file already holds exactly ``content`` (there is nothing to review).
        """
        if len(content.encode("utf-8", "surrogatepass")) > FILE_BYTES_CAP:
            raise Refusal("over-budget", f"The proposal is larger than {FILE_BYTES_CAP} bytes.")
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
        switch is engaged (the review stays open) and ``stale-source`` when the file changed
        (the review ends with ``conflict``).
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
        if text_hash(await self.read(review.path)) != review.base_hash:
            self._end(review, CONFLICT)
            raise Refusal(
                "stale-source", "The file changed since this was proposed; nothing was written."
            )
        # Taken out before the write, so that a second Keep cannot write twice.
        self._open.pop(review_id, None)
        model = {"type": "file", "format": "text", "content": review.proposed}
        try:
            await ensure_async(self._contents().save(model, review.path))
        except web.HTTPError as e:
            self._end(review, CONFLICT)
            raise Refusal("read-only", f"The file could not be written ({e.status_code}).") from e
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
