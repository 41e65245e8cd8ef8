"""Benchmark jupyter-copilot: invoke-to-review-open latency, 10 cells against 2,000.

Real ``jupyter lab`` and headless Chromium (the server and page helpers of
``context_latency.py``), one notebook of 10 cells and one of 2,000, each in a JupyterLab
page of its own, called in turn, one call each, so that both notebooks are timed under the
same load of the machine. In each: sequential ``edit-cell.invoke`` calls on one cell, each
a new proposal that supersedes the previous review; then sequential ``insert-cell.invoke``
calls after the same cell, each pending cell withdrawn (``insert-cell.abort``) before the
next call; then sequential ``run-cell.invoke`` requests for the same cell, each withdrawn
(``run-cell.abort``) once its run card shows, so nothing runs; then sequential
``edit-cell.invoke`` calls each withdrawn by ``edit-cell.abort`` once its review shows.
Every abort is timed too: it answers once the server has refused Keep and told the page, so
back to back, the page's withdrawal is drawn during the next call. Each kind runs twice: on
a page at rest (a call is made once the page has drawn the one before), then back to back,
as an agent makes its calls; the targets apply to both. It prints the client round trip (an
edit or insert call is answered once the page shows the review; a run request is timed to
the moment its card enters the side panel, by the page's clock), the server's own check
time from the ``edit/review-opened`` events (read from ``/api/events/subscribe``), and what
each call cost the page's main thread (Chromium's task, style and layout durations, opening
and closing included), then the 2,000-cell/10-cell ratio of each p95 and each abort's p95
against its open's. Last, rounds of concurrent calls on distinct cells of the long
notebook. Before the calls, it prints what drawing a plain change in each notebook costs the
page with no jupyter-copilot code at all: the floor under the long notebook's figures back to
back, since a call that reaches the page while it draws waits for that frame.

Nothing is kept: every review is superseded, withdrawn or undone, so each cell's hash stays
the same. The exit status is 1 only when something is functionally wrong (a call not
answered 200, a review or card missing from the page, a decision not reported, a cell
changed), never for timings.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import secrets
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path
from typing import Any, TypeVar

import httpx
import nbformat
from context_latency import (
    MARK,
    SHOW_JS,
    SOURCES_JS,
    BenchError,
    Client,
    Traffic,
    lab_pages,
    lab_server,
    percentile,
    wait_for,
)
from tornado.httpclient import HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect

from jupyter_copilot.page.context import source_hash

SHORT, LONG = 10, 2000  # cells of the two notebooks (--quick: 10 and 300)
CELLS, PARALLEL, TARGET = 24, 20, 2  # soak.py's notebook; concurrent calls; the cell reviewed
ACTIONS = "/copilot/api/actions/jupyter_copilot.notebook."
GET_CONTEXT, INVOKE = ACTIONS + "get-context", ACTIONS + "edit-cell.invoke"
INSERT, INSERT_ABORT = ACTIONS + "insert-cell.invoke", ACTIONS + "insert-cell.abort"
RUN, RUN_ABORT = ACTIONS + "run-cell.invoke", ACTIONS + "run-cell.abort"
EDIT_ABORT = ACTIONS + "edit-cell.abort"
EVENTS = "https://events.jupyter.org/jupyter_copilot/edit/"
OPENED = EVENTS + "review-opened/v1"  # the server's latencyMs and checkMs of each call
DECISION, REFUSED = EVENTS + "decision/v1", EVENTS + "refused/v1"
ABORTED = EVENTS + "aborted/v1"
WARMUP, P95_TARGET_MS, RATIO_TARGET = 5, 50.0, 1.3
#: Calls of each kind per notebook and pass: a p95 then rests on the 10 slowest calls, not
#: 5, so that one stray pause of the machine moves it less.
CALLS = 200
#: Each kind is timed twice per notebook: calls on a page at rest (the targets), then back
#: to back, where a call can wait for the page to draw the one before (no target).
PASSES = (True, False)
#: How many cells of the notebook in front JupyterLab has not rendered yet.
PLACEHOLDERS_JS = """() => window.jupyterapp.shell.currentWidget.content.widgets
    .filter(w => w.isPlaceholder()).length"""
REVIEW_IDS_JS = (
    "() => [...document.querySelectorAll('.jp-Copilot-Review')].map(n => n.dataset.callId)"
)
RUN_CARD_SELECTOR = ".jp-Copilot-Approval[data-kind='run']"
PANEL_JS = "document.getElementById('jupyter-copilot-panel')"
#: Records, in the side panel, when each run card appears (ms since the epoch, as the page
#: clock reads it); installed once, before the first run request. ``__benchRunCard(n)``
#: resolves with the time of card ``n`` (counted from 0), or null after 30 s. It waits
#: without polling: polling by animation frame would make the page draw frames, and in
#: 2,000 cells each frame costs JupyterLab milliseconds that would delay the request.
RUN_CARDS_JS = (
    """selector => {
    if (window.__benchRunCards) { return; }
    const seen = window.__benchRunCards = [];
    const waiting = [];
    window.__benchRunCard = n => new Promise(resolve => {
        if (seen.length > n) { resolve(seen[n]); return; }
        waiting.push([n, resolve]);
        setTimeout(() => resolve(null), 30000);
    });
    const panel = """
    + PANEL_JS
    + """;
    new MutationObserver(records => {
        const now = performance.timeOrigin + performance.now();
        for (const record of records) {
            for (const node of record.addedNodes) {
                if (node instanceof Element
                    && (node.matches(selector) || node.querySelector(selector))) {
                    seen.push(now);
                    for (const [n, resolve] of waiting) {
                        if (seen.length > n) { resolve(seen[n]); }
                    }
                }
            }
        }
    }).observe(panel, {childList: true, subtree: true});
}"""
)
#: Resolves after the next frame is drawn, so that a call's rendering is counted with it.
FRAME_JS = "() => new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)))"
#: Resolves true once the page draws three frames in a row, each within 20 ms of the one
#: before (nothing left to draw from an earlier call), or false after two seconds of frames.
REST_JS = """() => new Promise(resolve => {
    let last = 0, calm = 0;
    const until = performance.now() + 2000;
    const step = t => {
        calm = last && t - last < 20 ? calm + 1 : 0;
        last = t;
        if (calm >= 3 || t > until) { setTimeout(() => resolve(calm >= 3), 0); }
        else { requestAnimationFrame(step); }
    };
    requestAnimationFrame(step);
})"""
#: JupyterLab's own cost of drawing a change in the notebook, with no jupyter-copilot code:
#: a plain block of a pending cell's height appended to the target cell, then removed, each
#: change timed from the start of the frame that draws it to the task after that frame.
FLOOR_JS = """async ([index, count]) => {
    const cell = window.jupyterapp.shell.currentWidget.content.widgets[index];
    const frame = () => new Promise(resolve => requestAnimationFrame(() => {
        const start = performance.now();
        setTimeout(() => resolve(performance.now() - start), 0);
    }));
    const added = [], removed = [];
    for (let i = 0; i < count; i++) {
        await frame();
        const block = document.createElement('div');
        block.style.height = '120px';
        block.textContent = 'a change';
        cell.node.appendChild(block);
        added.push(await frame());
        block.remove();
        removed.push(await frame());
    }
    return [added, removed];
}"""
#: Chromium's cumulative main-thread figures (``Performance.getMetrics``), in seconds.
METRICS = {"TaskDuration": "task", "RecalcStyleDuration": "style", "LayoutDuration": "layout"}
KINDS = {
    "edit": "edit-cell.invoke -> review open in the cell, superseding the previous one",
    "insert": "insert-cell.invoke -> pending cell shown, withdrawn by insert-cell.abort after",
    "run": "run-cell.invoke -> run card shown in the side panel, withdrawn by run-cell.abort",
    "withdraw": "edit-cell.invoke -> review open, then edit-cell.abort -> review withdrawn",
}
#: The kinds whose calls are each withdrawn by their abort action, timed too.
ABORTED_KINDS = ("insert", "run", "withdraw")
T = TypeVar("T")


@dataclass
class Calls:
    """The outcome of a batch of invoke calls, as the client saw them."""

    opened_key: str = "diffReviewOpened"
    ms: list[float] = field(default_factory=list)
    aborts: list[float] = field(default_factory=list)  # the abort round trips, when timed
    failures: list[str] = field(default_factory=list)

    def record(self, call_id: str, ms: float, status: int, raw: bytes) -> None:
        """Keep the round trip; remember a call that did not open its review."""
        self.ms.append(ms)
        result = json.loads(raw).get("result", {}) if status == 200 else {}
        if result.get(self.opened_key) is not True:
            self.failures.append(f"{call_id}: HTTP {status} {raw[:200]!r}")


def cell_id(index: int) -> str:
    """The explicit nbformat id of cell ``index``."""
    return f"cell-{index:04d}"


def make_notebook(path: Path, count: int = CELLS) -> list[str]:
    """Write a notebook of ``count`` code cells with explicit ids; return the sources."""
    sources = [
        f"def step_{i}(frame):\n"
        f'    """Step {i} of the pipeline."""\n'
        f"    frame = frame.dropna(subset=['price_{i}'])\n"
        f"    return frame.assign(total_{i}=frame['price_{i}'] * {i + 1})"
        for i in range(count)
    ]
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.metadata["language_info"] = {"name": "python", "version": platform.python_version()}
    nb.cells = [nbformat.v4.new_code_cell(s, id=cell_id(i)) for i, s in enumerate(sources)]
    nbformat.write(nb, path)
    return sources


def proposal(source: str, n: int) -> str:
    """A whole-cell proposal that differs from ``source`` and from every other proposal."""
    return source.replace("dropna(", f"dropna(how='any', axis={n % 2}, ") + f"\n# proposal {n}"


def invoke_body(artifact: str, cell: str, source: str, n: int, page: str) -> dict[str, Any]:
    """The request body of one edit invoke call with a new callId."""
    data = {
        "artifactId": artifact,
        "cellId": cell,
        "expectedSourceHash": source_hash(source),
        "newSource": proposal(source, n),
    }
    return {"data": data, "callId": f"bench-{n}-{secrets.token_hex(4)}", "pageId": page}


def insert_body(artifact: str, after: str, n: int, page: str) -> dict[str, Any]:
    """The request body of one insert invoke call with a new callId."""
    source = f"summary = frame.describe()\nsummary.loc['mean']  # insert {n}"
    data = {"artifactId": artifact, "afterCellId": after, "cellType": "code", "source": source}
    return {"data": data, "callId": f"bench-insert-{n}-{secrets.token_hex(4)}", "pageId": page}


def run_body(artifact: str, cell: str, source: str, n: int, page: str) -> dict[str, Any]:
    """The request body of one run request for ``cell``, with the hash of its source."""
    data = {"artifactId": artifact, "cellId": cell, "expectedSourceHash": source_hash(source)}
    return {"data": data, "callId": f"bench-run-{n}-{secrets.token_hex(4)}", "pageId": page}


class Background:
    """An asyncio loop on its own thread, beside Playwright's synchronous API."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 120.0) -> T:
        """Run a coroutine on the loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        """Stop the loop and its thread."""
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


class EventLog:
    """Every event the server emits, from its ``/api/events/subscribe`` WebSocket."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.ws: WebSocketClientConnection | None = None
        self.reader: asyncio.Future[None] | None = None

    async def connect(self, client: Client) -> None:
        """Subscribe, then read in the background until the socket closes."""
        url = f"ws://127.0.0.1:{client.port}/api/events/subscribe"
        auth = {"Authorization": f"token {client.token}"}
        self.ws = await websocket_connect(HTTPRequest(url, headers=auth))
        self.reader = asyncio.ensure_future(self._read(self.ws))

    async def _read(self, ws: WebSocketClientConnection) -> None:
        while (message := await ws.read_message()) is not None:
            self.events.append(json.loads(message))

    def of(self, schema_id: str, page_ref: str | None = None) -> list[dict[str, Any]]:
        """The events of one schema so far, oldest first; of one page when given its ref."""
        return [
            e
            for e in list(self.events)
            if e.get("schema_id") == schema_id and page_ref in (None, e.get("pageRef"))
        ]

    def wait_opened(self, count: int) -> list[dict[str, Any]]:
        """Wait until ``count`` review-opened events arrived; return them all."""
        wait_for(lambda: len(self.of(OPENED)) >= count, f"{count} review-opened events", 30)
        return self.of(OPENED)


