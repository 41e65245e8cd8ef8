"""Benchmark jupyter-copilot: MCP tool-call latency on copilot/mcp, beside REST get-context.

Real ``jupyter lab`` and headless Chromium (the server, page and notebook helpers of
``context_latency.py``), a 10-cell and a 2,000-cell notebook with one cell selected. One real
MCP client at a time (the ``mcp`` SDK over streamable HTTP, the Jupyter token in a header)
makes sequential ``context_snapshot`` and ``notebook_read_selected_cell`` calls, timed on the
client around ``call_tool``: once with ``mode="auto"`` (the SDK negotiates the modern
protocol) and once with ``mode="legacy"`` (the initialize handshake). Each round also makes
one REST get-context call from the same event loop and HTTP library (``httpx2``, keep-alive),
in a rotating order, so the MCP overhead is measured under the same conditions. The server's
own figures come from its events (``/api/events/subscribe``, as in ``edit_latency.py``):
``mcp/tool-call`` (the tool, in the SDK's handler) and ``context/served`` (the page's answer).
Figures only: the exit status is 1 only when calls fail, never for timings.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
from context_latency import (
    GET_CONTEXT,
    STEPS,
    BenchError,
    Traffic,
    lab_page,
    lab_server,
    make_notebooks,
    percentile,
    prepare,
    wait_for,
)
from edit_latency import Background, EventLog, event_log
from mcp import Client as McpClient
from mcp.client.streamable_http import streamable_http_client

SCENARIOS = [STEPS[0], STEPS[1]]  # 10 cells, 1 tab; then 2,000 cells, 1 tab
REST = "REST get-context"
TOOLS = ("context_snapshot", "notebook_read_selected_cell")
CALLS = (REST, *TOOLS)
MODES = ("auto", "legacy")
EVENTS = "https://events.jupyter.org/jupyter_copilot/"
SERVED, TOOL_CALL = EVENTS + "context/served/v1", EVENTS + "mcp/tool-call/v1"
WARMUP, TIMEOUT, SHOWN_FAILURES = 10, 30.0, 10


@dataclass
class Timed:
    """One kind of call: client round trips, the server's figures and what went wrong."""

    ms: list[float] = field(default_factory=list)
    server_ms: list[float] = field(default_factory=list)  # REST: get-context; MCP: the tool
    served_ms: list[float] = field(default_factory=list)  # get-context inside the call
    failures: list[str] = field(default_factory=list)


@dataclass
class Session:
    """One MCP client's run in one scenario, with the REST calls made beside it."""

    mode: str
    protocol: str = "?"
    connect_ms: float = math.nan
    calls: dict[str, Timed] = field(default_factory=lambda: {name: Timed() for name in CALLS})
    order: list[tuple[str, bool]] = field(default_factory=list)  # (call, timed) as made


@asynccontextmanager
async def mcp_client(url: str, headers: dict[str, str], mode: str) -> AsyncIterator[McpClient]:
    """An entered MCP client that sends ``headers`` (the Jupyter token) on every request."""
    http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(TIMEOUT, read=TIMEOUT))
    transport = streamable_http_client(url, http_client=http)
    async with http, McpClient(transport, mode=mode, read_timeout_seconds=TIMEOUT) as client:
        yield client


def tool_problem(tool: str, result: Any, expected: str) -> str | None:
    """Why a tool result is not the selected cell (or its snapshot); ``None`` when it is."""
    if result.is_error:
        return f"isError: {result.content[0].text[:200] if result.content else result}"
    data = result.structured_content
    if data is None or not result.content or json.loads(result.content[0].text) != data:
        return "structured content missing or not the text content"
    if tool == "context_snapshot":
        cell = data.get("selectedCell") or {}
        if not cell.get("readable") or cell.get("sourceBytes") != len(expected.encode("utf-8")):
            return f"no readable selected cell of the right size: {json.dumps(data)[:200]}"
    elif (data.get("cell") or {}).get("source") != expected:
        return f"another cell or none: {json.dumps(data)[:200]}"
    return None


def rest_problem(response: Any, expected: str) -> str | None:
    """Why a get-context answer is not the selected cell; ``None`` when it is."""
    if response.status_code != 200:
        return f"HTTP {response.status_code} {response.text[:200]}"
    entries = response.json()["result"]["customContext"]
    cells = [e["value"] for e in entries if e.get("name") == "notebook_selected_cell"]
    if not cells or cells[0].get("source") != expected:
        return "another cell or none"
    return None


