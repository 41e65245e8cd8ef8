"""Benchmark the kernel variables tools: listing 1,000 variables, describing a 1 GB DataFrame.

A real IPython kernel, started with jupyter_client, idle between calls. Each call runs the
server's own code path (``KernelVariables._ask`` in ``jupyter_copilot/page/kernelvars.py``: a new
kernel client with its own session, one silent execute request, the answer parsed and checked
against the budget); only the look-up of the active notebook's session is replaced by this
kernel, and the MCP and HTTP hops in front of it are not counted. Prints p50 and p95 per case
beside the target (p95 under 100 ms). The exit status is 1 only when an answer is wrong (not
the listing or the description the setup made), never for a figure over its target.

    python bench/kernel_variables.py [--calls 50] [--frame-gb 1.0] [--quick]

``--quick`` (CI's smoke run): 10 calls and a 64 MiB frame.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from typing import Any

from jupyter_client.manager import AsyncKernelManager

from jupyter_copilot.page.dispatcher import Dispatcher
from jupyter_copilot.page.kernelvars import KernelVariables
from jupyter_copilot.page.sessions import Registrations

TARGET_MS = 100.0


class BenchVariables(KernelVariables):
    """The server's service, asking one given kernel."""

    def __init__(self, kernel: Any) -> None:
        super().__init__(
            Dispatcher(),
            Registrations(lambda path: None),
            None,
            None,
            lambda path: None,
            lambda: {"kernel_inspect_timeout_seconds": 2.0, "context_budget_bytes": 8192},
        )
        self._kernel = kernel

    def active_kernel(self) -> Any:
        return self._kernel


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


async def timed(label: str, calls: int, run: Any) -> list[float]:
    await run()  # warm-up
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        answer = await run()
        times.append((time.perf_counter() - started) * 1000.0)
    p95 = percentile(times, 0.95)
    verdict = "ok" if p95 < TARGET_MS else "OVER TARGET"
    print(
        f"{label}: p50 {statistics.median(times):.1f} ms, p95 {p95:.1f} ms, "
        f"max {max(times):.1f} ms over {calls} calls (target p95 < {TARGET_MS:g} ms: {verdict})"
    )
    return [answer]


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--frame-gb", type=float, default=1.0)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.calls, args.frame_gb = 10, 1 / 16
    manager = AsyncKernelManager(kernel_name="python3")
    await manager.start_kernel()
    client = manager.client()
    client.start_channels()
    try:
        await client.wait_for_ready(timeout=60)
        columns = 8
        rows = int(args.frame_gb * 2**30 / (8 * columns))
        setup = (
            "import numpy as np, pandas as pd\n"
            "for _i in range(1000): globals()[f'v{_i:04d}'] = _i\n"
            f"big = pd.DataFrame(np.random.default_rng(0).random(({rows}, {columns})),"
            f" columns=[f'c{{_j}}' for _j in range({columns})])\n"
            "big.iloc[::97, 3] = np.nan\n"
            "del _i\n"
        )
        reply = await client.execute_interactive(setup, timeout=600)
        assert reply["content"]["status"] == "ok", reply["content"]
        service = BenchVariables(manager)
        listed = await timed("list 1,000 variables", args.calls, service.list)
        answer = listed[0]
        print(
            f"  listed {len(answer['variables'])} of {answer['total']} within the budget, "
            f"omitted {answer['omitted']}"
        )
        described = await timed(
            f"describe a {rows * columns * 8 / 2**30:.2f} GiB DataFrame ({rows:,} x {columns})",
            args.calls,
            lambda: service.describe("big"),
        )
        frame = described[0]
        wrong = []
        if answer["total"] != 1001 or answer["omitted"] + len(answer["variables"]) != 1001:
            wrong.append("the listing")
        if frame["shape"] != [rows, columns] or len(frame["head"]) != 5:
            wrong.append("the description")
        print(
            f"  bytes {frame['bytes']:,}, head rows {len(frame['head'])}, nulls counted for "
            f"{len(frame['columns']) - frame['nullsNotCounted']} of {len(frame['columns'])} "
            "columns (a frame of more than 1,000,000 rows is not scanned for nulls)"
        )
    finally:
        client.stop_channels()
        await manager.shutdown_kernel(now=True)
    if wrong:
        print(f"WRONG: {', '.join(wrong)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