@contextmanager
def event_log(background: Background, client: Client) -> Iterator[EventLog]:
    """An :class:`EventLog` subscribed for the duration of the block."""
    log = EventLog()
    background.run(log.connect(client), 30)
    try:
        yield log
    finally:
        if log.ws is not None:
            background.loop.call_soon_threadsafe(log.ws.close)


def notebook_name(cells: int) -> str:
    """The file of the notebook of ``cells`` cells."""
    return f"cells-{cells}.ipynb"


def open_notebook(page: Any, client: Client, page_id: str, name: str, close: list[str]) -> str:
    """Open a notebook in front (closing others), select its first cell; return its artifactId.

    It returns once JupyterLab has rendered every cell: it renders a long notebook's cells
    in the background, minutes of work in which every new cell editor makes the browser
    recalculate the style of the whole notebook, so figures taken meanwhile would be
    JupyterLab's, not the review's.
    """
    widget, _ = page.evaluate(SHOW_JS, [[name], close, name])
    started = time.monotonic()
    wait_for(lambda: page.evaluate(PLACEHOLDERS_JS) == 0, f"every cell of {name} rendered", 900)
    rendered = time.monotonic() - started
    page.locator(f"[id='{widget}'] .jp-Cell").first.locator(".jp-InputPrompt").click()
    found: dict[str, Any] = {}

    def selected() -> bool:
        _, status, raw = client.call(
            "POST", GET_CONTEXT, json.dumps({"data": {}, "pageId": page_id})
        )
        entries = json.loads(raw)["result"]["customContext"] if status == 200 else []
        cells = [e["value"] for e in entries if e.get("name") == "notebook_selected_cell"]
        found.update(cells[0] if cells else {})
        return bool(cells) and cells[0].get("cellId") == cell_id(0)

    wait_for(selected, f"{cell_id(0)} of {name} as the selected cell in get-context", 120)

    def registered() -> bool:
        registrations = (client.get("/copilot/api/tools") or {}).get("registrations", [])
        return any(r.get("path") == name for r in registrations)

    wait_for(registered, f"a kernel session registration for {name}", 120)
    wait_for(client.kernels_idle, "idle kernels", 120)
    time.sleep(2)
    wait_quiet(page, f"the click on {name}")
    print(f"{name}: every cell rendered {rendered:.0f} s after it opened")
    return str(found["artifactId"])


