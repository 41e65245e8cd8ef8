"""Soak jupyter-copilot's server: latency and memory with many pages connected for minutes.

    python bench/soak.py [--pages N] [--minutes M] [--calls C] [--quick]

A real ``jupyter lab`` (the server helper of ``context_latency.py``) and no browser: scripted
pages (``tests/pages.py``) speak the bridge protocol over real WebSockets. One notebook has a
kernel session; exactly one page is focused on it at a time, so the dispatcher resolves one
active notebook, and the other pages show other notebooks, unfocused, and send a ``state``
update now and then (every 10 s on average). A cycle is what an agent and a person do: a
get-context call, an ``edit-cell.invoke`` on the selected cell that the page answers by
opening its review, then an abort (the page withdraws the review) or the page's Undo; every
tenth invoke carries a stale hash, which the page refuses with ``stale-source`` (409, the one
refusal this run expects). No call names a ``pageId``.

Phase 1 times sequential cycles with the focused page alone. Phase 2 connects N pages in all
(200; 20 with ``--quick``) and runs cycles for ``--minutes`` (10; 20 s with ``--quick``) at
``--rate`` cycles a second (20, which is every page's agent editing every 10 s; 0 runs them
back to back, where memory grows by the callIds the server must remember for 10 minutes),
moving the focus to another page every 10 s, and reads the server's VmRSS after a warm-up
and at the end. Figures are printed beside their targets (p95 with N pages within 2x of
p95 with one; memory growth under 10%). The exit status is 1 only when something is
functionally wrong: an unexpected status or answer, a request at an unfocused page, a review
left open, a hang, a traceback in the server log, status not answering at the end, or pages
still counted after every socket closed; never for timings or memory.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
import secrets
import sys
import tempfile
import time
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from context_latency import MARK, BenchError, Client, lab_server, percentile, wait_for
from edit_latency import CELLS, cell_id, make_notebook, proposal, row
from tornado.httpclient import HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect

from jupyter_copilot.page.context import source_hash
from jupyter_copilot.tools.edits import CALL_MEMORY_SECONDS

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.pages import ScriptedPage, context_answer, notebook_state  # noqa: E402

NOTEBOOK = "soak.ipynb"
ACTION = "jupyter_copilot.notebook."
GET_CONTEXT, INVOKE, ABORT = (
    ACTION + "get-context",
    ACTION + "edit-cell.invoke",
    ACTION + "edit-cell.abort",
)
PATH = "/copilot/api/actions/"
WARMUP, WARMUP_SECONDS = 20, 5.0  # cycles before phase 1; seconds of cycles before phase 2
STATE_EVERY, FOCUS_EVERY, RSS_EVERY = 10.0, 10.0, 5.0  # seconds
CALL_TIMEOUT, CONNECTING = 30.0, 20  # seconds per HTTP call; pages connecting at once
RATIO_TARGET, GROWTH_TARGET = 2.0, 10.0
SHOWN_ERRORS, KEPT_ERRORS, FAILED_IN_A_ROW = 10, 100, 50


def rss_kb(pid: int) -> int:
    """The process's resident set size (VmRSS) in kB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise BenchError(f"no VmRSS for process {pid}")


def server_pid(tmp: Path) -> int:
    """The Jupyter server's process id, from the runtime file it writes at start."""
    found: list[int] = []

    def written() -> bool:
        for info in (tmp / "runtime").glob("jpserver-*.json"):
            with suppress(OSError, ValueError, KeyError):
                found.append(int(json.loads(info.read_text())["pid"]))
        return bool(found)

    wait_for(written, "the server's runtime file", 30)
    return found[0]


def fingerprint(state: dict[str, Any]) -> str:
    """A fingerprint of a page state, as ``tests/pages.py`` makes them."""
    return hashlib.sha256(json.dumps(state, sort_keys=True).encode()).hexdigest()


