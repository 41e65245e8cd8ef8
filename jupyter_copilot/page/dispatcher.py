"""The dispatcher: which connected page answers a call.

Resolution happens on every call (docs/protocol.md section 4): an explicit ``pageId``, else the
page that most recently reported focus, else the only page, else the call fails closed.

Every authenticated caller of a Jupyter server acts for the server's owner (the server's
authorizer decides what they may do, and a token-authenticated client gets a new anonymous
identity on each request), so pages are not partitioned by identity here.
"""

from __future__ import annotations

from typing import Any

from ..protocol.refusals import Refusal
from .bridge import PageSession


class Dispatcher:
    """Connected pages by ``pageId``, and the rules that pick one for a call."""

    def __init__(self) -> None:
        self._pages: dict[str, PageSession] = {}

    def attach(self, session: PageSession) -> None:
        """Register a page that said hello; the same page reconnecting replaces its old link."""
        assert session.page_id is not None
        current = self._pages.get(session.page_id)
        if current is not None and current is not session:
            current.close()
        self._pages[session.page_id] = session

    def detach(self, session: PageSession) -> None:
        """Forget a page that went away (its pending requests have already failed)."""
        if session.page_id is not None and self._pages.get(session.page_id) is session:
            del self._pages[session.page_id]

    def pages(self) -> list[PageSession]:
        """Connected pages that have said hello."""
        return list(self._pages.values())

    def resolve(self, page_id: str | None = None) -> PageSession:
        """Pick the page that answers a call, or refuse.

        Raises :class:`Refusal` with ``no-active-page`` when there is no such page and
        ``ambiguous-active-notebook`` when several pages are open and none ever had focus.
        """
        if page_id is not None:
            page = self._pages.get(page_id)
            if page is None:
                raise Refusal("no-active-page", "No connected JupyterLab page has that pageId.")
            return page
        pages = self.pages()
        if not pages:
            raise Refusal(
                "no-active-page", "No JupyterLab page is connected. Open a notebook in JupyterLab."
            )
        focused = [p for p in pages if p.focused_at is not None]
        if focused:
            return max(focused, key=lambda p: p.focused_at or 0.0)
        if len(pages) == 1:
            return pages[0]
        raise Refusal(
            "ambiguous-active-notebook",
            f"{len(pages)} JupyterLab pages are open and none has had focus yet. "
            "Click into the notebook you mean, or pass its pageId.",
        )

    def active_notebook(
        self, page_id: str | None = None, not_a_notebook: str | None = None
    ) -> tuple[PageSession, dict[str, Any]]:
        """The page that answers a call and its active notebook, open in an editing view.

        The one look-up of the active notebook: refuses like :meth:`resolve`, and with
        ``not-authoring-view`` (``not_a_notebook`` as its text) when the page's active tab
        is not a notebook in the notebook view (docs/protocol.md section 5, step 2).
        """
        page = self.resolve(page_id)
        active = (page.state or {}).get("activeNotebook")
        if not active or active.get("viewType") != "notebook":
            raise Refusal("not-authoring-view", not_a_notebook)
        return page, active

    def active_language(self, page_id: str | None = None) -> str | None:
        """The kernel language of the active notebook of the page that answers, if known."""
        try:
            page = self.resolve(page_id)
        except Refusal:
            return None
        active = (page.state or {}).get("activeNotebook") or {}
        language = active.get("language")
        return language if isinstance(language, str) else None