def wait_quiet(page: Any, what: str) -> None:
    """Wait until the page draws three frames in a row within 20 ms of each other.

    In a notebook of 2,000 rendered cells a click costs JupyterLab seconds of layout after
    the click itself (measured here: 2.6 to 20 s, with no review open), so the calls are
    timed only once the page is quiet again.
    """
    deadline = time.monotonic() + 180
    while not page.evaluate(REST_JS):
        if time.monotonic() > deadline:
            raise BenchError(f"the page never became quiet after {what}")


def review_ids(page: Any) -> list[str]:
    """The callIds of the reviews shown in the page."""
    return page.evaluate(REVIEW_IDS_JS)


async def concurrent_round(client: Client, bodies: list[dict[str, Any]]) -> tuple[float, Calls]:
    """Fire the calls together with asyncio.gather; return (wall ms, outcomes)."""
    headers = {"Authorization": f"token {client.token}", "Content-Type": "application/json"}
    limits = httpx.Limits(max_connections=len(bodies), max_keepalive_connections=len(bodies))
    base = f"http://127.0.0.1:{client.port}"
    async with httpx.AsyncClient(base_url=base, headers=headers, limits=limits, timeout=30) as http:
        await asyncio.gather(*(http.get("/api/status") for _ in bodies))  # open the connections

        async def one(body: dict[str, Any]) -> tuple[float, int, bytes]:
            started = time.perf_counter()
            response = await http.post(INVOKE, content=json.dumps(body))
            return (time.perf_counter() - started) * 1000.0, response.status_code, response.content

        started = time.perf_counter()
        answers = await asyncio.gather(*(one(body) for body in bodies))
        wall = (time.perf_counter() - started) * 1000.0
    calls = Calls()
    for body, answer in zip(bodies, answers, strict=True):
        calls.record(body["callId"], *answer)
    return wall, calls


