"""Tools that propose a notebook change for the person's review: what they all share.

``notebook_edit_cell``, ``notebook_insert_cell`` and ``notebook_run_cell`` run the same life:
an invoke checked in the fail-closed order of docs/protocol.md section 5, callIds
remembered so that a repeat returns the first result (section 4.2), an abort that withdraws
(section 4.3), and for a tool whose page opens a review, Keep judged by the server before
the page applies anything (section 6). :class:`ProposalTool` holds that life once and
composes the two things that differ: the tool's spec (``toolspecs.py``: name, page actions,
approval card, telemetry kind) and its service (``service.py``: what it checks itself,
what the page's request carries and what its result is).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import jsonschema

from ..admin.switches import TOOLS
from ..admin.telemetry import Telemetry
from ..page.bridge import PageSession
from ..page.dispatcher import Dispatcher
from ..page.sessions import Registrations
from ..protocol.callers import PLAN, Caller
from ..protocol.refusals import Refusal
from ..protocol.registry import schema_problem
from .approvals import Approvals
from .edits import DECISIONS, ProposalCall, ProposalCalls, simple_object_check
from .service import ProposalHost, ToolService, ms_since
from .spec import ToolSpec

#: How long the server waits for the page to withdraw an aborted call's review, for the
#: ``edit/aborted`` event; the abort itself answers at once (docs/protocol.md section 4.3).
ABORT_PAGE_SECONDS = 5.0

#: ``approve(page, path, data, abort)``: show an approval card and wait for the decision.
Approve = Callable[[PageSession, str, dict[str, Any], asyncio.Event], Awaitable[None]]


class ProposalTool:
    """One proposal tool of one server: invoke, abort, and the server's half of Keep.

    It composes its spec (name, actions, card, telemetry kind) and its service (the tool's
    own checks, request and result) with the server's shared collaborators.
    """

    def __init__(
        self,
        spec: ToolSpec,
        service: ToolService,
        parameters: dict[str, Any],
        dispatcher: Dispatcher,
        registrations: Registrations,
        telemetry: Telemetry,
        host: ProposalHost,
        approvals: Approvals,
    ) -> None:
        assert spec.page is not None, f"{spec.name} is not served by a page"
        self.spec = spec
        self.page = spec.page
        self.service = service
        self._validator = jsonschema.Draft202012Validator(parameters)
        self._conforms = simple_object_check(parameters)
        self.dispatcher = dispatcher
        self.registrations = registrations
        self.telemetry = telemetry
        self.host = host
        self.approvals = approvals
        self.calls = ProposalCalls(result_of=service.settled_result)
        #: Aborts whose page has not answered yet (at most ``ABORT_PAGE_SECONDS`` each).
        self._withdrawals: set[asyncio.Future[None]] = set()

    @property
    def name(self) -> str:
        """The tool's name, as the registry and MCP list it."""
        return self.spec.name

    @property
    def operation(self) -> str:
        """The kind its events carry in ``operation`` (docs/protocol.md section 10)."""
        return self.page.operation

    def approval(self, caller: Caller) -> Approve:
        """What shows the tool's approval card to ``caller``'s person and waits for them."""

        async def approve(page: PageSession, path: str, data: dict[str, Any], abort: Any) -> None:
            await self.approvals.ask(
                owner=caller.principal,
                page=page,
                path=path,
                tool=self.name,
                description=self.page.card.description,
                details=self.service.card_details(data),
                caller_kind=caller.kind,
                abort=abort,
                group=caller.scope or None,
                kind=self.page.card.kind,
            )

        return approve

    def _page_answered(
        self,
        call: ProposalCall,
        page: PageSession,
        data: dict[str, Any],
        answer: Any,
        started: float,
    ) -> dict[str, Any]:
        """The page answered the invoke request: the call's result (the review is open)."""
        result = self.service.answered(call, page, data, answer, started)
        if self.page.opens_review:
            call.review_open = True
            call.opened_at = time.monotonic()
            self.telemetry.proposal_review_opened(
                call_ref=call.ref,
                page_ref=page.ref,
                latency_ms=ms_since(started),
                check_ms=call.check_ms,
                new_source_bytes=len(self.service.proposed_source(data).encode("utf-8")),
                operation=self.operation,
            )
        return result

    # -- invoke ------------------------------------------------------------------------------

    async def invoke(
        self,
        caller: Caller,
        data: dict[str, Any],
        call_id: str | None = None,
        page_id: str | None = None,
        approve: Approve | None = None,
    ) -> dict[str, Any]:
        """Run one invoke; returns once the review is open (for a run: once it ended).

        ``call_id`` identifies the call for this user (one is made up when it is None);
        ``page_id`` picks the page; ``approve``, when given, must return (or raise
        :class:`Refusal` to end the call) before anything reaches the page. A tool whose
        card is shown in every mode (a run: there is no Autopilot for running code) ignores
        ``approve`` and asks with its own card.
        """
        started = time.perf_counter()
        if self.page.card.always:
            approve = self.approval(caller)
        problem = self._input_problem(data)
        if problem is not None:
            self.telemetry.proposal_refused(
                call_ref=None, code="invalid-input", latency_ms=0.0, operation=self.operation
            )
            raise Refusal("invalid-input", f"The tool input is not valid: {problem}.")
        call_id = call_id or uuid.uuid4().hex
        call = self.calls.start(call_id, data)
        if call is None:
            # The first call's result, waiting for it if it is still running.
            return await self.calls.first_outcome(call_id)
        # The server's own check time leaves out the events it emits.
        call.check_ms = (time.perf_counter() - started) * 1000.0
        self.telemetry.proposal_invoked(
            call_ref=call.ref,
            new_source_bytes=len(self.service.proposed_source(data).encode("utf-8", "replace")),
            operation=self.operation,
        )
        try:
            result = await self._run(call, caller, data, page_id, approve, started)
        except Refusal as refusal:
            self.calls.finish(call, refusal)
            self.telemetry.proposal_refused(
                call_ref=call.ref,
                code=refusal.code,
                latency_ms=ms_since(started),
                operation=self.operation,
            )
            raise
        self.calls.finish(call, result)
        return result

    def _input_problem(self, data: dict[str, Any]) -> str | None:
        if self._conforms is not None and self._conforms(data):
            return None
        return schema_problem(self._validator, data)

    async def _run(
        self,
        call: ProposalCall,
        caller: Caller,
        data: dict[str, Any],
        page_id: str | None,
        approve: Approve | None,
        started: float,
    ) -> dict[str, Any]:
        resumed = time.perf_counter()
        settings = self.host.settings()
        checks = (call, caller, data, page_id, settings)
        page, path, checked = await self._server_checks(*checks)
        if approve is not None:
            call.check_ms += (time.perf_counter() - resumed) * 1000.0
            await approve(page, path, data, call.abort_requested)
            # The person may have taken minutes: everything is checked again.
            resumed = time.perf_counter()
            page, path, checked = await self._server_checks(*checks)
        call.check_ms += (time.perf_counter() - resumed) * 1000.0
        call.page = page
        call.artifact_id = data["artifactId"]
        request = self.service.request_data(call.call_id, data, path, checked)
        answer = await self._ask_page(call, page, request, self.service.page_timeout(settings))
        return self._page_answered(call, page, data, answer, started)

    async def _server_checks(
        self,
        call: ProposalCall,
        caller: Caller,
        data: dict[str, Any],
        page_id: str | None,
        settings: dict[str, Any],
    ) -> tuple[PageSession, str, Any]:
        """Steps 1 to 7 of docs/protocol.md section 5 that the server can decide on its own."""
        # 1. Switches, then the caller's mode.
        self.host.switches.require(TOOLS)
        if caller.approval_mode == PLAN:
            raise Refusal(
                "plan-mode", "This conversation is in plan mode: it may read, not propose edits."
            )
        self.service.permitted()
        # 2. The page and its view.
        page, active = self.dispatcher.active_notebook(
            page_id, not_a_notebook="The active tab is not a notebook being edited."
        )
        path = active["path"]
        # 3. The artifact and its kernel session.
        if self.host.artifact_id(path) != data["artifactId"]:
            raise Refusal(
                "artifact-mismatch", "The active notebook is not the one this edit was made for."
            )
        if not self.registrations.for_artifact(data["artifactId"]):
            raise Refusal("no-active-session", "The notebook has no running kernel session.")
        # 4. Permission.
        if not (
            await caller.may_write() and await self.host.file_writable(path) and active["writable"]
        ):
            raise Refusal("read-only", "You may not edit this notebook.")
        # 5 to 7: the tool's own.
        checked = await self.service.check(data, settings)
        if call.abort_requested.is_set():
            raise Refusal("aborted", "The call was aborted.")
        return page, path, checked

    async def _ask_page(
        self, call: ProposalCall, page: PageSession, request_data: dict[str, Any], timeout: float
    ) -> Any:
        """Send the invoke request to the page; its answer, unless the call is aborted first."""
        invoke = page.request(self.spec.invoke_action, request_data, timeout)
        request = asyncio.ensure_future(invoke)
        aborted = asyncio.ensure_future(call.abort_requested.wait())
        await asyncio.wait({request, aborted}, return_when=asyncio.FIRST_COMPLETED)
        aborted.cancel()
        if call.abort_requested.is_set():
            # The abort also asked the page to withdraw whatever it opens.
            request.add_done_callback(_consume)
            raise Refusal("aborted", "The call was aborted.")
        return request.result()

    # -- abort -------------------------------------------------------------------------------

    async def abort(self, data: dict[str, Any]) -> dict[str, bool]:
        """Run one abort: never refused by the switches."""
        call_id = data.get("callId")
        if set(data) != {"callId"} or not (isinstance(call_id, str) and 0 < len(call_id) <= 128):
            raise Refusal("invalid-input", "abort takes exactly {'callId': <1 to 128 characters>}.")
        call = self.calls.get(call_id)
        if call is None or call.decided or (call.outcome.done() and not call.review_open):
            return {"aborted": False}
        call.aborted = True
        call.abort_requested.set()
        self.calls.settle(call)
        # Keep is refused for this call from now on, whatever the page does. The page is
        # told to withdraw its review at once, in order with every later message; the agent
        # is answered without waiting for a page that may be busy drawing a long notebook.
        answer: Awaitable[dict[str, Any]] | None = None
        if call.page is not None:
            with contextlib.suppress(Refusal):
                answer = call.page.ask(
                    self.spec.abort_action,
                    {"callId": call.call_id},
                    min(ABORT_PAGE_SECONDS, self.host.settings()["page_timeout_seconds"]),
                )
        withdrawal = asyncio.ensure_future(self._withdrawal(call, call.review_open, answer))
        self._withdrawals.add(withdrawal)
        withdrawal.add_done_callback(self._withdrawals.discard)
        return {"aborted": True}

    async def _withdrawal(
        self, call: ProposalCall, was_open: bool, answer: Awaitable[dict[str, Any]] | None
    ) -> None:
        """Wait for the page's answer to an abort, and record what it withdrew."""
        withdrawn = False
        if answer is not None:
            with contextlib.suppress(Refusal):
                withdrawn = (await answer).get("withdrawn") is True
        self.telemetry.proposal_aborted(
            call_ref=call.ref,
            review_was_open=was_open,
            withdrawn=withdrawn,
            operation=self.operation,
        )

    # -- Keep and the person's decision ----------------------------------------------------

    def keep_verdict(self, page: PageSession, call_id: str) -> dict[str, Any]:
        """The answer to a page's ``keep``: may the review's proposal be applied now?"""
        call = self.calls.get(call_id)
        code: str | None = None
        if call is None or call.page is not page or not call.review_open or call.decided:
            code = "aborted"
        elif (refused := self.host.switches.refusal(TOOLS)) is not None:
            code = refused
        elif call.artifact_id is None or not self.registrations.for_artifact(call.artifact_id):
            # The kernel session that the tool was registered for has ended.
            code = "no-active-session"
        verdict: dict[str, Any] = {"type": "keep-verdict", "callId": call_id, "ok": code is None}
        if code is not None:
            verdict["code"] = code
        return verdict

    def review_decided(self, page: PageSession, call_id: str, decision: str) -> None:
        """Record the person's decision once; later reports for the call are ignored."""
        call = self.calls.get(call_id)
        if call is None or call.page is not page or call.decided or decision not in DECISIONS:
            return
        call.decision = decision
        self.calls.settle(call)
        self.telemetry.proposal_decision(
            call_ref=call.ref, decision=decision, open_ms=_open_ms(call), operation=self.operation
        )

    def page_closed(self, page: PageSession) -> None:
        """A page went away: its open reviews are gone with it."""
        for call in self.calls.open_reviews():
            if call.page is page:
                self.review_decided(page, call.call_id, "withdrawn")