@dataclass
class Page:
    """One scripted page: which notebook it shows, and the reviews it has open."""

    scripted: ScriptedPage
    index: int
    active: bool = False
    opened: set[str] = field(default_factory=set)
    updates: int = 0

    @property
    def cell(self) -> int:
        """The index of the cell this page selects when it shows the soak notebook."""
        return self.index % CELLS

    def state(self) -> dict[str, Any]:
        """The page's state: the soak notebook when focused, else its own other notebook."""
        if self.active:
            return notebook_state(NOTEBOOK, focused=True, selected=[cell_id(self.cell)])
        selected = [f"c{self.updates % 3 + 1}"]  # a new selection: a new fingerprint
        return notebook_state(f"other-{self.index}.ipynb", focused=False, selected=selected)

    def send_state(self) -> None:
        """Send the page's state without waiting for the server to take it."""
        state = self.state()
        self.scripted.send({"type": "state", "fingerprint": fingerprint(state), "state": state})


@dataclass
class Timings:
    """Round trips of one phase, in milliseconds, timed on the client."""

    get_context: list[float] = field(default_factory=list)
    invoke: list[float] = field(default_factory=list)
    abort: list[float] = field(default_factory=list)
    cycles: int = 0
    seconds: float = 0.0


class Soak:
    """The scripted pages, the HTTP client and the tally of one run, on one event loop."""

    def __init__(self, port: int, token: str, artifact: str, sources: list[str]) -> None:
        self.port, self.artifact, self.sources = port, artifact, sources
        self.auth = {"Authorization": f"token {token}"}
        self.http = httpx.AsyncClient(
            base_url=f"http://127.0.0.1:{port}",
            headers={**self.auth, "Content-Type": "application/json"},
            timeout=CALL_TIMEOUT,
        )
        self.pages: list[Page] = []
        self.active: Page | None = None
        self.timed: Timings | None = None  # None during warm-up
        self.calls: dict[str, int] = {}
        self.refused = 0  # the expected stale-source refusals
        self.errors: list[str] = []  # the first KEPT_ERRORS
        self.error_count = 0
        self.failed_in_a_row = 0
        self.hangs = 0
        self.moves = 0
        self.undone: list[tuple[int, str]] = []  # (cycle, callId) of sampled Undo decisions
        self.rng = random.Random(0)

    # -- pages -------------------------------------------------------------------------------

    async def ws_fetch(self, *parts: str) -> WebSocketClientConnection:
        """Open a WebSocket with the token in a header (what ``ScriptedPage.connect`` asks).

        Its socket sends at once (TCP_NODELAY), as a browser's does; tornado's default would
        hold a small message back until the server acknowledges the previous one.
        """
        url = f"ws://127.0.0.1:{self.port}/" + "/".join(parts)
        request = HTTPRequest(url, headers=self.auth, connect_timeout=30, request_timeout=30)
        ws = await websocket_connect(request)
        assert ws.protocol is not None
        ws.protocol.set_nodelay(True)
        return ws

    async def connect(self, index: int, active: bool = False) -> Page:
        """Connect one page, say hello, send its first state and wait until it is taken."""
        url = f"lab/tree/{NOTEBOOK}" if active else f"lab/tree/other-{index}.ipynb"
        scripted = await ScriptedPage.connect(self.ws_fetch, f"soak-page-{index}", url)
        page = Page(scripted, index, active=active)
        scripted.respond = lambda request: self.answer(page, request)
        page.send_state()
        await scripted.sync()
        self.pages.append(page)
        if active:
            self.active = page
        return page

    async def connect_many(self, indexes: range) -> None:
        """Connect pages, :data:`CONNECTING` at a time."""
        gate = asyncio.Semaphore(CONNECTING)

        async def one(index: int) -> None:
            async with gate:
                try:
                    await self.connect(index)
                except Exception as error:  # nothing to measure without every page
                    raise BenchError(f"page {index} could not connect: {error!r}") from error

        await asyncio.gather(*(one(i) for i in indexes))

    def answer(self, page: Page, request: dict[str, Any]) -> dict[str, Any] | None:
        """What a page answers: its live state, or opening and withdrawing a review."""
        page.scripted.requests.clear()  # the helper keeps every request; a soak must not
        action, data = request.get("action"), request.get("data") or {}
        if not page.active:
            self.fail(f"{action} request at unfocused page {page.index}")
            if action == GET_CONTEXT:
                return context_answer(f"other-{page.index}.ipynb", "y = 0\n")
            if action == ABORT:
                return {"withdrawn": False}
            return {"ok": False, "error": {"code": "artifact-mismatch", "message": "Not here."}}
        source = self.sources[page.cell]
        if action == GET_CONTEXT:
            return context_answer(NOTEBOOK, source, selected=[cell_id(page.cell)])
        if action == ABORT:
            if data.get("callId") not in page.opened:
                self.fail(f"abort of a review the page does not show: {data}")
                return {"withdrawn": False}
            page.opened.discard(data["callId"])
            return {"withdrawn": True}
        if action != INVOKE:
            self.fail(f"unknown action requested: {action!r}")
            return {"ok": False, "error": {"code": "unknown-action", "message": "Unknown."}}
        code = None
        if data.get("path") != NOTEBOOK or data.get("artifactId") != self.artifact:
            code = "artifact-mismatch"
        elif data.get("cellId") != cell_id(page.cell):
            code = "cell-not-found"
        elif data.get("expectedSourceHash") != source_hash(source):
            code = "stale-source"  # the stale calls end here
        elif data.get("expectedCellType") != "code":  # get-context served it just before
            code = "cell-type-mismatch"
        if code is not None:
            if code != "stale-source":
                self.fail(f"invoke request the page refuses ({code}): {data}"[:300])
            return {"ok": False, "error": {"code": code, "message": f"The page says {code}."}}
        page.opened.add(data["callId"])
        return {"diffReviewOpened": True}

    async def move_focus(self) -> None:
        """The person clicks into another page: the old one blurs, the new one is focused."""
        assert self.active is not None
        old = self.active
        new = self.rng.choice([p for p in self.pages if not p.active])
        old.active, new.active = False, True
        old.send_state()
        new.send_state()
        self.active = new
        await old.scripted.sync()
        await new.scripted.sync()
        self.moves += 1

    async def chatter(self, page: Page) -> None:
        """An unfocused page's occasional ``state`` update (until cancelled)."""
        rng = random.Random(page.index)
        while True:
            await asyncio.sleep(rng.uniform(0.5, 1.5) * STATE_EVERY)
            if not page.active:
                page.updates += 1
                page.send_state()

    # -- calls -------------------------------------------------------------------------------

    async def post(self, kind: str, action: str, body: dict[str, Any]) -> tuple[float, int, Any]:
        """One action call: (milliseconds, status, JSON body or None)."""
        self.calls[kind] = self.calls.get(kind, 0) + 1
        started = time.perf_counter()
        response = await self.http.post(PATH + action, content=json.dumps(body))
        ms = (time.perf_counter() - started) * 1000.0
        try:
            payload = response.json()
        except ValueError:
            payload = None
        return ms, response.status_code, payload

    def fail(self, what: str) -> None:
        """Count a functional problem; keep the first few for the report."""
        self.error_count += 1
        if len(self.errors) < KEPT_ERRORS:
            self.errors.append(what)

    def wrong(self, what: str, status: int, payload: Any) -> None:
        """Remember an unexpected answer."""
        self.fail(f"{what}: HTTP {status} {json.dumps(payload)[:240]}")

    async def cycle(self, n: int) -> None:
        """get-context, then invoke, then abort or Undo (or an expected stale refusal)."""
        assert self.active is not None
        page, timed = self.active, self.timed
        cell, source = cell_id(page.cell), self.sources[page.cell]
        ms, status, payload = await self.post("get-context", GET_CONTEXT, {"data": {}})
        entries = (payload or {}).get("result", {}).get("customContext", [])
        names = [e.get("name") for e in entries]
        if status != 200 or names != ["notebook_view_state", "notebook_selected_cell"]:
            return self.wrong(f"get-context {n}", status, payload)
        view, selected = entries[0]["value"], entries[1]["value"]
        if (
            view.get("artifactId") != self.artifact
            or view.get("permissionMode") != "edit"
            or selected.get("cellId") != cell
            or selected.get("source") != source
            or selected.get("expectedSourceHash") != source_hash(source)
        ):
            return self.wrong(f"get-context {n}: another notebook or cell", status, payload)
        if timed is not None:
            timed.get_context.append(ms)

        stale = n % 10 == 9
        new_source = proposal(source, n)
        data = {
            "artifactId": self.artifact,
            "cellId": cell,
            "expectedSourceHash": source_hash(source + " ")
            if stale
            else selected["expectedSourceHash"],
            "newSource": new_source,
        }
        call_id = f"soak-{n}-{secrets.token_hex(4)}"
        ms, status, payload = await self.post("invoke", INVOKE, {"data": data, "callId": call_id})
        if stale:
            if status == 409 and (payload or {}).get("error", {}).get("code") == "stale-source":
                self.refused += 1
            else:
                self.wrong(f"stale invoke {n} (409 stale-source expected)", status, payload)
            return None
        expected = {
            "success": True,
            "artifactId": self.artifact,
            "cellId": cell,
            "operation": "whole-cell-diff",
            "diffReviewOpened": True,
            "sourceHashAfter": source_hash(new_source),
        }
        if status != 200 or (payload or {}).get("result") != expected:
            return self.wrong(f"invoke {n}", status, payload)
        if timed is not None:
            timed.invoke.append(ms)

        if n % 2 == 0:  # an abort withdraws the open review
            ms, status, payload = await self.post("abort", ABORT, {"data": {"callId": call_id}})
            if status != 200 or (payload or {}).get("result") != {"aborted": True}:
                return self.wrong(f"abort {n}", status, payload)
            if call_id in page.opened:
                self.fail(f"abort {n}: the page was not asked to withdraw the review")
            if timed is not None:
                timed.abort.append(ms)
            return None
        # The person presses Undo; some of these are checked at the end of the phase.
        page.opened.discard(call_id)
        page.scripted.send({"type": "review", "callId": call_id, "decision": "undo"})
        if n % 10 == 5:
            self.undone.append((n, call_id))
        return None

    async def check_undone(self) -> None:
        """The server took every sampled Undo: aborting those calls now answers false.

        Run between timed cycles: a barrier leaves the server a message that the page does
        not answer, and the server's next message to that page then waits for the page's
        delayed acknowledgement (about 40 ms; the bridge socket keeps Nagle's algorithm on).
        """
        undone, self.undone = self.undone, []
        try:
            for page in self.pages:
                await page.scripted.sync()  # every review message sent so far is handled
            for n, call_id in undone:
                body = {"data": {"callId": call_id}}
                _, status, payload = await self.post("abort after Undo", ABORT, body)
                if status != 200 or (payload or {}).get("result") != {"aborted": False}:
                    self.wrong(f"abort after Undo {n} (aborted: false expected)", status, payload)
        except Exception as error:  # a hang or a dropped page: count it
            self.fail(f"checking the Undo decisions: raised {error!r}"[:300])

    async def safe_cycle(self, n: int) -> None:
        """A cycle; a hang or an exception is counted, and the run goes on unless it is dead."""
        before = self.error_count
        try:
            await self.cycle(n)
        except (httpx.TimeoutException, asyncio.TimeoutError) as error:
            self.hangs += 1
            self.fail(f"cycle {n}: no answer in time ({type(error).__name__})")
        except Exception as error:  # a dropped connection or a broken page: count it
            self.fail(f"cycle {n}: raised {error!r}"[:300])
        self.failed_in_a_row = self.failed_in_a_row + 1 if self.error_count > before else 0
        if self.failed_in_a_row >= FAILED_IN_A_ROW:
            raise BenchError(
                f"{FAILED_IN_A_ROW} cycles in a row failed; the last: {self.errors[-1]}"
            )

    async def status(self) -> dict[str, Any] | None:
        """``copilot/api/status``, or None when it does not answer 200."""
        self.calls["status"] = self.calls.get("status", 0) + 1
        try:
            response = await self.http.get("/copilot/api/status")
        except httpx.HTTPError as error:
            self.fail(f"status: raised {error!r}")
            return None
        return response.json() if response.status_code == 200 else None  # type: ignore[no-any-return]