def row(label: str, values: list[float], target: str = "", ok: bool = True) -> str:
    """One table line: p50, p95, max and, when given, the target and its verdict."""
    if not values:
        return f"  {label:<28}{'(no values)':>27}"
    figures = f"{percentile(values, 50):>9.2f}{percentile(values, 95):>9.2f}{max(values):>9.2f}"
    return f"  {label:<28}{figures}" + (f"   {target}  {MARK[ok]}" if target else "")


def collaboration_on(tmp: Path) -> bool:
    """Whether the server loaded real-time collaboration (checkMs then reads the Y document)."""
    log = (tmp / "server.log").read_text(errors="replace")
    return "jupyter_server_ydoc | extension was successfully loaded" in log


@dataclass
class Phase:
    """The figures of one kind of call in one notebook."""

    calls: Calls
    opened: list[dict[str, Any]]
    main_thread: dict[str, float]  # ms per call: task, style, layout

    @property
    def p95(self) -> float:
        """The client round trip's p95."""
        return percentile(self.calls.ms, 95) if self.calls.ms else float("nan")


class MainThread:
    """Chromium's cumulative main-thread durations of the page, over CDP."""

    def __init__(self, page: Any) -> None:
        self.cdp = page.context.new_cdp_session(page)
        self.cdp.send("Performance.enable")

    def read(self) -> dict[str, float]:
        """The task, style and layout durations so far, in milliseconds."""
        metrics = self.cdp.send("Performance.getMetrics")["metrics"]
        return {METRICS[m["name"]]: m["value"] * 1000 for m in metrics if m["name"] in METRICS}