async def measure(base: str, token: str, page_id: str, mode: str, n: int, expected: str) -> Session:
    """Connect one MCP client; time warm-up and then ``n`` rounds of one call of each kind."""
    session, headers = Session(mode), {"Authorization": f"token {token}"}
    body = json.dumps({"data": {}, "pageId": page_id})
    timeout = httpx2.Timeout(TIMEOUT, read=TIMEOUT)
    async with httpx2.AsyncClient(base_url=base, headers=headers, timeout=timeout) as rest:
        await rest.get("/api/status")  # open its keep-alive connection
        started = time.perf_counter()
        async with mcp_client(f"{base}/copilot/mcp", headers, mode) as client:
            session.connect_ms = (time.perf_counter() - started) * 1000.0
            session.protocol = client.protocol_version

            async def one(name: str) -> tuple[float, str | None]:
                started = time.perf_counter()
                if name == REST:
                    response = await rest.post(GET_CONTEXT, content=body)
                    ms = (time.perf_counter() - started) * 1000.0
                    return ms, rest_problem(response, expected)
                result = await client.call_tool(name, {})
                ms = (time.perf_counter() - started) * 1000.0
                return ms, tool_problem(name, result, expected)

            for r in range(WARMUP + n):
                for name in CALLS[r % 3 :] + CALLS[: r % 3]:  # rotate the order every round
                    try:
                        ms, why = await one(name)
                    except Exception as error:  # a transport failure or a timeout: count it
                        ms, why = math.nan, f"raised {error!r}"[:200]
                    session.order.append((name, r >= WARMUP and why is None))
                    if why is not None:
                        session.calls[name].failures.append(f"{mode} {name} round {r + 1}: {why}")
                    elif r >= WARMUP:
                        session.calls[name].ms.append(ms)
    return session


def attribute(session: Session, events: EventLog, seen: tuple[int, int]) -> bool:
    """Give each call its server events (calls are sequential); False when they do not add up."""
    tools = sum(1 for name, _ in session.order if name != REST)
    want = (seen[0] + len(session.order), seen[1] + tools)

    def arrived() -> bool:
        return len(events.of(SERVED)) >= want[0] and len(events.of(TOOL_CALL)) >= want[1]

    with suppress(BenchError):
        wait_for(arrived, "the server's events", 15)
    served, tool_calls = events.of(SERVED)[seen[0] :], events.of(TOOL_CALL)[seen[1] :]
    if (len(served), len(tool_calls)) != (len(session.order), tools):
        return False
    made = iter(tool_calls)
    for (name, timed), event in zip(session.order, served, strict=True):
        server = event if name == REST else next(made)
        if timed and server.get("outcome") in ("served", "ok"):
            session.calls[name].server_ms.append(server["latencyMs"])
            session.calls[name].served_ms.append(event["latencyMs"])
    return True


def p50(values: list[float]) -> float:
    """The median; NaN when there are no values."""
    return percentile(values, 50) if values else math.nan


