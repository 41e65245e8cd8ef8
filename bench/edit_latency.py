"""Benchmark jupyter-copilot: notebook_edit_cell invoke-to-review-open latency.

Real ``jupyter lab`` and headless Chromium (the server and page helpers of
``context_latency.py``). Sequential ``edit-cell.invoke`` calls on one cell, each a new
proposal that supersedes the previous review, then rounds of concurrent calls on distinct
cells. Beside the client round trip it prints the server's own figures from the
``edit/review-opened`` events (``latencyMs``, ``checkMs``), read from ``/api/events/subscribe``.
Nothing is kept: every review is superseded or undone, so each cell's hash stays the same.
The exit status is 1 only when something is functionally wrong (a call not answered 200, a
review missing from the page, a decision not reported, a cell changed), never for timings.
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
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
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
    lab_page,
    lab_server,
    percentile,
    wait_for,
)
from tornado.httpclient import HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect

from jupyter_copilot.context import source_hash

NOTEBOOK, CELLS, PARALLEL = "edit.ipynb", 24, 20  # cell 0: sequential; 1..20: concurrent
ACTIONS = "/copilot/api/actions/jupyter_copilot.notebook."
GET_CONTEXT, INVOKE = ACTIONS + "get-context", ACTIONS + "edit-cell.invoke"
EVENTS = "https://events.jupyter.org/jupyter_copilot/edit/"
OPENED = EVENTS + "review-opened/v1"  # the server's latencyMs and checkMs of each call
DECISION, REFUSED = EVENTS + "decision/v1", EVENTS + "refused/v1"
WARMUP, P95_TARGET_MS, CHECK_TARGET_MS = 5, 50.0, 1.0
REVIEW_IDS_JS = (
    "() => [...document.querySelectorAll('.jp-Copilot-Review')].map(n => n.dataset.callId)"
)
T = TypeVar("T")


@dataclass
class Calls:
    """The outcome of a batch of invoke calls, as the client saw them."""

    ms: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def record(self, call_id: str, ms: float, status: int, raw: bytes) -> None:
        """Keep the round trip; remember a call that did not open its review."""
        self.ms.append(ms)
        result = json.loads(raw).get("result", {}) if status == 200 else {}
        if result.get("diffReviewOpened") is not True:
            self.failures.append(f"{call_id}: HTTP {status} {raw[:200]!r}")


def cell_id(index: int) -> str:
    """The explicit nbformat id of cell ``index``."""
    return f"cell-{index:02d}"


def make_notebook(path: Path) -> list[str]:
    """Write a notebook of :data:`CELLS` code cells with explicit ids; return the sources."""
    sources = [
        f"def step_{i}(frame):\n"
        f'    """Step {i} of the pipeline."""\n'
        f"    frame = frame.dropna(subset=['price_{i}'])\n"
        f"    return frame.assign(total_{i}=frame['price_{i}'] * {i + 1})"
        for i in range(CELLS)
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
    """The request body of one invoke call with a new callId."""
    data = {
        "artifactId": artifact,
        "cellId": cell,
        "expectedSourceHash": source_hash(source),
        "newSource": proposal(source, n),
    }
    return {"data": data, "callId": f"bench-{n}-{secrets.token_hex(4)}", "pageId": page}


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

    def of(self, schema_id: str) -> list[dict[str, Any]]:
        """The events of one schema so far, oldest first."""
        return [e for e in list(self.events) if e.get("schema_id") == schema_id]

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


def open_notebook(page: Any, client: Client, page_id: str, source: str) -> str:
    """Open the notebook, select its first cell, wait for its kernel; return the artifactId."""
    widget, _ = page.evaluate(SHOW_JS, [[NOTEBOOK], [], NOTEBOOK])
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

    wait_for(selected, f"{cell_id(0)} as the selected cell in get-context")
    if found.get("source") != source or found.get("expectedSourceHash") != source_hash(source):
        raise BenchError("get-context served another source or hash than the notebook file's")

    def registered() -> bool:
        registrations = (client.get("/copilot/api/tools") or {}).get("registrations", [])
        return any(r.get("path") == NOTEBOOK for r in registrations)

    wait_for(registered, f"a kernel session registration for {NOTEBOOK}", 120)
    wait_for(client.kernels_idle, "idle kernels", 120)
    time.sleep(1)
    return str(found["artifactId"])


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


def print_phase(title: str, calls: Calls, opened: list[dict[str, Any]], targets: bool) -> None:
    """Print the client round trips and the server's figures of one phase."""
    check = [e["checkMs"] for e in opened]
    page = [e["latencyMs"] - e["checkMs"] for e in opened]
    trip_ok = bool(calls.ms) and percentile(calls.ms, 95) < P95_TARGET_MS
    check_ok = bool(check) and percentile(check, 95) < CHECK_TARGET_MS
    trip_target = f"p95 < {P95_TARGET_MS:g} ms" if targets else ""
    check_target = f"p95 < {CHECK_TARGET_MS:g} ms" if targets else ""
    print(f"\n{title}\n  {'':<28}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}")
    print(row("invoke round trip (client)", calls.ms, trip_target, trip_ok))
    print(row("latencyMs (server event)", [e["latencyMs"] for e in opened]))
    print(row("checkMs (server event)", check, check_target, check_ok))
    print(row("latencyMs - checkMs (page)", page))


def collaboration_on(tmp: Path) -> bool:
    """Whether the server loaded real-time collaboration (checkMs then reads the Y document)."""
    log = (tmp / "server.log").read_text(errors="replace")
    return "jupyter_server_ydoc | extension was successfully loaded" in log