@dataclass
class Report:
    """Everything the run prints."""

    one: Timings
    many: Timings
    rss: dict[str, int] = field(default_factory=dict)  # kB at named moments
    samples: list[int] = field(default_factory=list)  # kB during the soak
    state_updates: int = 0
    status_pages: int | None = None
    closed_pages: int | None = None
    close_seconds: float = 0.0


async def soak(
    pid: int, port: int, token: str, artifact: str, sources: list[str], args: Any
) -> tuple[Soak, Report]:
    """Run both phases against the running server; return the tally and the figures."""
    run = Soak(port, token, artifact, sources)
    report = Report(Timings(), Timings())
    chatter: list[asyncio.Task[None]] = []
    n = 0
    try:
        # Phase 1: the focused page alone.
        await run.connect(0, active=True)
        for _ in range(WARMUP):
            await run.safe_cycle(n)
            n += 1
        run.timed, started = report.one, time.monotonic()
        for _ in range(args.calls):
            await run.safe_cycle(n)
            n += 1
        report.one.cycles, report.one.seconds = args.calls, time.monotonic() - started
        run.timed = None
        await run.check_undone()
        report.rss["one page"] = rss_kb(pid)

        # Phase 2: N pages, the focus moving, the unfocused pages sending state updates.
        await run.connect_many(range(1, args.pages))
        report.rss["all pages connected"] = rss_kb(pid)
        chatter = [asyncio.ensure_future(run.chatter(p)) for p in run.pages]
        started = time.monotonic()
        while time.monotonic() - started < WARMUP_SECONDS:
            await run.safe_cycle(n)
            n += 1
        report.rss["soak start"] = rss_kb(pid)
        report.samples.append(report.rss["soak start"])
        started = time.monotonic()
        next_focus, next_sample = started + FOCUS_EVERY, started + RSS_EVERY
        while (now := time.monotonic()) - started < args.minutes * 60:
            run.timed = report.many
            if now >= next_focus and len(run.pages) > 1:
                try:
                    await run.move_focus()
                except Exception as error:  # the server did not take a state in time
                    run.fail(f"moving the focus: raised {error!r}"[:300])
                next_focus = now + FOCUS_EVERY
                run.timed = None  # the barriers of the move are not the server's latency
            if now >= next_sample:
                report.samples.append(rss_kb(pid))
                next_sample = now + RSS_EVERY
            await run.safe_cycle(n)
            n += 1
            report.many.cycles += 1
            if args.rate > 0:
                # Paced: the next cycle starts on schedule, not as soon as this one ended.
                due = started + report.many.cycles / args.rate
                await asyncio.sleep(max(0.0, due - time.monotonic()))
        report.many.seconds = time.monotonic() - started
        run.timed = None
        report.rss["soak end"] = rss_kb(pid)
        report.samples.append(report.rss["soak end"])
        for task in chatter:
            task.cancel()
        await asyncio.gather(*chatter, return_exceptions=True)
        report.state_updates = sum(p.updates for p in run.pages)
        await run.check_undone()

        # The end: status answers and counts every page; no page left anything behind.
        status = await run.status()
        report.status_pages = None if status is None else status.get("pages")
        for page in run.pages:
            if page.opened:
                run.fail(f"page {page.index}: reviews left open {sorted(page.opened)}")
            while not page.scripted.inbox.empty():
                message = page.scripted.inbox.get_nowait()
                run.fail(f"page {page.index} got {json.dumps(message)[:200]}")
        started = time.monotonic()
        for page in run.pages:
            page.scripted.close()
        while time.monotonic() - started < 30:
            status = await run.status()
            report.closed_pages = None if status is None else status.get("pages")
            if report.closed_pages == 0:
                break
            await asyncio.sleep(0.05)
        report.close_seconds = time.monotonic() - started
    finally:
        for task in chatter:
            task.cancel()
        for page in run.pages:
            with suppress(Exception):
                page.scripted.close()
        await run.http.aclose()
    return run, report


