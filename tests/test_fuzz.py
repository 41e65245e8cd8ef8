"""Property-based fuzzing of every entry point of a running server (Hypothesis).

A real ``jupyter server`` subprocess with jupyter-copilot and the demo agent gets generated
REST bodies on every JSON endpoint, bridge messages on a page's WebSocket, and arguments for
every MCP tool. Nothing may answer 5xx (other than the contract's 503 and 504 refusals), a
refusal has the contract's error shape, the bridge stays connected, the log shows no error
with a traceback, and status answers after each batch. CI runs a small budget;
``bench/fuzz.py`` runs 10,000 inputs and more.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import fuzzing

BUDGET = int(os.environ.get("JUPYTER_COPILOT_FUZZ_EXAMPLES", "60"))
FUZZ = settings(
    max_examples=BUDGET,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[fuzzing.FuzzServer]:
    """One server for the module; its log must stay free of errors."""
    with fuzzing.fuzz_server(tmp_path_factory.mktemp("fuzz")) as server:
        yield server
        assert server.tracebacks() == []


@pytest.fixture(scope="module")
def conversation(server: fuzzing.FuzzServer) -> str:
    """A Chat-only conversation with the demo agent."""
    status, data, _ = server.request(
        "POST", "/copilot/api/conversations", json.dumps({"chatOnly": True})
    )
    assert status == 201, data
    return str(json.loads(data)["conversation"]["id"])


@FUZZ
@given(target=st.integers(0, 8), body=fuzzing.bodies)
def test_rest_bodies_never_get_a_server_error(
    server: fuzzing.FuzzServer, conversation: str, target: int, body: str
) -> None:
    method, path = fuzzing.rest_targets(conversation)[target]
    status, data, _ = server.request(method, path, body)
    fuzzing.check_answer(status, data, f"{method} {path} {body[:200]!r}")


@FUZZ
@given(messages=st.lists(fuzzing.bridge_messages, min_size=1, max_size=5))
def test_bridge_messages_never_drop_the_page(
    server: fuzzing.FuzzServer, messages: list[str]
) -> None:
    ws = server.websocket()
    try:
        for message in messages:
            ws.send(message)
        # The connection is still there and in order: the barrier gets its answer.
        ws.send(json.dumps({"type": "sync-barrier"}))
        while True:
            reply = json.loads(ws.recv())
            if reply.get("type") == "error" and "sync-barrier" in reply.get("message", ""):
                break
    finally:
        ws.close()


@pytest.fixture(scope="module")
def mcp(server: fuzzing.FuzzServer) -> str:
    """An MCP session of an outside client (the person's token)."""
    return fuzzing.mcp_session(server)


@FUZZ
@given(tool=st.sampled_from(fuzzing.MCP_TOOLS), arguments=fuzzing.json_values)
def test_mcp_tool_arguments_never_get_a_server_error(
    server: fuzzing.FuzzServer, mcp: str, tool: str, arguments: Any
) -> None:
    status, data, _ = fuzzing.mcp_tool_call(server, mcp, tool, arguments)
    assert status < 500, (status, tool, arguments)
    if status == 200:
        events = [line[5:] for line in data.decode().splitlines() if line.startswith("data:")]
        answer = json.loads(events[-1]) if events else json.loads(data)
        assert "result" in answer or "error" in answer, answer


def test_the_server_still_answers_after_the_fuzzing(server: fuzzing.FuzzServer) -> None:
    assert server.status()["enabled"] is True
    assert server.process.poll() is None
    assert server.tracebacks() == []