class ProposalDesk:
    """The proposal tools of one server, as the page bridge meets them.

    A page's ``keep`` and ``review`` carry only a callId; the tool with a live call of that
    id answers. CallIds are per tool (each tool remembers its own), so the same id used
    with two tools at once is answered by the first tool listed.
    """

    def __init__(self, tools: list[ProposalTool]) -> None:
        self.tools = tools

    def _owner(self, call_id: str) -> ProposalTool:
        for tool in self.tools:
            if tool.calls.get(call_id) is not None:
                return tool
        # No live call anywhere: any tool refuses it the same way.
        return self.tools[0]

    def keep_verdict(self, page: PageSession, call_id: str) -> dict[str, Any]:
        """The answer to a page's ``keep``."""
        return self._owner(call_id).keep_verdict(page, call_id)

    def review_decided(self, page: PageSession, call_id: str, decision: str) -> None:
        """Record the person's decision with the call's tool."""
        self._owner(call_id).review_decided(page, call_id, decision)

    def page_closed(self, page: PageSession) -> None:
        """A page went away: every tool's reviews on it end."""
        for tool in self.tools:
            tool.page_closed(page)


def _consume(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


def _open_ms(call: ProposalCall) -> float:
    if call.opened_at is None:
        return 0.0
    return round((time.monotonic() - call.opened_at) * 1000.0, 3)
