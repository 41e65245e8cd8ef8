"""What a tool's service is lent and what it must do (docs/protocol.md section 14).

A proposal tool (``proposals.py``) composes its spec (``spec.py``) and its service: the
service is built from a :class:`ProposalHost` and the telemetry, and it answers the
:class:`ToolService` members.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ..admin.switches import Switches
from ..page.bridge import PageSession
from .edits import ProposalCall, ResultOf

#: Sentinel of :attr:`ProposalHost.live_cell`: no live shared document to check against.
NO_LIVE_DOCUMENT: Any = object()


@dataclass(frozen=True)
class ProposalHost:
    """What the proposal tools ask of the server, each read at call time."""

    switches: Switches
    artifact_id: Callable[[str], str | None]
    file_writable: Callable[[str], Awaitable[bool]]
    #: The cell (artifactId, cellId) in the live shared document as plain data, None when
    #: the document has no such cell, :data:`NO_LIVE_DOCUMENT` without collaboration.
    live_cell: Callable[[str, str], Awaitable[Any]]
    served_type: Callable[[str, str, str], str | None]
    settings: Callable[[], dict[str, Any]]
    #: ``CopilotApp.agent_run_cells``: ``ask`` or ``never``.
    run_policy: Callable[[], str]
    #: ``CopilotApp.agent_run_timeout_seconds``: how long the page has to finish a run.
    run_timeout: Callable[[], float]


class ToolService(Protocol):
    """What one proposal tool does that the others do not (docs/protocol.md section 5).

    A service is built from the :class:`ProposalHost` and the :class:`Telemetry`; the
    spec names it (``toolspecs.py``). It never talks to the page or the person itself.
    """

    #: Rebuilds the success result from what a settled call keeps (:class:`~.edits.Settled`);
    #: None when it cannot be rebuilt, so the first result is kept whole.
    settled_result: ResultOf | None

    def proposed_source(self, data: dict[str, Any]) -> str:
        """The source the call proposes (only its size ever leaves the tool)."""

    def permitted(self) -> None:
        """Step 1's last check: refuse unless the server's configuration allows it now."""

    async def check(self, data: dict[str, Any], settings: dict[str, Any]) -> Any:
        """Steps 5 to 7 for this tool; returns what :meth:`request_data` needs besides the
        input."""

    def card_details(self, data: dict[str, Any]) -> dict[str, Any]:
        """The details its approval card shows: ids and sizes, never source."""

    def request_data(
        self, call_id: str, data: dict[str, Any], path: str, checked: Any
    ) -> dict[str, Any]:
        """The data of the page's invoke request."""

    def page_timeout(self, settings: dict[str, Any]) -> float:
        """Seconds the page has to answer the invoke request."""

    def answered(
        self,
        call: ProposalCall,
        page: PageSession,
        data: dict[str, Any],
        answer: Any,
        started: float,
    ) -> dict[str, Any]:
        """The call's success result from the page's answer; raises :class:`Refusal` for an
        answer it cannot use."""


def ms_since(started: float) -> float:
    """Milliseconds since ``started`` (``time.perf_counter()``), as the events carry them."""
    return round((time.perf_counter() - started) * 1000.0, 3)
