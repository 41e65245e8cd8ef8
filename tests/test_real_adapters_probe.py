"""What the real Claude Code and Gemini CLI ACP adapters do with a client's fs capabilities.

A plain ACP client (no Jupyter server) announces ``fs`` and ``terminal`` capabilities, and a
scripted model makes the agent call its own write tool:

- ``claude-agent-acp`` never calls the client's ``fs/write_text_file``: in ``default``
  mode it asks ``session/request_permission`` (kind ``edit``) and then writes the disk itself.
- ``gemini --acp`` asks ``session/request_permission`` (kind ``edit``) and then writes
  through the client's ``fs/write_text_file`` (after ``fs/read_text_file`` for the diff);
  nothing reaches the disk.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import acp
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    FileSystemCapabilities,
    ReadTextFileResponse,
    RequestPermissionResponse,
    WriteTextFileResponse,
)

from tests import realagents
from tests.scriptedanthropic import ScriptedAnthropic, ToolUse
from tests.scriptedanthropic import last_tool_result as anthropic_tool_result
from tests.scriptedgemini import FunctionCall, ScriptedGemini, last_function_response

TIMEOUT = 60


class FsClient:
    """Allows every permission once; keeps files in memory (a missing one reads as empty)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.written: dict[str, str] = {}

    async def request_permission(self, session_id: str, tool_call: Any, options: Any, **kw: Any):
        self.calls.append(
            (
                "session/request_permission",
                {"kind": tool_call.kind, "options": [(o.option_id, o.kind) for o in options]},
            )
        )
        allow = next(o for o in options if o.kind == "allow_once")
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=allow.option_id)
        )

    async def session_update(self, session_id: str, update: Any, **kw: Any) -> None:
        pass

    async def read_text_file(self, session_id: str, path: str, **kw: Any) -> ReadTextFileResponse:
        self.calls.append(("fs/read_text_file", {"path": path}))
        # Gemini cannot tell a missing file from a failure through ACP (the error reaches it as
        # a plain object, never ENOENT), so a missing file must read as empty.
        return ReadTextFileResponse(content=self.written.get(path, ""))

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kw: Any
    ) -> WriteTextFileResponse:
        self.calls.append(("fs/write_text_file", {"path": path}))
        self.written[path] = content
        return WriteTextFileResponse()

    async def create_terminal(self, *args: Any, **kw: Any) -> Any:
        raise acp.RequestError.method_not_found("terminal/create")

    def on_connect(self, conn: Any) -> None:
        pass

    def methods(self) -> list[str]:
        return [method for method, _ in self.calls]


async def _turn(
    agent: str, client: FsClient, model_url: str, tmp_path: Path, mode: str | None
) -> dict[str, Any]:
    work = tmp_path / "work"
    work.mkdir()
    env = realagents.agent_env(agent, tmp_path / "home", model_url)
    argv = realagents.agent_command(agent)
    caps = ClientCapabilities(
        fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True
    )
    async with realagents.spawn_agent(client, argv, env, work, tmp_path / "stderr.log") as (
        conn,
        _process,
    ):
        await asyncio.wait_for(
            conn.initialize(protocol_version=acp.PROTOCOL_VERSION, client_capabilities=caps),
            TIMEOUT,
        )
        session = await asyncio.wait_for(conn.new_session(cwd=str(work), mcp_servers=[]), TIMEOUT)
        if mode is not None:
            await asyncio.wait_for(
                conn.set_session_mode(session_id=session.session_id, mode_id=mode), TIMEOUT
            )
        response = await asyncio.wait_for(
            conn.prompt(session_id=session.session_id, prompt=[acp.text_block("write it")]),
            TIMEOUT,
        )
    return {"stop": response.stop_reason, "modes": session.modes, "work": work}


def test_claude_writes_the_disk_itself_after_asking(tmp_path: Path) -> None:
    realagents.install_agents()
    seen: list[str] = []
    target = tmp_path / "work" / "new.txt"
    model = ScriptedAnthropic(
        [
            ToolUse("Write", {"file_path": str(target), "content": "NEW FILE\n"}),
            lambda request: seen.append(anthropic_tool_result(request)) or "done",
        ]
    )
    client = FsClient()
    with model:
        result = asyncio.run(_turn("claude", client, model.url, tmp_path, "default"))
    model.check()

    assert result["stop"] == "end_turn"
    assert result["modes"].current_mode_id == "auto"
    assert {m.id for m in result["modes"].available_modes} == {
        "default",
        "acceptEdits",
        "plan",
        "auto",
    }
    assert client.methods() == ["session/request_permission"]
    assert client.calls[0][1]["kind"] == "edit"
    assert ("allow-once", "allow_once") in client.calls[0][1]["options"]
    assert target.read_text() == "NEW FILE\n"  # written by the agent, not through the client
    assert seen and "File created successfully" in seen[0]
    assert "Write" in [t["name"] for t in model.requests[0]["tools"]]


def test_gemini_writes_through_the_client(tmp_path: Path) -> None:
    realagents.install_agents()
    seen: list[str] = []
    target = tmp_path / "work" / "new.txt"
    model = ScriptedGemini(
        [
            FunctionCall("write_file", {"file_path": str(target), "content": "NEW FILE\n"}),
            lambda request: seen.append(last_function_response(request)) or "done",
        ]
    )
    client = FsClient()
    with model:
        result = asyncio.run(_turn("gemini", client, model.url, tmp_path, None))
    model.check()

    assert result["stop"] == "end_turn"
    assert result["modes"].current_mode_id == "default"
    assert [m.id for m in result["modes"].available_modes] == [
        "default",
        "autoEdit",
        "yolo",
        "plan",
    ]
    methods = client.methods()
    assert "session/request_permission" in methods, (methods, seen)
    assert methods[-1] == "fs/write_text_file"
    assert methods.index("session/request_permission") < methods.index("fs/write_text_file")
    assert client.calls[methods.index("session/request_permission")][1]["kind"] == "edit"
    assert client.written == {str(target): "NEW FILE\n"}
    assert not target.exists()  # nothing reached the disk
    assert seen and "NEW FILE" in seen[0], json.dumps(seen)