@dataclass
class Bench:
    """One server and one page; the notebook in front and the server's event stream."""

    background: Background
    page: Any
    client: Client
    events: EventLog
    page_id: str
    main_thread: MainThread
    cells: int  # of the notebook this page holds
    artifact: str = ""
    page_ref: str = ""  # the page as the server's events name it, from its first review
    pages: list[Any] = field(default_factory=list)  # every page of the run, to wait for
    sources: list[str] = field(default_factory=list)
    undo_pressed: int = 0
    runner: Client | None = None  # a second connection, for the run requests that wait
    at_rest: bool = True  # each call waits until the page has drawn what came before

    def rest(self) -> None:
        """Before a timed call: let every page finish drawing the calls before it."""
        if self.at_rest:
            for page in self.pages or [self.page]:
                wait_quiet(page, "the call before")

    def open(self, sources: list[str]) -> None:
        """Open this page's notebook and make it the one the calls target."""
        name = notebook_name(self.cells)
        self.artifact = open_notebook(self.page, self.client, self.page_id, name, [])
        self.sources = sources

    def body(self, index: int, n: int) -> dict[str, Any]:
        """An invoke call on cell ``index`` with proposal ``n`` and a new callId."""
        return invoke_body(self.artifact, cell_id(index), self.sources[index], n, self.page_id)

    def edit(self, n: int, calls: Calls) -> None:
        """One edit call on the target cell; it supersedes the review before it."""
        body = self.body(TARGET, n)
        self.open_review(INVOKE, body, calls)

    def insert(self, n: int, calls: Calls) -> None:
        """One insert call after the target cell; its pending cell is withdrawn after."""
        body = insert_body(self.artifact, cell_id(TARGET), n, self.page_id)
        self.open_review(INSERT, body, calls)
        self.abort(INSERT_ABORT, body["callId"], calls)
        self.page.evaluate(FRAME_JS)

    def withdraw(self, n: int, calls: Calls) -> None:
        """One edit call on the target cell, then its abort, which withdraws the review."""
        body = self.body(TARGET, n)
        self.open_review(INVOKE, body, calls)
        self.abort(EDIT_ABORT, body["callId"], calls)
        # The abort answers once the page has been told; the page withdraws the review when
        # the message reaches it (docs/protocol.md section 4.3), which it must within 5 s.
        with suppress(Exception):
            self.page.wait_for_function(f"() => !({REVIEW_IDS_JS})().length", timeout=5000)
        if review_ids(self.page):
            calls.failures.append(f"{body['callId']}: the review stayed after the abort")
        self.page.evaluate(FRAME_JS)

    def open_review(self, action: str, body: dict[str, Any], calls: Calls) -> None:
        """Make the timed call ``body`` to ``action``; once the page has drawn it, check that
        its review is the only one shown."""
        self.rest()
        ms, status, raw = self.client.call("POST", action, json.dumps(body))
        calls.record(body["callId"], ms, status, raw)
        self.page.evaluate(FRAME_JS)  # the review drawn, outside the timed call
        shown = review_ids(self.page)
        if shown != [body["callId"]]:
            calls.failures.append(f"{body['callId']}: reviews in the page {shown}")

    def abort(self, action: str, call_id: str, calls: Calls) -> None:
        """Withdraw call ``call_id`` with ``action``, timed as the page at rest or not."""
        self.rest()
        body = {"data": {"callId": call_id}, "pageId": self.page_id}
        ms, status, raw = self.client.call("POST", action, json.dumps(body))
        calls.aborts.append(ms)
        if status != 200 or json.loads(raw).get("result", {}).get("aborted") is not True:
            calls.failures.append(f"{call_id}: abort answered {status} {raw[:200]!r}")

    def run_request(self, n: int, calls: Calls) -> None:
        """One run request for the target cell, timed to its card; withdrawn after.

        The call only returns once the request has ended, so it waits on a thread of its own,
        and the card's time is the page's clock when the card entered the side panel.
        """
        body = run_body(self.artifact, cell_id(TARGET), self.sources[TARGET], n, self.page_id)
        self.page.evaluate(RUN_CARDS_JS, RUN_CARD_SELECTOR)
        cards = self.page.evaluate("() => window.__benchRunCards.length")
        if self.runner is None:
            self.runner = Client(self.client.port, self.client.token)
        runner = self.runner
        answer: list[tuple[float, int, bytes]] = []
        thread = threading.Thread(
            target=lambda: answer.append(runner.call("POST", RUN, json.dumps(body)))
        )
        self.rest()
        started = time.time() * 1000.0
        thread.start()
        shown = self.page.evaluate("n => window.__benchRunCard(n)", cards)
        if shown is None:
            calls.failures.append(f"{body['callId']}: no run card within 30 s")
        else:
            calls.ms.append(shown - started)
        self.page.evaluate(FRAME_JS)  # the card drawn, outside the timed call
        self.abort(RUN_ABORT, body["callId"], calls)
        thread.join(30)
        ended = answer[0] if answer else (0.0, 0, b"{}")
        code = json.loads(ended[2] or b"{}").get("error", {}).get("code")
        if (ended[1], code) != (409, "aborted"):
            calls.failures.append(f"{body['callId']}: run answered {ended[1]} {ended[2][:200]!r}")
        # In the panel only: a page-wide query would walk the whole notebook each time.
        with suppress(Exception):
            self.page.wait_for_function(
                f"s => !{PANEL_JS}.querySelector(s)", arg=RUN_CARD_SELECTOR, polling=20
            )
        if self.page.evaluate(f"s => !!{PANEL_JS}.querySelector(s)", RUN_CARD_SELECTOR):
            calls.failures.append(f"{body['callId']}: the run card stayed after the abort")
        self.page.evaluate(FRAME_JS)

    def call(self, kind: str) -> Callable[[int, Calls], None]:
        """The method that makes one call of ``kind``."""
        methods = {"edit": self.edit, "insert": self.insert, "run": self.run_request}
        return {**methods, "withdraw": self.withdraw}[kind]

    def concurrent_phase(self, rounds: int) -> list[str]:
        """Rounds of :data:`PARALLEL` calls on distinct cells; each round supersedes the last."""
        seen, walls, calls, missing = len(self.events.of(OPENED)), [], Calls(), 0
        for r in range(rounds):
            bodies = [self.body(i, 1000 * (r + 1) + i) for i in range(1, PARALLEL + 1)]
            wall, outcome = self.background.run(concurrent_round(self.client, bodies))
            walls.append(wall)
            calls.ms += outcome.ms
            calls.failures += outcome.failures
            shown = review_ids(self.page)
            absent = [b["callId"] for b in bodies if b["callId"] not in shown]
            if absent or len(shown) != PARALLEL:
                missing += 1
                calls.failures.append(f"round {r + 1}: {len(shown)} reviews shown; absent {absent}")
        opened = self.events.wait_opened(seen + rounds * PARALLEL)[seen:]
        print(
            f"\n{rounds} x {PARALLEL} concurrent edit calls on {PARALLEL} distinct cells of "
            f"{notebook_name(self.cells)}, fired together with asyncio.gather (no latency target)"
        )
        print(f"  {'':<28}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}")
        print(row("invoke round trip (client)", calls.ms))
        print(row("checkMs (server event)", [e["checkMs"] for e in opened]))
        print(row("wall time of one round", walls))
        verdict = "all shown" if not missing else f"MISSING in {missing} round(s)"
        print(f"  {PARALLEL} reviews in the page after each round: {verdict}  {MARK[not missing]}")
        self.undo_all()
        return calls.failures

    def undo_all(self) -> None:
        """Press Undo on every open review, as a person would."""
        undo = self.page.locator(".jp-Copilot-ReviewUndo")
        for _ in range(2 * PARALLEL):
            if not undo.count():
                return
            undo.first.click(timeout=120_000)  # seconds for JupyterLab in 2,000 cells
            self.undo_pressed += 1
            wait_quiet(self.page, "Undo")
        raise BenchError("Undo does not close the reviews")

    def decisions(self) -> dict[str, int]:
        """How many decision events of each kind arrived."""
        counts: dict[str, int] = {}
        for event in self.events.of(DECISION):
            counts[event["decision"]] = counts.get(event["decision"], 0) + 1
        return counts

    def withdrawn(self) -> list[dict[str, Any]]:
        """The aborted events of calls whose open review the page withdrew."""
        return [e for e in self.events.of(ABORTED) if e.get("withdrawn") is True]


