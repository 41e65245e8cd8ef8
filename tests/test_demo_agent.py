"""The shipped demo agent as a real subprocess, driven through the ACP client library.

No jupyter-copilot server runs here: the agent gets no MCP server, an address where
nothing listens, or one that never answers. The run against the real ``copilot/mcp``
endpoint is covered by the conversation tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

import acp
import pytest
from acp.schema import (
    EmbeddedResourceContentBlock,
    HttpHeader,
    HttpMcpServer,
    TextResourceContents,
)

from jupyter_copilot.demo_agent.prompt import source_hash

WAIT = 30.0
FUNCTION_CELL = "import pandas as pd\n\ndef load_data(path):\n    return pd.read_csv(path)\n"


class RecordingClient:
    """An ACP client that records what the agent streams and refuses everything else."""

    def __init__(self) -> None:
        self.updates: list[Any] = []
        self.initialized: Any = None
        self.first_text = asyncio.Event()
        self.tool_started = asyncio.Event()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        """Record one session update."""
        self.updates.append(update)
        if update.session_update == "agent_message_chunk":
            self.first_text.set()
        if update.session_update == "tool_call":
            self.tool_started.set()

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        """The demo agent never asks: the server's own approval card does."""
        raise AssertionError("the demo agent asked for permission")

    def text(self) -> str:
        """The agent's reply so far, all message chunks joined."""
        return "".join(
            u.content.text for u in self.updates if u.session_update == "agent_message_chunk"
        )

    def tool_updates(self) -> list[Any]:
        """The tool calls and their updates, in order."""
        return [u for u in self.updates if u.session_update in ("tool_call", "tool_call_update")]


@contextlib.asynccontextmanager
async def demo_agent(tmp_path: Path, *args: str) -> AsyncIterator[tuple[Any, RecordingClient]]:
    """The agent started with ``args``, initialized; its stderr goes to a file."""
    client = RecordingClient()
    with (tmp_path / "agent-stderr.txt").open("w") as stderr:
        async with acp.spawn_agent_process(
            cast(acp.Client, client),
            sys.executable,
            "-m",
            "jupyter_copilot.demo_agent",
            *args,
            cwd=tmp_path,
            transport_kwargs={"stderr": stderr},
        ) as (conn, _process):
            client.initialized = await asyncio.wait_for(
                conn.initialize(protocol_version=acp.PROTOCOL_VERSION), WAIT
            )
            yield conn, client


def attached(source: str, cell_id: str = "cell-1") -> EmbeddedResourceContentBlock:
    """A cell attached the way jupyter-copilot attaches one."""
    return EmbeddedResourceContentBlock(
        type="resource",
        resource=TextResourceContents(
            uri=f"jupyter-copilot://cell/artifact-1/{cell_id}",
            text=source,
            mime_type="text/x-python",
            field_meta={
                "cellId": cell_id,
                "cellType": "code",
                "expectedSourceHash": source_hash(source),
            },
        ),
    )


def mcp_server(url: str) -> HttpMcpServer:
    """Our MCP server entry as the server passes it in ``session/new``."""
    return HttpMcpServer(
        type="http",
        name="jupyter-copilot",
        url=url,
        headers=[HttpHeader(name="Authorization", value="Bearer conversation-token")],
    )


async def ask(conn: Any, session_id: str, *blocks: Any) -> str:
    """Send one prompt and return its stop reason."""
    response = await asyncio.wait_for(conn.prompt(session_id=session_id, prompt=list(blocks)), WAIT)
    return str(response.stop_reason)


async def test_initialize_announces_embedded_context_and_the_agent_name(tmp_path: Path) -> None:
    async with demo_agent(tmp_path) as (_conn, client):
        answer = client.initialized.model_dump(by_alias=True, exclude_none=True)
    assert answer["agentCapabilities"]["promptCapabilities"]["embeddedContext"] is True
    assert answer["agentCapabilities"]["mcpCapabilities"]["http"] is True
    assert answer["agentInfo"]["name"] == "jupyter-copilot-demo-agent"
    assert answer["agentInfo"]["title"] == "Demo agent (rule-based)"


async def test_reply_with_the_word_is_exactly_that_word(tmp_path: Path) -> None:
    async with demo_agent(tmp_path) as (conn, client):
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        stop = await ask(conn, session.session_id, acp.text_block("Reply with the word received"))
    assert stop == "end_turn"
    assert client.text() == "received"
    assert client.tool_updates() == []