def ratio_line(label: str, one: list[float], many: list[float]) -> str:
    """p95 with N pages over p95 with one, beside the 2x target."""
    if not one or not many:
        return f"  {label:<28}(no values)"
    ratio = percentile(many, 95) / percentile(one, 95)
    return f"  {label:<28}{ratio:>9.2f}x   within {RATIO_TARGET:g}x  {MARK[ratio <= RATIO_TARGET]}"


def print_report(run: Soak, report: Report, pages: int, tracebacks: list[str], rtc: bool) -> int:
    """Print the figures and the findings; return the number of functional problems."""
    one, many = report.one, report.many
    print(
        f"\n{NOTEBOOK}: {CELLS} code cells, one kernel session; real-time collaboration "
        f"{'on' if rtc else 'off'}\ncycle: get-context, invoke, then abort (even) or the page's "
        f"Undo (odd); every tenth invoke stale\n"
        f"phase 1: 1 page, {one.cycles} cycles after {WARMUP} warm-up cycles, "
        f"{one.seconds:.1f} s\n"
        f"phase 2: {pages} pages, {many.cycles} cycles in {many.seconds:.0f} s "
        f"({many.cycles / max(many.seconds, 1e-9):.0f} a second) after "
        f"{WARMUP_SECONDS:g} s of warm-up; focus moved {run.moves} times; "
        f"{report.state_updates} state updates from unfocused pages"
    )
    print(f"\n  {'round trips (client)':<28}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}")
    for label, values in (
        ("get-context, 1 page", one.get_context),
        (f"get-context, {pages} pages", many.get_context),
        ("invoke, 1 page", one.invoke),
        (f"invoke, {pages} pages", many.invoke),
        ("abort, 1 page", one.abort),
        (f"abort, {pages} pages", many.abort),
    ):
        print(row(label, values))
    print(f"\n  p95({pages} pages) / p95(1 page):")
    print(ratio_line("get-context", one.get_context, many.get_context))
    print(ratio_line("invoke", one.invoke, many.invoke))

    rss = report.rss
    start, end = rss.get("soak start"), rss.get("soak end")
    print("\nserver memory (VmRSS):")
    print(f"  {'1 page, after phase 1':<28}{rss.get('one page', 0) / 1024:>9.1f} MB")
    connected = rss.get("all pages connected", 0)
    per_page = (connected - rss.get("one page", 0)) / max(pages - 1, 1)
    print(
        f"  {f'{pages} pages connected':<28}{connected / 1024:>9.1f} MB ({per_page:+.1f} kB a page)"
    )
    if start and end:
        growth = (end - start) / start * 100.0
        invokes = run.calls.get("invoke", 0)
        print(f"  {'soak start (after warm-up)':<28}{start / 1024:>9.1f} MB")
        print(f"  {'soak peak':<28}{max(report.samples) / 1024:>9.1f} MB")
        print(
            f"  {'soak end':<28}{end / 1024:>9.1f} MB   growth {growth:+.1f}%   "
            f"under {GROWTH_TARGET:g}%  {MARK[growth < GROWTH_TARGET]}"
        )
        cycles = max(many.cycles, 1)
        print(
            f"  growth per phase-2 cycle: {(end - start) * 1024 / cycles:+.0f} bytes; the server "
            f"remembers each of the {invokes} invoke calls\n  for "
            f"{CALL_MEMORY_SECONDS / 60:g} minutes (callIds, docs/protocol.md section 4.2)"
        )

    total = sum(run.calls.values())
    kinds = ", ".join(f"{k} {v}" for k, v in run.calls.items())
    print(f"\ncalls: {total} ({kinds})")
    print(f"expected refusals (stale-source): {run.refused}")
    problems, count = list(run.errors), run.error_count
    answered = report.status_pages is not None
    pages_ok = report.status_pages == pages
    print(
        f"status answered at the end: {'yes' if answered else 'NO'}, pages {report.status_pages}"
        f" (expected {pages})  {MARK[answered and pages_ok]}"
    )
    if not (answered and pages_ok):
        problems.append(f"status at the end: pages {report.status_pages}, expected {pages}")
        count += 1
    closed_ok = report.closed_pages == 0
    print(
        f"pages on the server after every socket closed: {report.closed_pages} "
        f"({report.close_seconds:.2f} s)  {MARK[closed_ok]}"
    )
    if not closed_ok:
        problems.append(f"pages still counted after closing: {report.closed_pages}")
        count += 1
    print(f"hangs: {run.hangs}  {MARK[run.hangs == 0]}")
    print(
        f"error lines with tracebacks in the server log: {len(tracebacks)}  {MARK[not tracebacks]}"
    )
    problems += [f"server log: {line[:200]}" for line in tracebacks]
    count += len(tracebacks)
    print(f"errors: {count}  {MARK[not count]}")
    for problem in problems[:SHOWN_ERRORS]:
        print(f"  {problem}")
    return count