def check_outcome(benches: list[Bench], calls: int, rounds: int) -> list[str]:
    """Every decision reported, no refusal, no review left in any page, no cell changed.

    ``benches``: every page of the run; the events are the server's, so of them all.
    """
    server = benches[0]  # its helpers read the server's events, the same for every page
    phases = len(benches) * len(PASSES)  # of each kind
    edits = phases * (WARMUP + calls)
    superseded = edits - phases + max(rounds - 1, 0) * PARALLEL
    undone = phases + (PARALLEL if rounds else 0)
    expected = {k: v for k, v in {"superseded": superseded, "undo": undone}.items() if v}
    with suppress(BenchError):  # a shortfall is reported below
        wait_for(lambda: server.decisions() == expected, "the decision events", 15)
    counts = server.decisions()
    # Every pending cell and every review of the withdraw kind is withdrawn by its abort.
    inserts = 2 * phases * (WARMUP + calls)
    with suppress(BenchError):
        wait_for(lambda: len(server.withdrawn()) >= inserts, "the aborted events", 15)
    withdrawn = len(server.withdrawn())
    pressed = sum(bench.undo_pressed for bench in benches)
    ok = (counts, pressed, withdrawn) == (expected, undone, inserts)
    print(f"\ndecision events: {counts}; expected {expected}  {MARK[ok]}")
    print(f"pending cells and reviews withdrawn on abort: {withdrawn} of {inserts}  {MARK[ok]}")
    problems = [] if ok else [f"decisions {counts}, Undo pressed {pressed} times"]
    # A withdrawn run request is answered `aborted`: expected, one per run request.
    refused = server.events.of(REFUSED)
    runs_aborted = [e for e in refused if (e["operation"], e["code"]) == ("run-cell", "aborted")]
    runs = phases * (WARMUP + calls)
    ok_runs = len(runs_aborted) == runs
    print(f"run requests withdrawn on abort: {len(runs_aborted)} of {runs}  {MARK[ok_runs]}")
    problems += [] if ok_runs else [f"{len(runs_aborted)} run requests aborted of {runs}"]
    problems += [f"refused: {e['code']}" for e in refused if e not in runs_aborted]
    for bench in benches:
        name = notebook_name(bench.cells)
        if review_ids(bench.page):
            problems.append(f"reviews still open in {name}: {review_ids(bench.page)}")
        if bench.page.evaluate(SOURCES_JS) != bench.sources:
            problems.append(f"a cell of {name} changed although nothing was kept")
    return problems