@dataclass
class Bench:
    """One server, one page and one open notebook, with the server's event stream."""

    background: Background
    page: Any
    client: Client
    events: EventLog
    page_id: str
    artifact: str
    sources: list[str]
    undo_pressed: int = 0

    def body(self, index: int, n: int) -> dict[str, Any]:
        """An invoke call on cell ``index`` with proposal ``n`` and a new callId."""
        return invoke_body(self.artifact, cell_id(index), self.sources[index], n, self.page_id)

    def sequential(self, first: int, count: int) -> Calls:
        """``count`` calls on cell 0, one after another; each supersedes the last review."""
        calls = Calls()
        for n in range(first, first + count):
            body = self.body(0, n)
            ms, status, raw = self.client.call("POST", INVOKE, json.dumps(body))
            calls.record(body["callId"], ms, status, raw)
            shown = review_ids(self.page)  # outside the timed call
            if shown != [body["callId"]]:
                calls.failures.append(f"{body['callId']}: reviews in the page {shown}")
        return calls

    def sequential_phase(self, count: int) -> list[str]:
        """Warm up, time ``count`` sequential calls, then Undo the last review."""
        warm = self.sequential(0, WARMUP)
        seen = len(self.events.wait_opened(WARMUP))
        calls = self.sequential(WARMUP, count)
        opened = self.events.wait_opened(seen + count)[seen:]
        title = (
            f"{count} sequential invoke calls on one cell, each superseding the previous review\n"
            f"(after {WARMUP} warm-up calls; the first, which loads the review code: "
            f"{warm.ms[0]:.0f} ms)"
        )
        print_phase(title, calls, opened, targets=True)
        self.undo_all()
        return warm.failures + calls.failures

    def concurrent_phase(self, rounds: int) -> list[str]:
        """Rounds of :data:`PARALLEL` calls on cells 1..20; each round supersedes the last."""
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
        title = (
            f"{rounds} x {PARALLEL} concurrent invoke calls on {PARALLEL} distinct cells, "
            f"fired together with asyncio.gather\n(no latency target)"
        )
        print_phase(title, calls, opened, targets=False)
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
            undo.first.click(timeout=10_000)
            self.undo_pressed += 1
        raise BenchError("Undo does not close the reviews")

    def decisions(self) -> dict[str, int]:
        """How many decision events of each kind arrived."""
        counts: dict[str, int] = {}
        for event in self.events.of(DECISION):
            counts[event["decision"]] = counts.get(event["decision"], 0) + 1
        return counts

    def check_outcome(self, calls: int, rounds: int) -> list[str]:
        """Every decision reported, no refusal, no review left, no cell changed."""
        superseded = WARMUP + calls - 1 + (rounds - 1) * PARALLEL
        expected = {"superseded": superseded, "undo": 1 + PARALLEL}
        with suppress(BenchError):  # a shortfall is reported below
            wait_for(lambda: self.decisions() == expected, "the decision events", 15)
        counts = self.decisions()
        ok = counts == expected and self.undo_pressed == 1 + PARALLEL
        print(f"\ndecision events: {counts}; expected {expected}  {MARK[ok]}")
        problems = [] if ok else [f"decisions {counts}, Undo pressed {self.undo_pressed} times"]
        problems += [f"refused: {e.get('code')}" for e in self.events.of(REFUSED)]
        if review_ids(self.page):
            problems.append(f"reviews still open after Undo: {review_ids(self.page)}")
        if self.page.evaluate(SOURCES_JS) != self.sources:
            problems.append("a cell's source changed although nothing was kept")
        return problems


def run(calls: int, rounds: int) -> int:
    """Run both phases, print the figures; return the number of functional failures."""
    with tempfile.TemporaryDirectory(prefix="copilot-edit-bench-") as name:
        tmp = Path(name)
        (tmp / "nb").mkdir()
        sources = make_notebook(tmp / "nb" / NOTEBOOK)
        background = Background()
        try:
            with (
                lab_server(tmp) as client,
                lab_page(client, Traffic()) as page,
                event_log(background, client) as events,
            ):
                page_id = page.get_attribute("#jupyter-copilot-panel", "data-page-id")
                artifact = open_notebook(page, client, page_id, sources[0])
                rtc = "on" if collaboration_on(tmp) else "off"
                print(f"{NOTEBOOK}: {CELLS} code cells; real-time collaboration {rtc}")
                bench = Bench(background, page, client, events, page_id, artifact, sources)
                failures = bench.sequential_phase(calls)
                failures += bench.concurrent_phase(rounds)
                failures += bench.check_outcome(calls, rounds)
        finally:
            background.close()
    total = WARMUP + calls + rounds * PARALLEL
    print(f"\nfailures: {len(failures)} (of {total} invoke calls)  {MARK[not failures]}")
    for failure in failures[:20]:
        print(f"  {failure}")
    return len(failures)


def main() -> int:
    """Parse arguments and run; exit 1 on a functional failure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, help="sequential calls (100; 20 with --quick)")
    parser.add_argument("--rounds", type=int, help="concurrent rounds of 20 (5; 1 with --quick)")
    parser.add_argument("--quick", action="store_true", help="small smoke run for CI")
    args = parser.parse_args()
    started = time.monotonic()
    try:
        failures = run(
            args.calls or (20 if args.quick else 100), args.rounds or (1 if args.quick else 5)
        )
    except BenchError as error:
        print(f"FAILED: {error}", file=sys.stderr)
        return 1
    print(f"\nrun time {time.monotonic() - started:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
