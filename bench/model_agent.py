"""Benchmark the built-in model agent against a scripted OpenAI-compatible endpoint.

Prints, next to the shipped demo agent's figures where they compare:

- the time to first token the agent adds: from the endpoint writing its first chunk to our
  ACP client reading the first ``agent_message_chunk`` (same process, same clock), p50 and
  p95 over the turns (goal: p95 under 20 ms);
- start time, from spawning the process to its ACP ``initialize`` answer;
- the agent's memory (VmRSS) after one turn.

No Jupyter server: the agent runs as the server starts it (``python -I -m ...``), with no
MCP server, so that only the model path is measured. Needs the ``models`` extra.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import socket
import statistics
import sys
import time
from typing import Any

import acp
from tornado import httpserver, web

GOAL_P95_MS = 20.0


class Endpoint:
    """A streamed chat completion that notes when it wrote its first chunk."""

    def __init__(self) -> None:
        self.first_chunk: list[float] = []
        self.port = 0

    def start(self) -> None:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        sock.setblocking(False)
        self.port = sock.getsockname()[1]
        app = web.Application([(r"/v1/chat/completions", _Completions, {"endpoint": self})])
        httpserver.HTTPServer(app).add_sockets([sock])


class _Completions(web.RequestHandler):
    def initialize(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint

    async def post(self) -> None:
        self.set_header("Content-Type", "text/event-stream")

        def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
            body = {
                "id": "c",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": "bench",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            return f"data: {json.dumps(body)}\n\n"

        self.write(chunk({"role": "assistant", "content": "Hello"}))
        self.endpoint.first_chunk.append(time.monotonic())
        await self.flush()
        for word in [" from", " the", " bench."]:
            self.write(chunk({"content": word}))
            await self.flush()
        self.write(chunk({}, "stop"))
        usage = {"prompt_tokens": 10, "completion_tokens": 4, "total_tokens": 14}
        self.finish(f"data: {json.dumps({'choices': [], 'usage': usage})}\n\ndata: [DONE]\n\n")


class Client(acp.Client):
    """Notes when the first reply chunk of each turn arrives."""

    def __init__(self) -> None:
        self.first_text: float | None = None

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        if self.first_text is None and getattr(update, "session_update", "") == (
            "agent_message_chunk"
        ):
            self.first_text = time.monotonic()

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise acp.RequestError.method_not_found("session/request_permission")


def rss_mb(pid: int) -> float:
    """The process's resident memory, in MB."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


async def run_agent(module: str, env: dict[str, str], turns: int) -> dict[str, Any]:
    """Start ``module`` as the server would, run ``turns`` turns; its figures."""
    client = Client()
    spawned = time.monotonic()
    command = (sys.executable, "-I", "-m", module)
    env = {**acp.default_environment(), **env}
    async with acp.spawn_agent_process(client, *command, env=env) as (conn, proc):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        started = time.monotonic() - spawned
        session = await conn.new_session(cwd="/", mcp_servers=[])
        added: list[float] = []
        for _ in range(turns):
            client.first_text = None
            await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("hello")])
            added.append(client.first_text or float("nan"))
        rss = rss_mb(proc.pid)
    return {"start_s": started, "rss_mb": rss, "first_text": added}


async def main(turns: int, starts: int) -> int:
    endpoint = Endpoint()
    endpoint.start()
    model_env = {
        "COPILOT_MODEL_PROVIDER": "openai-compatible",
        "COPILOT_MODEL": "bench",
        "COPILOT_MODEL_BASE_URL": f"http://127.0.0.1:{endpoint.port}/v1",
    }
    model = [await run_agent("jupyter_copilot.model_agent", model_env, turns)]
    model += [
        await run_agent("jupyter_copilot.model_agent", model_env, 1) for _ in range(starts - 1)
    ]
    demo = [await run_agent("jupyter_copilot.demo_agent", {}, 1) for _ in range(starts)]
    # The first turn connects to the endpoint: the added time is read from the others.
    received = model[0]["first_text"]
    written = endpoint.first_chunk[: len(received)]
    added_ms = sorted((r - w) * 1000 for r, w in zip(received[1:], written[1:], strict=True))
    p50 = statistics.median(added_ms)
    p95 = added_ms[min(len(added_ms) - 1, int(0.95 * len(added_ms)))]
    print(f"time to first token added by the model agent: p50 {p50:.1f} ms, p95 {p95:.1f} ms")
    print(f"  goal: p95 under {GOAL_P95_MS:.0f} ms ({len(added_ms)} turns)")
    for name, runs in (("model agent", model), ("demo agent", demo)):
        times = sorted(r["start_s"] for r in runs)
        print(
            f"{name}: start {times[0]:.2f} s min, {statistics.median(times):.2f} s median "
            f"({len(times)} starts); RSS after a turn {runs[0]['rss_mb']:.0f} MB"
        )
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="few turns and starts")
    args = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(asyncio.run(main(turns=10 if args.quick else 60, starts=2 if args.quick else 5)))