def phase(benches: list[Bench], kind: str, count: int, first: int, at_rest: bool) -> list[Phase]:
    """Time ``count`` calls of one kind in each page, alternating pages call by call.

    Alternating puts the short and the long notebook under the same load of the machine,
    which drifts over minutes; each page gets :data:`WARMUP` calls first. ``at_rest``: each
    call waits until every page has drawn the calls before it; otherwise the calls follow
    each other at once, and a call may wait for the drawing of the last.
    """
    events = benches[0].events
    opens = 0 if kind == "run" else 1  # a run opens no review, so emits no review-opened
    result = [
        Calls("diffReviewOpened" if kind in ("edit", "withdraw") else "reviewOpened")
        for _ in benches
    ]
    total = len(events.of(OPENED))
    for bench in benches:
        bench.at_rest = at_rest
    for n in range(first, first + WARMUP):
        for bench, calls in zip(benches, result, strict=True):
            bench.call(kind)(n, calls)
            total += opens
            if opens and not bench.page_ref:  # its first review: learn how events name it
                bench.page_ref = events.wait_opened(total)[-1]["pageRef"]
    warm = [calls.ms for calls in result]
    for calls in result:
        calls.ms, calls.aborts = [], []
    events.wait_opened(total)
    seen = [len(events.of(OPENED, bench.page_ref)) for bench in benches]
    before = [bench.main_thread.read() for bench in benches]
    for n in range(first + WARMUP, first + WARMUP + count):
        for bench, calls in zip(benches, result, strict=True):
            bench.call(kind)(n, calls)
    after = [bench.main_thread.read() for bench in benches]
    events.wait_opened(total + opens * count * len(benches))
    phases = []
    for i, bench in enumerate(benches):
        opened = events.of(OPENED, bench.page_ref)[seen[i] :] if opens else []
        cost = {key: (after[i][key] - before[i][key]) / count for key in after[i]}
        if kind == "edit":
            bench.undo_all()
        result[i].failures += [] if warm[i] else ["no warm-up call"]
        phases.append(Phase(result[i], opened, cost))
    return phases


def print_floor(benches: list[Bench], count: int) -> None:
    """Print what drawing one change in the notebook costs each page with no jupyter-copilot
    code (:data:`FLOOR_JS`), and the long notebook's p95 against the short one's.

    A call that reaches a page while it draws waits for the frame to end, so back to back
    this is the floor under every open and abort of the long notebook.
    """
    print(
        f"\nJupyterLab drawing a change in the notebook, no jupyter-copilot code: {count} plain "
        f"blocks of a pending cell's height appended to cell {TARGET} and removed, each timed "
        f"from the start of the frame that draws it\n  {'':<28}{'p50 ms':>9}{'p95 ms':>9}"
        f"{'max ms':>9}"
    )
    p95s = []
    for bench in benches:
        bench.rest()
        added, removed = bench.page.evaluate(FLOOR_JS, [TARGET, count])
        print(row(f"{bench.cells:,} cells: appended", added))
        print(row(f"{bench.cells:,} cells: removed", removed))
        p95s.append(percentile(added + removed, 95))
    print(
        f"  p95({benches[-1].cells:,} cells) / p95({benches[0].cells:,} cells) = "
        f"{p95s[-1] / max(p95s[0], 0.1):.2f}x, before any jupyter-copilot code runs"
    )


