"""The connected JupyterLab pages: each one's bridge session opens and closes here.

A page's session (``bridge.py``) registers with the dispatcher on ``hello``; its ``keep``
and ``review`` messages go to the proposal tool whose call they name. When the page goes
away, its pending requests fail, and its reviews, approval cards and file reviews end with
it (docs/protocol.md 9).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..admin.telemetry import Telemetry
from ..page.bridge import PageSession
from ..page.dispatcher import Dispatcher
from ..tools.approvals import Approvals
from ..tools.proposals import ProposalDesk


class Pages:
    """Opens and closes the bridge sessions of the pages that connect."""

    def __init__(
        self,
        dispatcher: Dispatcher,
        proposals: ProposalDesk,
        approvals: Approvals,
        telemetry: Telemetry,
        welcome: Callable[[], dict[str, Any]],
    ) -> None:
        self.dispatcher = dispatcher
        self.proposals = proposals
        self.approvals = approvals
        self.telemetry = telemetry
        self._welcome = welcome
        #: Called with each page that closes, after the built-in clean-up.
        self.on_close: list[Callable[[PageSession], None]] = []

    def open(self, send: Callable[[dict[str, Any]], None]) -> PageSession:
        """A session for a page that just connected."""
        return PageSession(
            send,
            self._welcome,
            self.dispatcher.attach,
            self._on_state,
            on_keep=self.proposals.keep_verdict,
            on_review=self.proposals.review_decided,
        )

    def close(self, session: PageSession) -> None:
        """A page disconnected: fail its requests, end its reviews and forget it."""
        session.close()
        self.dispatcher.detach(session)
        self.proposals.page_closed(session)
        self.approvals.page_closed(session)
        for closed in self.on_close:
            closed(session)

    def _on_state(self, session: PageSession, accepted: bool) -> None:
        self.telemetry.context_refresh(
            page_ref=session.ref,
            accepted=accepted,
            received=session.counts.received,
            deduplicated=session.counts.deduplicated,
            coalesced=session.counts.coalesced,
        )