def server_tracebacks(log: Path) -> list[str]:
    """Error lines of the server log, and each traceback's last line (the exception)."""
    lines, found = log.read_text(errors="replace").splitlines(), []
    for i, line in enumerate(lines):
        if line.startswith("[E "):
            found.append(line)
        elif line.startswith("Traceback"):
            ends = (e for e in lines[i + 1 :] if e and not e.startswith(" "))
            found.append(f"Traceback ... {next(ends, '')}")
    return found


def run(args: Any) -> int:
    """Start the server, run both phases and print; return the number of problems."""
    with tempfile.TemporaryDirectory(prefix="copilot-soak-bench-") as name:
        tmp = Path(name)
        (tmp / "nb").mkdir()
        sources = make_notebook(tmp / "nb" / NOTEBOOK)
        with lab_server(tmp) as client:
            pid = server_pid(tmp)
            body = {"path": NOTEBOOK, "name": NOTEBOOK, "type": "notebook"}
            _, status, raw = client.call(
                "POST", "/api/sessions", json.dumps({**body, "kernel": {"name": "python3"}})
            )
            if status != 201:
                raise BenchError(f"could not start a kernel session: {status} {raw[:300]!r}")
            session = json.loads(raw)["id"]
            found: dict[str, Any] = {}

            def registered() -> bool:
                tools = client.get("/copilot/api/tools") or {}
                mine = [r for r in tools.get("registrations", []) if r.get("path") == NOTEBOOK]
                found.update(mine[0] if mine else {})
                return bool(found.get("artifactId"))

            wait_for(registered, f"a kernel session registration for {NOTEBOOK}", 120)
            time.sleep(3)  # the kernel's start-up (no client watches its state) settles
            rtc = bool((client.get("/copilot/api/status") or {}).get("rtc"))
            coro = soak(pid, client.port, client.token, found["artifactId"], sources, args)
            tally, report = asyncio.run(coro)
            teardown = Client(client.port, client.token)  # a fresh connection after the soak
            _, status, raw = teardown.call("DELETE", f"/api/sessions/{session}")
            if status != 204:
                tally.fail(f"deleting the session: {status} {raw[:200]!r}")
            tracebacks = server_tracebacks(tmp / "server.log")  # before the shutdown's own
    return print_report(tally, report, args.pages, tracebacks, rtc)


def main() -> int:
    """Parse arguments and run; exit 1 on a functional failure (never for timings)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--pages", type=int, help="pages connected in phase 2 (200; 20 with --quick)"
    )
    parser.add_argument("--minutes", type=float, help="length of phase 2 (10; 1/3 with --quick)")
    parser.add_argument("--calls", type=int, help="timed cycles in phase 1 (200; 50 with --quick)")
    parser.add_argument(
        "--rate",
        type=float,
        default=20.0,
        help="phase-2 cycles a second, all pages together (20; 0: as fast as possible)",
    )
    parser.add_argument("--quick", action="store_true", help="small smoke run for CI")
    args = parser.parse_args()
    args.pages = args.pages or (20 if args.quick else 200)
    args.minutes = args.minutes or (1 / 3 if args.quick else 10.0)
    args.calls = args.calls or (50 if args.quick else 200)
    if args.pages < 1 or args.minutes <= 0 or args.calls < 1:
        parser.error("--pages, --minutes and --calls must be positive")
    started = time.monotonic()
    try:
        problems = run(args)
    except BenchError as error:
        print(f"FAILED: {error}", file=sys.stderr)
        return 1
    print(f"\nrun time {time.monotonic() - started:.0f} s")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
