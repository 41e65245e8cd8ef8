"""Approval cards: a person allows or denies a tool call before it proposes anything.

In ``interactive`` mode (docs/protocol.md section 8) an edit call waits here: the card goes to
the JupyterLab page that holds the notebook, and only the call's owner may decide. A run of a
cell (``notebook_run_cell``) waits here in every mode (``kind: "run"``). Deny,
dismissal (the page closes), a timeout and a server stop all end the call with ``denied``.
Nothing is remembered after the decision: every call asks again.

An agent's own ACP permission request is a card too (``kind: "permission"``), with the
options the agent offered; the answer is the option the person chose, or none.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..admin.telemetry import Telemetry
from ..page.bridge import PageSession
from ..protocol.refusals import Refusal

ALLOWED = "allowed"
DENIED = "denied"
TIMEOUT = "timeout"
DISMISSED = "dismissed"
STOPPED = "stopped"
ABORTED = "aborted"
#: Too many cards of one conversation were already waiting: refused without a card.
CROWDED = "crowded"

_WHY_DENIED = {
    DENIED: "The person denied this tool call.",
    TIMEOUT: "Nobody answered the approval request in time.",
    DISMISSED: "The approval request was dismissed: the JupyterLab page closed.",
    STOPPED: "The Jupyter server stopped before the call was approved.",
    CROWDED: "Too many approval requests of this conversation are already waiting.",
}


@dataclass
class _Pending:
    request: dict[str, Any]
    owner: str
    page: PageSession
    #: The conversation the request belongs to, so that Stop can end it.
    group: str | None = None
    choice: str | None = None
    ref: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    outcome: asyncio.Future[str] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class Approvals:
    """Approval requests waiting for a person, by ``requestId``."""

    def __init__(
        self,
        telemetry: Telemetry,
        timeout_seconds: Callable[[], float],
        max_per_group: Callable[[], int] = lambda: 20,
    ) -> None:
        self.telemetry = telemetry
        self._timeout = timeout_seconds
        self._max_per_group = max_per_group
        self._pending: dict[str, _Pending] = {}

    async def ask(
        self,
        *,
        owner: str,
        page: PageSession,
        path: str,
        tool: str,
        description: str,
        details: dict[str, Any],
        caller_kind: str,
        abort: asyncio.Event | None = None,
        group: str | None = None,
        kind: str = "edit",
    ) -> None:
        """Show an edit card (or, with ``kind="run"``, a run card) on ``page`` and wait.

        Returns when the call is allowed. Raises :class:`Refusal` ``denied`` for every other
        ending, and ``aborted`` when ``abort`` is set while waiting. ``path`` goes to the
        page only, so that the person sees which notebook; it never reaches an event.
        """
        request: dict[str, Any] = {
            "toolName": tool,
            "kind": kind,
            "description": description,
            "details": details,
        }
        outcome, _ = await self._ask(request, owner, page, path, caller_kind, abort, group)
        if outcome == ALLOWED:
            return
        if outcome == ABORTED:
            raise Refusal("aborted", "The call was aborted while it waited for approval.")
        raise Refusal("denied", _WHY_DENIED[outcome])

    async def ask_permission(
        self,
        *,
        owner: str,
        page: PageSession,
        title: str,
        description: str,
        details: dict[str, Any],
        options: list[dict[str, str]],
        group: str | None = None,
    ) -> str | None:
        """Show an agent's permission request with its options; the chosen option id.

        ``None`` when the person denied without choosing an option, nobody answered, or
        the request was dismissed, stopped or aborted: the agent is then told ``cancelled``.
        """
        request: dict[str, Any] = {
            "toolName": title,
            "kind": "permission",
            "description": description,
            "details": details,
            "options": options,
        }
        outcome, choice = await self._ask(request, owner, page, None, "conversation", None, group)
        # A reject option the person picked is an answer too; Deny, Escape and the rest are not.
        return choice if outcome in (ALLOWED, DENIED) else None

    async def ask_shell(
        self,
        *,
        owner: str,
        page: PageSession,
        description: str,
        command: str,
        program: str,
        folder: str,
        ignored_env: list[str],
        group: str,
    ) -> bool:
        """Show a shell command's card; whether allowed.

        The card has the exact command line, the absolute path of the program that runs,
        the folder, and the names of the environment variables the agent asked for, which
        are not used. They are shown to the person only: never in an event or a log.
        """
        request: dict[str, Any] = {
            "toolName": "Shell command",
            "kind": "shell",
            "description": description,
            "details": {
                "conversationId": group,
                "command": command,
                "program": program,
                "folder": folder,
                "ignoredEnv": ignored_env,
            },
        }
        outcome, _ = await self._ask(request, owner, page, None, "conversation", None, group)
        return outcome == ALLOWED

    async def _ask(
        self,
        request: dict[str, Any],
        owner: str,
        page: PageSession,
        path: str | None,
        caller_kind: str,
        abort: asyncio.Event | None,
        group: str | None,
    ) -> tuple[str, str | None]:
        if group is not None:
            waiting = sum(1 for p in self._pending.values() if p.group == group)
            if waiting >= self._max_per_group():
                return CROWDED, None
        request_id = uuid.uuid4().hex
        request = {"requestId": request_id, **request}
        pending = _Pending(request, owner, page, group)
        self._pending[request_id] = pending
        timeout = self._timeout()
        started = time.monotonic()
        self.telemetry.approval_requested(
            request_ref=pending.ref,
            tool=request["toolName"] if request["kind"] in ("edit", "run") else None,
            caller_kind=caller_kind,
            page_ref=page.ref,
        )
        page.send(
            {
                "type": "approval",
                "request": request,
                "path": path,
                "expiresInMs": int(timeout * 1000),
            }
        )
        # A cancelled wait (the client gave up) ends as an abort; the card goes either way.
        outcome = ABORTED
        try:
            outcome = await self._wait(pending, timeout, abort)
        finally:
            del self._pending[request_id]
            page.send({"type": "approval-ended", "requestId": request_id, "outcome": outcome})
            self.telemetry.approval_ended(
                request_ref=pending.ref,
                outcome=outcome,
                wait_ms=round((time.monotonic() - started) * 1000.0, 3),
            )
        return outcome, pending.choice

    async def _wait(self, pending: _Pending, timeout: float, abort: asyncio.Event | None) -> str:
        waiters: list[asyncio.Future[Any]] = [pending.outcome]
        aborted = asyncio.ensure_future(abort.wait()) if abort is not None else None
        if aborted is not None:
            waiters.append(aborted)
        try:
            await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if aborted is not None:
                aborted.cancel()
        if pending.outcome.done():
            return pending.outcome.result()
        pending.outcome.cancel()
        return ABORTED if abort is not None and abort.is_set() else TIMEOUT

    def decide(
        self,
        request_id: str,
        principal: str,
        allow: bool | None = None,
        option_id: str | None = None,
    ) -> str:
        """Record the person's decision; returns ``allowed`` or ``denied``.

        An edit card takes ``allow``; a permission card takes ``allow`` (its first allow
        option, or deny) or one of its ``option_id``s. Raises ``denied`` when ``principal``
        does not own the call, ``aborted`` when there is no such request waiting (unknown,
        or already ended) and ``invalid-input`` for an option the request does not offer.
        """
        pending = self._pending.get(request_id)
        if pending is None or pending.outcome.done():
            raise Refusal("aborted", "This approval request has already ended.")
        if principal != pending.owner:
            raise Refusal("denied", "Only the person who owns this call may decide on it.")
        options = {o["optionId"]: o["kind"] for o in pending.request.get("options", [])}
        if option_id is not None:
            if option_id not in options:
                raise Refusal("invalid-input", "This approval request offers no such option.")
            pending.choice = option_id
            allow = options[option_id].startswith("allow")
        elif allow and options:
            pending.choice = next((o for o, k in options.items() if k.startswith("allow")), None)
            allow = pending.choice is not None
        outcome = ALLOWED if allow else DENIED
        pending.outcome.set_result(outcome)
        return outcome

    def end_group(self, group: str) -> None:
        """A conversation stopped or ended: its waiting requests are aborted."""
        self._end_all(ABORTED, lambda pending: pending.group == group)

    def page_closed(self, page: PageSession) -> None:
        """The page that showed cards went away: its cards are dismissed."""
        self._end_all(DISMISSED, lambda pending: pending.page is page)

    def stop(self) -> None:
        """The server is stopping: every waiting call is denied."""
        self._end_all(STOPPED, lambda pending: True)

    def _end_all(self, outcome: str, which: Callable[[_Pending], bool]) -> None:
        for pending in list(self._pending.values()):
            if which(pending) and not pending.outcome.done():
                pending.outcome.set_result(outcome)

    @property
    def waiting(self) -> int:
        """How many approval requests are waiting."""
        return len(self._pending)
