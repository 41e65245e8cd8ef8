"""Fuzz every entry point of a running server with Hypothesis and print what came back.

    python bench/fuzz.py [--inputs N] [--quick]

A real ``jupyter server`` (jupyter-copilot and the demo agent) gets ``N`` generated inputs
(default 10,000), split over the JSON REST endpoints, a page's bridge WebSocket and the
arguments of every MCP tool (see ``tests/fuzzing.py``). It prints the inputs sent, the HTTP
statuses seen, the server errors (5xx other than the contract's 503/504), hangs, the error
lines with tracebacks in the server log, and whether status answered after each batch. The
last line is ``server errors: E of N inputs``; the exit status is 1 when E, the tracebacks
or the hangs are not 0.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests import fuzzing  # noqa: E402


def run(total: int) -> int:
    """Fuzz with ``total`` inputs; the number of problems found."""
    tally = fuzzing.Tally()
    hangs = 0
    batches = 0
    per_kind = max(1, -(-total // 3))  # rounded up: at least ``total`` in all
    budget = settings(
        max_examples=per_kind,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    with tempfile.TemporaryDirectory() as tmp, fuzzing.fuzz_server(Path(tmp)) as server:
        status, data, _ = server.request(
            "POST", "/copilot/api/conversations", json.dumps({"chatOnly": True})
        )
        conversation = json.loads(data)["conversation"]["id"]
        targets = fuzzing.rest_targets(conversation)
        session = fuzzing.mcp_session(server)
        started = time.monotonic()

        @budget
        @given(target=st.integers(0, len(targets) - 1), body=fuzzing.bodies)
        def rest(target: int, body: str) -> None:
            nonlocal hangs
            method, path = targets[target]
            try:
                code, _, _ = server.request(method, path, body)
            except TimeoutError:
                hangs += 1
                return
            tally.count(code, f"{method} {path} {body[:200]!r}")

        @budget
        @given(message=fuzzing.bridge_messages)
        def bridge(message: str) -> None:
            nonlocal hangs
            ws = server.websocket()
            try:
                ws.send(message)
                ws.send(json.dumps({"type": "sync-barrier"}))
                while True:
                    reply = json.loads(ws.recv())
                    if reply.get("type") == "error" and "sync-barrier" in reply["message"]:
                        break
                tally.count(200, "bridge")
            except Exception as e:  # noqa: BLE001 (a dropped page is the finding)
                hangs += 1
                tally.server_errors.append(f"bridge: {type(e).__name__} after {message[:200]!r}")
            finally:
                ws.close()

        @budget
        @given(tool=st.sampled_from(fuzzing.MCP_TOOLS), arguments=fuzzing.json_values)
        def mcp(tool: str, arguments: Any) -> None:
            code, _, _ = fuzzing.mcp_tool_call(server, session, tool, arguments)
            tally.count(code, f"{tool} {json.dumps(arguments)[:200]}")

        answered = True
        for batch in (rest, bridge, mcp):
            batch()
            batches += 1
            answered = answered and server.status()["enabled"] is True
        tracebacks = server.tracebacks()
        elapsed = time.monotonic() - started

    print(f"inputs: {tally.inputs} in {elapsed:.0f} s ({batches} batches: REST, bridge, MCP)")
    print("statuses: " + ", ".join(f"{k}: {v}" for k, v in sorted(tally.statuses.items())))
    print(f"hangs: {hangs}")
    print(f"error lines with tracebacks in the server log: {len(tracebacks)}")
    print(f"status answered after every batch: {'yes' if answered else 'NO'}")
    for line in tally.server_errors[:10]:
        print(f"  server error: {line}")
    print(f"server errors: {len(tally.server_errors)} of {tally.inputs} inputs")
    return len(tally.server_errors) + hangs + len(tracebacks) + (0 if answered else 1)


def main() -> None:
    """Parse the arguments and fuzz."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=10_000, help="inputs in all (default 10000)")
    parser.add_argument("--quick", action="store_true", help="a smoke run of 300 inputs")
    args = parser.parse_args()
    sys.exit(1 if run(300 if args.quick else args.inputs) else 0)


if __name__ == "__main__":
    main()