def print_table(n: int, rows: list[tuple[str, list[Session]]]) -> None:
    """Print every scenario's figures, then the 2,000-cell/10-cell ratios of p95."""
    print(
        f"\n{n} rounds per scenario and client after {WARMUP} warm-up rounds; a round is one "
        f"call of each kind,\nsequential, in a rotating order. Round trips timed on the client; "
        f"'+p50': p50 minus REST's p50.\nFrom the server's events: 'server p50', its latencyMs "
        f"of the call (REST: get-context; MCP: the tool\nin the SDK's handler); 'get-ctx p50', "
        f"the get-context inside the call (the bridge round trip to the page)."
    )
    head = ["p50 ms", "p95 ms", "max ms", "+p50", "server p50", "get-ctx p50", "failures"]
    widths = [8, 8, 8, 8, 12, 13, 10]
    print(f"{'scenario / MCP client':<28}{'call':<30}" + "".join(map(str.rjust, head, widths)))
    p95: dict[tuple[str, str, str], float] = {}
    for label, sessions in rows:
        print(label)
        for s in sessions:
            who = f"  mode={s.mode} ({s.protocol})"
            for name, timed in s.calls.items():
                cells = ["(none)", "", "", "", "", "", str(len(timed.failures))]
                if timed.ms:
                    p95[label, s.mode, name] = percentile(timed.ms, 95)
                    plus = p50(timed.ms) - p50(s.calls[REST].ms)
                    cells[:6] = [
                        f"{p50(timed.ms):.2f}",
                        f"{p95[label, s.mode, name]:.2f}",
                        f"{max(timed.ms):.2f}",
                        "" if name == REST else f"{plus:+.2f}",
                        f"{p50(timed.server_ms):.2f}",
                        f"{p50(timed.served_ms):.2f}",
                    ]
                print(f"{who:<28}{name:<30}" + "".join(map(str.rjust, cells, widths)))
                who = ""
    print("\nMCP client connect (entering the SDK client: transport and negotiation), ms:")
    for label, sessions in rows:
        print(f"  {label:<22}" + ", ".join(f"{s.mode} {s.connect_ms:.1f}" for s in sessions))
    if len(rows) == 2:
        small, large = rows[0][0], rows[1][0]
        print(f"\np95({large}) / p95({small}):")
        for (label, mode, name), value in p95.items():
            if label == small and (large, mode, name) in p95:
                ratio = p95[large, mode, name] / value
                print(f"  {'mode=' + mode:<14}{name:<30}{ratio:>6.2f}x")


def run(n: int, modes: tuple[str, ...]) -> int:
    """Run both scenarios, print the figures; return the number of failed calls."""
    rows: list[tuple[str, list[Session]]] = []
    unmatched = []
    background = Background()
    try:
        with tempfile.TemporaryDirectory(prefix="copilot-mcp-bench-") as name:
            tmp = Path(name)
            (tmp / "nb").mkdir()
            sources = make_notebooks(tmp / "nb")
            with (
                lab_server(tmp) as client,
                lab_page(client, Traffic()) as page,
                event_log(background, client) as events,
            ):
                page_id = page.get_attribute("#jupyter-copilot-panel", "data-page-id")
                base = f"http://127.0.0.1:{client.port}"
                for step in SCENARIOS:
                    expected = sources[step[3]][step[4]]
                    prepare(page, client, page_id, step, expected)
                    sessions = []
                    for mode in modes:
                        seen = len(events.of(SERVED)), len(events.of(TOOL_CALL))
                        coro = measure(base, client.token, page_id, mode, n, expected)
                        try:
                            sessions.append(background.run(coro, 120 + n * 5))
                        except Exception as error:  # the client could not connect
                            raise BenchError(f"MCP client mode={mode}: {error!r}") from error
                        if not attribute(sessions[-1], events, seen):
                            unmatched.append(f"{step[0]}, mode={mode}")
                    rows.append((step[0], sessions))
                    print(f"measured: {step[0]}", flush=True)
                pages = (client.get("/copilot/api/status") or {}).get("pages")
    finally:
        background.close()
    print_table(n, rows)
    if unmatched:
        print(f"server events did not match the calls (no server figures): {unmatched}")
    failed = [(label, s, t) for label, ss in rows for s in ss for t in s.calls.values()]
    failures = sum(len(t.failures) for _, _, t in failed)
    total = len(rows) * len(modes) * len(CALLS) * (WARMUP + n)
    print(f"\npages on the server: {pages}; failed calls: {failures} of {total} (all rounds)")
    for label, _, timed in [f for f in failed if f[2].failures][:SHOWN_FAILURES]:
        print(f"  {label}: {len(timed.failures)} x, the first: {timed.failures[0][:160]}")
    return failures


def main() -> int:
    """Parse arguments and run; exit 1 when calls fail (never for timings)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, help="timed calls of each kind (200; 30 with --quick)")
    parser.add_argument("--mode", choices=[*MODES, "both"], default="both", help="MCP client mode")
    parser.add_argument("--quick", action="store_true", help="small smoke run for CI")
    args = parser.parse_args()
    modes = MODES if args.mode == "both" else (args.mode,)
    started = time.monotonic()
    try:
        failures = run(args.calls or (30 if args.quick else 200), modes)
    except BenchError as error:
        print(f"FAILED: {error}", file=sys.stderr)
        return 1
    print(f"\nrun time {time.monotonic() - started:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