def print_sizes(
    count: int, sizes: tuple[int, int], phases: dict[tuple[str, int, bool], Phase]
) -> None:
    """Print each kind of call in both notebooks, at rest and back to back side by side, then
    the p95s against their targets: under :data:`P95_TARGET_MS` at rest, the long
    notebook's p95 within :data:`RATIO_TARGET` of the short one's in both passes, and an
    abort's p95 no more than its open's."""
    print(
        f"\n{count} sequential calls of each kind per notebook after {WARMUP} warm-up calls, "
        f"on cell {TARGET} (in view);\n'at rest': each call is made once the page has drawn "
        "three calm frames in a row (within 20 ms of each other) after the call before;\n"
        "'back to back': each call follows the last at once and may wait for its drawing;\n"
        "the page's main thread per call covers opening, drawing and closing the review"
    )
    for kind, title in KINDS.items():
        print(
            f"\n{title}\n  {'':<28}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}"
            f"   page main thread, ms per call:{''.join(f'{k:>8}' for k in METRICS.values())}"
        )
        for size in sizes:
            for at_rest in PASSES:
                phase = phases[kind, size, at_rest]
                cost = "".join(f"{phase.main_thread[key]:>8.1f}" for key in METRICS.values())
                label = f"{size:,} cells: {'at rest' if at_rest else 'back to back'}"
                print(row(label, phase.calls.ms) + f"{'':>33}{cost}")
            for at_rest in PASSES if kind in ABORTED_KINDS else ():
                label = f"{size:,} cells: abort, {'at rest' if at_rest else 'back to back'}"
                print(row(label, phases[kind, size, at_rest].calls.aborts))
            if phases[kind, size, True].opened:
                checks = [e["checkMs"] for e in phases[kind, size, True].opened]
                print(row(f"{size:,} cells: checkMs (server)", checks))
        short, long = (phases[kind, size, True] for size in sizes)
        fast = max(short.p95, long.p95) < P95_TARGET_MS
        print(f"  at rest: round trip p95 in both notebooks < {P95_TARGET_MS:g} ms  {MARK[fast]}")
        for at_rest in PASSES:
            short, long = (phases[kind, size, at_rest] for size in sizes)
            for what, values in (
                ("open", lambda p: p.calls.ms),
                ("abort", lambda p: p.calls.aborts),
            ):
                if what == "abort" and kind not in ABORTED_KINDS:
                    continue
                ratio = percentile(values(long), 95) / percentile(values(short), 95)
                print(
                    f"  {'at rest' if at_rest else 'back to back'}, {what}: p95({sizes[1]:,} "
                    f"cells) / p95({sizes[0]:,} cells) = {ratio:.2f}x, target <= "
                    f"{RATIO_TARGET:g}x  {MARK[ratio <= RATIO_TARGET]}"
                )
            for size in sizes if kind in ABORTED_KINDS else ():
                phase = phases[kind, size, at_rest]
                opened, aborted = phase.p95, percentile(phase.calls.aborts, 95)
                print(
                    f"  {'at rest' if at_rest else 'back to back'}, {size:,} cells: abort p95 "
                    f"{aborted:.1f} ms <= open p95 {opened:.1f} ms  {MARK[aborted <= opened]}"
                )


def run(calls: int, rounds: int, long: int) -> int:
    """Run the phases in both notebooks, print the figures; return the number of failures."""
    with tempfile.TemporaryDirectory(prefix="copilot-edit-bench-") as name:
        tmp = Path(name)
        (tmp / "nb").mkdir()
        sizes = (SHORT, long)
        sources = {n: make_notebook(tmp / "nb" / notebook_name(n), n) for n in sizes}
        background = Background()
        failures: list[str] = []
        phases: dict[tuple[str, int, bool], Phase] = {}
        try:
            with (
                lab_server(tmp) as client,
                lab_pages(client, [Traffic() for _ in sizes]) as pages,
                event_log(background, client) as events,
            ):
                benches = []
                for page, count in zip(pages, sizes, strict=True):
                    page_id = page.get_attribute("#jupyter-copilot-panel", "data-page-id")
                    bench = Bench(
                        background, page, client, events, page_id, MainThread(page), count
                    )
                    bench.pages = pages
                    bench.open(sources[count])
                    benches.append(bench)
                rtc = "on" if collaboration_on(tmp) else "off"
                print(f"real-time collaboration {rtc}")
                print_floor(benches, calls)
                for n, (kind, at_rest) in enumerate(product(KINDS, PASSES)):
                    for bench, timed in zip(
                        benches, phase(benches, kind, calls, 10_000 * n, at_rest), strict=True
                    ):
                        phases[kind, bench.cells, at_rest] = timed
                        failures += timed.calls.failures
                print_sizes(calls, sizes, phases)
                if rounds:
                    failures += benches[1].concurrent_phase(rounds)
                failures += check_outcome(benches, calls, rounds)
        finally:
            background.close()
    total = 2 * len(KINDS) * len(PASSES) * (WARMUP + calls) + rounds * PARALLEL
    print(f"\nfailures: {len(failures)} (of {total} invoke calls)  {MARK[not failures]}")
    for failure in failures[:20]:
        print(f"  {failure}")
    return len(failures)


def main() -> int:
    """Parse arguments and run; exit 1 on a functional failure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, help="calls of each kind per notebook (200; 20 quick)")
    parser.add_argument("--rounds", type=int, help="concurrent rounds of 20 (5; 1 with --quick)")
    parser.add_argument("--cells", type=int, help=f"cells of the long notebook ({LONG}; 300 quick)")
    parser.add_argument("--quick", action="store_true", help="small smoke run for CI")
    args = parser.parse_args()
    started = time.monotonic()
    try:
        failures = run(
            args.calls or (20 if args.quick else CALLS),
            args.rounds if args.rounds is not None else (1 if args.quick else 5),
            args.cells or (300 if args.quick else LONG),
        )
    except BenchError as error:
        print(f"FAILED: {error}", file=sys.stderr)
        return 1
    print(f"\nrun time {time.monotonic() - started:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
