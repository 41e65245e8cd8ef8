"""A scripted ACP agent for tests: the first word of the message says what it does.

It records what it receives (initialize, session/new, every prompt, cancel) as JSON lines in
``$SCRIPTED_AGENT_LOG``, so tests can assert on exactly what reached the agent. It ignores
its arguments: tests give it the log's path there too, so that each test's agent process has
a command line of its own (tests/conversations.py).

Commands: ``reply <text>``; ``Reply with the word <w>``; ``stream <n>``; ``slow`` (waits for
Stop); ``stubborn`` (ignores Stop); ``crash``; ``permission``;
``permission-kind <kind> [title]``; ``permission-flood <n>``;
``mcp <tool> <json>``; ``edit-selected <json string>``; ``Fix ...`` (proposes the
attached cell with ``1/0`` made ``1/1``); ``read <path>``;
``write <path> <json string>``; ``shell <command line>``;
``terminal <json {command, args, env, cwd}>``; ``switch-mode <id>``;
``tool-call <json {title, error}>`` (reports a tool call of its own that failed);
``spawn-child``; ``escape`` (a helper outside its process group keeps stdout open, and
it ignores SIGTERM); ``ignore-term``; ``touch <path>`` (writes a file itself, not through the
client, as an unrouted tool would); ``peek <path>`` (reads a file itself).

With ``$SCRIPTED_AGENT_MODES`` set (``current:id,id,...``) it offers ACP session modes and
records every ``session/set_mode``.

With ``$SCRIPTED_AGENT_SESSIONS`` set to a file, it remembers what each session was told
(``remember <text>``; ``recall`` replies with it) in that file, announces ``loadSession`` and
answers ``session/load`` for a session in the file (replaying its history first, as ACP
says), refusing an unknown one.

With ``$SCRIPTED_AGENT_IMAGES`` set it announces ``promptCapabilities.image``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import secrets
import signal
import subprocess
import sys
from typing import Any
from urllib.parse import parse_qs, unquote

import acp
import httpx2 as httpx
from acp.schema import (
    AgentCapabilities,
    AllowedOutcome,
    CurrentModeUpdate,
    EnvVariable,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PermissionOption,
    PromptCapabilities,
    PromptResponse,
    SessionMode,
    SessionModeState,
    SetSessionModeResponse,
    ToolCallUpdate,
)


def sessions() -> dict[str, list[str]]:
    """What each session was told, from ``$SCRIPTED_AGENT_SESSIONS``."""
    path = os.environ.get("SCRIPTED_AGENT_SESSIONS", "")
    if not path or not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        return dict(json.load(f))


def save_sessions(memory: dict[str, list[str]]) -> None:
    """Keep what each session was told, for a later ``session/load``."""
    path = os.environ.get("SCRIPTED_AGENT_SESSIONS", "")
    if path:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(memory, f)


def sleep_marker() -> str:
    """A ``sleep`` argument of 600-odd seconds that no other process on the machine has.

    The test finds the helper by this command line, across PID namespaces and while other
    test processes run the same agent at the same time: the agent's own pid (1 or 2 inside
    the sandbox's namespace) and the clock do not tell two agents apart, a random part does.
    """
    return f"600.{secrets.randbelow(10**9):09d}"


def record(kind: str, **data: Any) -> None:
    """Append one JSON line to the log the test reads."""
    path = os.environ.get("SCRIPTED_AGENT_LOG")
    if path:
        try:
            with open(path, "a", encoding="utf-8") as f:
                f.write(json.dumps({"kind": kind, **data}) + "\n")
        except OSError:
            # Under the sandbox the test's folder is out of reach; tests of the sandbox
            # read the agent's replies instead.
            return


class ScriptedAgent(acp.Agent):  # type: ignore[misc]
    """Does what the message says."""

    def __init__(self) -> None:
        self.conn: Any = None
        self.servers: list[dict[str, Any]] = []
        self.cancelled = asyncio.Event()

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, client_capabilities: Any = None, **_: Any):
        caps = client_capabilities.model_dump(by_alias=True) if client_capabilities else None
        record("initialize", clientCapabilities=caps)
        return InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=bool(os.environ.get("SCRIPTED_AGENT_SESSIONS")),
                prompt_capabilities=PromptCapabilities(
                    embedded_context=True, image=bool(os.environ.get("SCRIPTED_AGENT_IMAGES"))
                ),
            ),
        )

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> LoadSessionResponse:
        record("load_session", sessionId=session_id)
        memory = sessions()
        if session_id not in memory:
            raise acp.RequestError.invalid_params({"sessionId": "Unknown session."})
        self.servers = [s.model_dump(by_alias=True) for s in mcp_servers or []]
        for text in memory[session_id]:
            # The history, replayed: a client must not show it as a new reply.
            await self.conn.session_update(
                session_id, acp.update_agent_message_text(f"replayed {text}")
            )
        return LoadSessionResponse()

    async def new_session(self, cwd: str, mcp_servers: list[Any] | None = None, **_: Any):
        self.servers = [s.model_dump(by_alias=True) for s in mcp_servers or []]
        record("new_session", cwd=cwd, mcpServers=self.servers)
        modes = None
        if os.environ.get("SCRIPTED_AGENT_MODES"):
            current, _, ids = os.environ["SCRIPTED_AGENT_MODES"].partition(":")
            modes = SessionModeState(
                current_mode_id=current,
                available_modes=[SessionMode(id=i, name=i.title()) for i in ids.split(",")],
            )
        return NewSessionResponse(session_id=f"s-{os.getpid()}", modes=modes)

    async def set_session_mode(self, mode_id: str, session_id: str, **_: Any):
        record("set_mode", modeId=mode_id)
        return SetSessionModeResponse()

    async def cancel(self, session_id: str, **_: Any) -> None:
        record("cancel")
        self.cancelled.set()

    async def prompt(self, prompt: list[Any], session_id: str, **_: Any) -> PromptResponse:
        blocks = [b.model_dump(by_alias=True, exclude_none=True) for b in prompt]
        record("prompt", blocks=blocks)
        self.cancelled.clear()
        text = blocks[0].get("text", "") if blocks else ""
        word, _, rest = text.partition(" ")
        say = lambda t: self.conn.session_update(session_id, acp.update_agent_message_text(t))  # noqa: E731
        if m := re.fullmatch(r"Reply with the word (\w+)", text.strip(), re.IGNORECASE):
            await say(m.group(1))
        elif word == "reply":
            await say(rest)
        elif word == "remember":
            memory = sessions()
            memory.setdefault(session_id, []).append(rest)
            save_sessions(memory)
            await say("noted")
        elif word == "recall":
            await say(", ".join(sessions().get(session_id, [])) or "nothing")
        elif word == "stream":
            for i in range(int(rest)):
                await say(f"chunk-{i} ")
                await asyncio.sleep(0.05)
        elif word == "paragraphs":
            # Markdown in small pieces: paragraphs, and a fenced block with a blank line.
            for i in range(int(rest)):
                if i == 3:
                    for piece in ("```python\n", "a = 1\n", "\n", "b = 2\n", "```\n\n"):
                        await say(piece)
                await say(f"Paragraph {i} ")
                await say("ends.\n")
                await say("\n")
                await asyncio.sleep(0.02)
        elif word == "slow":
            await say("thinking")
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.cancelled.wait(), 60)
            return PromptResponse(stop_reason="cancelled")
        elif word == "stubborn":
            await say("not stopping")
            await asyncio.sleep(60)
        elif word == "long-line":
            # Bytes on stdout that never end a line, past any sane message size.
            await say("writing")
            chunk = b"x" * (1024 * 1024)
            os.set_blocking(1, True)  # ACP made stdout non-blocking; wait for the reader
            for _ in range(int(rest)):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(1, view) :]
            await asyncio.sleep(60)
        elif word == "crash":
            await say("about to crash")
            await asyncio.sleep(0.1)
            os._exit(3)
        elif word == "permission":
            answer = await self.conn.request_permission(
                session_id=session_id,
                tool_call=ToolCallUpdate(tool_call_id="t1", title="Run a scripted step"),
                options=[
                    PermissionOption(option_id="yes-once", name="Allow once", kind="allow_once"),
                    PermissionOption(option_id="no", name="Reject", kind="reject_once"),
                ],
            )
            outcome = answer.outcome
            await say(
                f"chose {outcome.option_id if isinstance(outcome, AllowedOutcome) else 'cancelled'}"
            )
        elif word == "permission-kind":
            kind, _, title = rest.partition(" ")
            answer = await self.conn.request_permission(
                session_id=session_id,
                tool_call=ToolCallUpdate(
                    tool_call_id="t2",
                    title=title or f"Own tool of kind {kind}",
                    kind=kind or None,
                ),
                options=[
                    PermissionOption(option_id="ok", name="Allow", kind="allow_once"),
                    PermissionOption(option_id="never", name="Never", kind="reject_always"),
                    PermissionOption(option_id="not-now", name="Reject", kind="reject_once"),
                ],
            )
            outcome = answer.outcome
            chosen = outcome.option_id if isinstance(outcome, AllowedOutcome) else "cancelled"
            record("permission", toolKind=kind, chose=chosen)
            await say(f"chose {chosen}")
        elif word == "permission-flood":
            # Many permission requests at once, none answered yet.
            async def one(i: int) -> str:
                answer = await self.conn.request_permission(
                    session_id=session_id,
                    tool_call=ToolCallUpdate(tool_call_id=f"f{i}", title=f"Flood {i}"),
                    options=[PermissionOption(option_id="ok", name="Allow", kind="allow_once")],
                )
                outcome = answer.outcome
                return outcome.option_id if isinstance(outcome, AllowedOutcome) else "cancelled"

            chosen = await asyncio.gather(*(one(i) for i in range(int(rest))))
            record("flood", chosen=chosen)
            await say(f"flooded {chosen.count('cancelled')}")
        elif word == "read":
            await self.client_call(
                say, "read", self.conn.read_text_file(path=rest, session_id=session_id)
            )
        elif word == "write":
            path, _, content = rest.partition(" ")
            await self.client_call(
                say,
                "write",
                self.conn.write_text_file(
                    content=json.loads(content), path=path, session_id=session_id
                ),
            )
        elif word == "shell":
            created = await self.client_call(
                say, "shell", self.conn.create_terminal(command=rest, session_id=session_id)
            )
            if created is not None:
                tid = created.terminal_id
                exit_ = await self.conn.wait_for_terminal_exit(
                    session_id=session_id, terminal_id=tid
                )
                out = await self.conn.terminal_output(session_id=session_id, terminal_id=tid)
                await self.conn.release_terminal(session_id=session_id, terminal_id=tid)
                record("shell-done", exitCode=exit_.exit_code, output=out.output)
                await say(f"exit {exit_.exit_code}: {out.output}")
        elif word == "terminal":
            # terminal/create with every field ACP has: {"command", "args", "env", "cwd"}.
            spec = json.loads(rest)
            created = await self.client_call(
                say,
                "terminal",
                self.conn.create_terminal(
                    command=spec["command"],
                    args=spec.get("args"),
                    env=[EnvVariable(name=k, value=v) for k, v in spec.get("env", {}).items()],
                    cwd=spec.get("cwd"),
                    session_id=session_id,
                ),
            )
            if created is not None:
                tid = created.terminal_id
                exit_ = await self.conn.wait_for_terminal_exit(
                    session_id=session_id, terminal_id=tid
                )
                out = await self.conn.terminal_output(session_id=session_id, terminal_id=tid)
                record("terminal-done", exitCode=exit_.exit_code, output=out.output)
        elif word == "tool-call":
            spec = json.loads(rest)
            start = acp.start_tool_call("own-call", spec["title"], kind="other")
            await self.conn.session_update(session_id, start)
            failed = [acp.tool_content(acp.text_block(spec["error"]))]
            update = acp.update_tool_call("own-call", status="failed", content=failed)
            await self.conn.session_update(session_id, update)
            await say("called")
        elif word == "switch-mode":
            await self.conn.session_update(
                session_id,
                CurrentModeUpdate(session_update="current_mode_update", current_mode_id=rest),
            )
            await asyncio.sleep(0.5)
            await say("switched")
        elif word == "peek":
            try:
                with open(rest, encoding="utf-8") as f:
                    await say(f"saw {f.read()}")
            except OSError as e:
                await say(f"unreadable {type(e).__name__}")
        elif word == "touch":
            with open(rest, "w", encoding="utf-8") as f:
                f.write("written by the agent itself\n")
            await say("touched")
        elif word == "mcp":
            tool, _, args = rest.partition(" ")
            await self.tool(session_id, tool, json.loads(args or "{}"))
        elif word == "Fix":
            # Fix and Explain's prompt: propose the attached cell with `1/0` made `1/1`.
            await self.fix_attached(session_id, blocks)
        elif word == "edit-selected":
            read = await self.tool(session_id, "notebook_read_selected_cell", {})
            cell = (read or {}).get("cell") or {}
            await self.tool(
                session_id,
                "notebook_edit_cell",
                {
                    "artifactId": cell.get("artifactId", "x"),
                    "cellId": cell.get("cellId", "x"),
                    "expectedSourceHash": cell.get("expectedSourceHash", "x"),
                    "newSource": json.loads(rest),
                },
            )
        elif word == "spawn-child":
            # Its pid may be a PID namespace's (under the sandbox): the test finds it by a
            # command line of its own, unique on the machine (see sleep_marker).
            marker = sleep_marker()
            child = subprocess.Popen(["sleep", marker])
            record("child", pid=child.pid, marker=marker)
            await say("spawned")
        elif word == "escape":
            # A helper in a session of its own that keeps the agent's stdout open.
            marker = sleep_marker()
            child = subprocess.Popen(["sleep", marker], start_new_session=True)
            record("escaped", pid=child.pid, marker=marker)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            await say("escaped")
        elif word == "ignore-term":
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            await say("ignoring SIGTERM")
        else:
            await say("unknown command")
        return PromptResponse(stop_reason="end_turn")

    async def fix_attached(self, session_id: str, blocks: list[dict[str, Any]]) -> None:
        """Propose an edit of the cell attached to the prompt, as a model fixing it would."""
        for block in blocks[1:]:
            resource = block.get("resource") or {}
            uri = str(resource.get("uri", ""))
            if not uri.startswith("jupyter-copilot://cell/"):
                continue
            path, _, query = uri.removeprefix("jupyter-copilot://cell/").partition("?")
            artifact, _, cell = path.partition("/")
            await self.tool(
                session_id,
                "notebook_edit_cell",
                {
                    "artifactId": unquote(artifact),
                    "cellId": unquote(cell),
                    "expectedSourceHash": parse_qs(query)["expectedSourceHash"][0],
                    "newSource": str(resource.get("text", "")).replace("1/0", "1/1"),
                },
            )
            return
        await self.conn.session_update(
            session_id, acp.update_agent_message_text("no attached cell to fix")
        )

    async def client_call(self, say: Any, what: str, call: Any) -> Any:
        """Ask the client for one of its powers; record and say the answer or the refusal."""
        try:
            answer = await call
        except acp.RequestError as e:
            code = (e.data or {}).get("code") if isinstance(e.data, dict) else None
            record(what, refused=True, code=code, rpcCode=e.code, message=str(e))
            await say(f"refused {code or e.code}")
            return None
        data = answer.model_dump(by_alias=True) if answer is not None else None
        record(what, refused=False, answer=data)
        await say(f"ok {json.dumps(data)}" if what == "read" else "ok")
        return answer

    async def tool(self, session_id: str, name: str, arguments: dict[str, Any]) -> Any:
        """Call one tool of the first MCP server; report it as an ACP tool call."""
        call_id = f"call-{name}"
        start = acp.start_tool_call(call_id, f"Call {name}", raw_input=arguments)
        await self.conn.session_update(session_id, start)
        if not self.servers:
            await self.conn.session_update(
                session_id, acp.update_tool_call(call_id, status="failed")
            )
            await self.conn.session_update(session_id, acp.update_agent_message_text("no tools"))
            return None
        # The MCP client is imported by the scripts that call a tool, not at start: it costs
        # about 0.4 CPU-s, and most of the suite's hundreds of scripted agents never call one.
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        server = self.servers[0]
        headers = {h["name"]: h["value"] for h in server.get("headers", [])}
        async with (
            httpx.AsyncClient(headers=headers, timeout=30) as http,
            Client(streamable_http_client(server["url"], http_client=http)) as client,
        ):
            result = await client.call_tool(name, arguments)
        data = result.structured_content
        record("tool", name=name, isError=bool(result.is_error), result=data)
        status = "failed" if result.is_error else "completed"
        content = (
            [acp.tool_content(acp.text_block(data["error"]["code"]))] if result.is_error else None
        )
        await self.conn.session_update(
            session_id, acp.update_tool_call(call_id, status=status, content=content)
        )
        await self.conn.session_update(
            session_id,
            acp.update_agent_message_text(json.dumps(data, separators=(",", ":"))),
        )
        return data


def main() -> None:
    """Serve over stdio."""
    asyncio.run(acp.run_agent(ScriptedAgent()))


if __name__ == "__main__":
    sys.exit(main())