async def test_an_edit_without_notebook_tools_says_so_and_calls_nothing(tmp_path: Path) -> None:
    async with demo_agent(tmp_path) as (conn, client):
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        stop = await ask(
            conn, session.session_id, acp.text_block("add docstrings"), attached(FUNCTION_CELL)
        )
    assert stop == "end_turn"
    assert "no notebook tools" in client.text()
    assert client.tool_updates() == []


async def test_explain_streams_an_explanation_of_the_attached_cell(tmp_path: Path) -> None:
    async with demo_agent(tmp_path, "--chunk-delay", "0") as (conn, client):
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        stop = await ask(
            conn, session.session_id, acp.text_block("Explain this cell"), attached(FUNCTION_CELL)
        )
    assert stop == "end_turn"
    assert "`load_data(path)`" in client.text()
    assert "`pandas as pd`" in client.text()
    assert len(client.updates) > 1  # streamed in parts
    assert client.tool_updates() == []


async def test_help_lists_what_the_demo_can_do(tmp_path: Path) -> None:
    async with demo_agent(tmp_path, "--chunk-delay", "0") as (conn, client):
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        await ask(conn, session.session_id, acp.text_block("hello"))
    for ability in ("docstrings", "sort the imports", "explain"):
        assert ability in client.text()


async def test_cancel_stops_a_streaming_reply(tmp_path: Path) -> None:
    async with demo_agent(tmp_path, "--chunk-delay", "10") as (conn, client):
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        prompt = asyncio.ensure_future(
            ask(conn, session.session_id, acp.text_block("explain"), attached(FUNCTION_CELL))
        )
        await asyncio.wait_for(client.first_text.wait(), WAIT)
        await conn.cancel(session_id=session.session_id)
        stop = await asyncio.wait_for(prompt, 5.0)
        assert stop == "cancelled"
        assert "load_data" not in client.text()
        # The session takes the next prompt as usual.
        client.updates.clear()
        stop = await ask(conn, session.session_id, acp.text_block("Reply with the word again"))
    assert (stop, client.text()) == ("end_turn", "again")


async def test_cancel_stops_an_mcp_call_in_flight(tmp_path: Path) -> None:
    called = asyncio.Event()

    async def never_answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        called.set()
        with contextlib.suppress(Exception):
            await reader.read()  # until the agent hangs up
        writer.close()

    server = await asyncio.start_server(never_answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server, demo_agent(tmp_path) as (conn, client):
        session = await conn.new_session(
            cwd=str(tmp_path), mcp_servers=[mcp_server(f"http://127.0.0.1:{port}/copilot/mcp")]
        )
        prompt = asyncio.ensure_future(ask(conn, session.session_id, acp.text_block("docstrings")))
        await asyncio.wait_for(client.tool_started.wait(), WAIT)
        await asyncio.wait_for(called.wait(), WAIT)  # the MCP call is in flight
        await conn.cancel(session_id=session.session_id)
        stop = await asyncio.wait_for(prompt, 5.0)
    assert stop == "cancelled"
    calls = client.tool_updates()
    assert [(u.title, u.kind, u.status) for u in calls[:1]] == [
        ("Read the selected cell", "read", "in_progress")
    ]
    assert calls[-1].status == "failed"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_unreachable_tools_fail_the_tool_call_and_the_reply_says_why(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/copilot/mcp"
    async with demo_agent(tmp_path) as (conn, client):
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[mcp_server(url)])
        stop = await ask(
            conn, session.session_id, acp.text_block("Sort the imports"), attached("import b\n")
        )
        assert client.tool_updates() == []  # one import: nothing to change, nothing called
        client.updates.clear()
        stop = await ask(
            conn,
            session.session_id,
            acp.text_block("Sort the imports"),
            attached("import b\nimport a\n"),
        )
    assert stop == "end_turn"
    calls = client.tool_updates()
    assert [(u.title, u.kind) for u in calls[:1]] == [("Propose an edit of the cell", "edit")]
    assert calls[-1].status == "failed"
    assert calls[-1].content[0].content.text.startswith("unreachable: ")
    assert "(`unreachable`)" in client.text()


async def test_a_prompt_for_an_unknown_session_is_an_error(tmp_path: Path) -> None:
    async with demo_agent(tmp_path) as (conn, _client):
        with pytest.raises(acp.RequestError):
            await ask(conn, "no-such-session", acp.text_block("hello"))
