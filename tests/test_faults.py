"""Faults: each ends with nothing applied and a clear state.

The server, its sessions, kernels, file IDs, MCP endpoint and agents are real; pages are
scripted over the real bridge WebSocket (what only a real JupyterLab page can show is in
``test_browser_review.py``). A server restart is a real second ``jupyter server`` process on
the same port, folder and file-ID database.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import httpx2
import pytest
from tornado.httpclient import HTTPRequest
from tornado.websocket import websocket_connect

from jupyter_copilot.page.context import source_hash
from tests.conftest import make_notebook
from tests.conversations import agent_log, api, create, scripted_agents, send
from tests.eventually import eventually
from tests.mcpclient import mcp_client, mcp_url, refusal_code, structured
from tests.pages import ScriptedPage, context_answer, next_of, notebook_state
from tests.sandboxing import sandbox_for_test
from tests.server import INVOKE, call_action, start_session
from tests.test_agent_process import processes_running
from tests.test_approvals import decide

OLD = "x = 1\n"
NEW = "x = 2\n"


def opens_review(request: dict[str, Any]) -> dict[str, Any] | None:
    """A page that opens every review it is asked to, and serves ``OLD`` as the cell."""
    if request["action"] == INVOKE:
        return {"diffReviewOpened": True}
    if request["action"].endswith("abort"):
        return {"withdrawn": True}
    return context_answer("a.ipynb", OLD)


def edit(artifact_id: str) -> dict[str, Any]:
    return {
        "artifactId": artifact_id,
        "cellId": "c1",
        "expectedSourceHash": source_hash(OLD),
        "newSource": NEW,
    }


@pytest.fixture
def log(tmp_path: Path) -> Path:
    """What the scripted agent received."""
    return tmp_path / "agent.jsonl"


@pytest.fixture
def copilot_config(log: Path) -> dict[str, Any]:
    """The scripted agent."""
    return scripted_agents(log)


@pytest.fixture
def url(http_server_client: Any, jp_http_port: int, jp_base_url: str) -> str:
    """The MCP endpoint of the running server (the fixture makes the server listen)."""
    return mcp_url(jp_http_port, jp_base_url)


async def scene(jp_fetch: Any, jp_ws_fetch: Any, root: Path, copilot: Any) -> ScriptedPage:
    """``a.ipynb`` with a kernel session, active in page ``p-1`` that opens reviews."""
    make_notebook(root, "a.ipynb", [OLD])
    await start_session(jp_fetch, "a.ipynb")
    page = await ScriptedPage.connect(jp_ws_fetch, "p-1")
    await page.send_state(notebook_state("a.ipynb"))
    page.respond = opens_review
    return page


# -- the page and its bridge ---------------------------------------------------------------


async def test_the_bridge_dropping_with_a_pending_request_ends_the_call_at_once(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    page = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    page.respond = lambda request: None if request["action"] == INVOKE else opens_review(request)
    call = asyncio.ensure_future(
        call_action(jp_fetch, INVOKE, {"data": edit(copilot.jupyter_server.artifact_id("a.ipynb"))})
    )
    await eventually(lambda: page.requests, "the page to be asked to invoke")
    started = time.monotonic()
    page.ws.close()
    status, body = await asyncio.wait_for(call, 10)
    assert (status, body["error"]["code"]) == (504, "timeout")
    assert time.monotonic() - started < 2  # not the page timeout of 10 s
    assert copilot.proposal_tools["notebook_edit_cell"].calls.open_reviews() == []


async def test_a_page_that_closes_right_after_keep_leaves_its_review_withdrawn(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    page = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    before = (jp_root_dir / "a.ipynb").read_text()
    artifact_id = copilot.jupyter_server.artifact_id("a.ipynb")
    status, _ = await call_action(
        jp_fetch, INVOKE, {"data": edit(artifact_id), "callId": "mid-keep"}
    )
    assert status == 200
    page.send({"type": "keep", "callId": "mid-keep"})
    page.ws.close()
    # The page that comes back (a reload) cannot keep the old review, nor can any other.
    again = await ScriptedPage.connect(jp_ws_fetch, "p-1")
    await again.send_state(notebook_state("a.ipynb"))
    again.send({"type": "keep", "callId": "mid-keep"})
    verdict = await next_of(again, "keep-verdict")
    assert (verdict["ok"], verdict["code"]) == (False, "aborted")
    assert copilot.proposal_tools["notebook_edit_cell"].calls.open_reviews() == []
    assert (jp_root_dir / "a.ipynb").read_text() == before
    status = json.loads((await jp_fetch("copilot", "api", "status")).body)
    assert status["pages"] == 1
    again.close()


# -- the kernel and the kill switch ----------------------------------------------------------


async def test_the_kernel_shutting_down_during_a_review_refuses_keep(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    page = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    artifact_id = copilot.jupyter_server.artifact_id("a.ipynb")
    assert (await call_action(jp_fetch, INVOKE, {"data": edit(artifact_id), "callId": "k"}))[
        0
    ] == 200
    sessions = json.loads((await jp_fetch("api", "sessions")).body)
    kernel_id = sessions[0]["kernel"]["id"]
    await jp_fetch("api", "kernels", kernel_id, method="DELETE")
    page.send({"type": "keep", "callId": "k"})
    verdict = await next_of(page, "keep-verdict")
    assert (verdict["ok"], verdict["code"]) == (False, "no-active-session")
    # The review stays for the person to dismiss; its call is not decided by the refusal.
    status, body = await call_action(jp_fetch, INVOKE, {"data": edit(artifact_id)})
    assert (status, body["error"]["code"]) == (409, "no-active-session")
    page.close()


async def test_the_kill_switch_engaged_between_allow_and_keep_refuses_keep(
    jp_fetch,
    jp_ws_fetch,
    jp_root_dir,
    jp_config_dir,
    copilot,
    url,
    jp_auth_header,
    jp_http_port,
    jp_base_url,
) -> None:
    page = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    artifact_id = copilot.jupyter_server.artifact_id("a.ipynb")
    async with mcp_client(url, jp_auth_header) as client:
        call = asyncio.ensure_future(client.call_tool("notebook_edit_cell", edit(artifact_id)))
        card = await next_of(page, "approval")
        request_id = card["request"]["requestId"]
        status, _ = await decide(jp_http_port, jp_base_url, jp_auth_header, request_id, "allow")
        assert status == 200
        result = await asyncio.wait_for(call, 10)
    assert structured(result)["diffReviewOpened"] is True
    call_id = next(r for r in page.requests if r["action"] == INVOKE)["data"]["callId"]
    (jp_config_dir / "jupyter_copilot_config.json").write_text(
        json.dumps({"CopilotApp": {"tools_enabled": False}})
    )
    await next_of(page, "tools-enabled", timeout=3)
    page.send({"type": "keep", "callId": call_id})
    verdict = await next_of(page, "keep-verdict")
    assert (verdict["ok"], verdict["code"]) == (False, "kill-switch")
    page.close()


# -- the agent -----------------------------------------------------------------------------


async def test_an_agent_killed_mid_turn_ends_the_turn_and_its_cards(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, log: Path
) -> None:
    page = await ScriptedPage.connect(jp_ws_fetch, "p-1")
    await page.send_state(notebook_state("a.ipynb"))
    conversation = await create(jp_fetch)
    turn = asyncio.ensure_future(send(jp_fetch, conversation, "permission", page_id="p-1"))
    card = await next_of(page, "approval")
    command = scripted_agents(log)["agents"]["scripted"]["command"]
    (pid,) = processes_running(*command)
    os.kill(pid, signal.SIGKILL)
    events = await asyncio.wait_for(turn, 15)
    assert events[-1]["stopReason"] == "error"
    assert "stopped unexpectedly" in events[-1]["error"]
    assert copilot.approvals.waiting == 0
    ended = await next_of(page, "approval-ended")
    assert ended["requestId"] == card["request"]["requestId"]
    status, body = await api(
        jp_fetch,
        "approvals",
        card["request"]["requestId"],
        method="POST",
        body={"decision": "allow"},
    )
    assert body["error"]["code"] == "aborted"
    # The next message starts the agent again.
    events = await send(jp_fetch, conversation, "Reply with the word back")
    assert events[-1]["stopReason"] == "end_turn"
    assert [e["text"] for e in events if e["type"] == "text"] == ["back"]
    assert agent_log(log, "prompt")
    page.close()


# -- a server restart ----------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ServerProcess:
    """``jupyter server`` with the extension, in a process of its own."""

    def __init__(self, tmp: Path, port: int, token: str, copilot: dict[str, Any]) -> None:
        self.tmp = tmp
        self.port = port
        self.token = token
        self.url = f"http://127.0.0.1:{port}/"
        self.headers = {"Authorization": f"token {token}"}
        config = tmp / "config"
        config.mkdir(exist_ok=True)
        (config / "jupyter_server_config.json").write_text(
            json.dumps(
                {
                    "ServerApp": {
                        "jpserver_extensions": {
                            "jupyter_copilot": True,
                            "jupyter_server_fileid": True,
                        }
                    },
                    "BaseFileIdManager": {"db_path": str(tmp / "fileid.db")},
                    "CopilotApp": sandbox_for_test(copilot),
                }
            )
        )
        self.env = {
            **os.environ,
            "JUPYTER_CONFIG_DIR": str(config),
            "JUPYTER_RUNTIME_DIR": str(tmp / "runtime"),
            "JUPYTER_DATA_DIR": str(tmp / "data"),
        }
        self.proc: subprocess.Popen[bytes] | None = None

    async def start(self) -> None:
        args = [
            sys.executable,
            "-m",
            "jupyter_server",
            "--no-browser",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.tmp / 'root'}",
        ]
        if os.geteuid() == 0:
            args.append("--allow-root")
        self.proc = subprocess.Popen(
            args, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        async with httpx2.AsyncClient(headers=self.headers, timeout=2) as http:

            async def answers() -> bool:
                assert self.proc is not None and self.proc.poll() is None, "the server exited"
                return (await http.get(self.url + "copilot/api/status")).status_code == 200

            await eventually(answers, "the server to start", 60, ignoring=(httpx2.HTTPError,))

    async def stop(self, sig: int = signal.SIGTERM) -> None:
        assert self.proc is not None
        self.proc.send_signal(sig)
        proc = self.proc
        try:
            await eventually(lambda: proc.poll() is not None, "the server to exit", 20)
        except AssertionError:
            proc.kill()
            proc.wait()

    async def http(self, method: str, path: str, body: Any = None) -> tuple[int, dict[str, Any]]:
        async with httpx2.AsyncClient(headers=self.headers, timeout=30) as http:
            response = await http.request(
                method, self.url + path, content=None if body is None else json.dumps(body)
            )
        return response.status_code, response.json() if response.content else {}

    async def page(self, page_id: str) -> ScriptedPage:
        async def ws_fetch(*parts: str) -> Any:
            request = HTTPRequest(
                f"ws://127.0.0.1:{self.port}/" + "/".join(parts), headers=self.headers
            )
            return await websocket_connect(request)

        page = await ScriptedPage.connect(ws_fetch, page_id)
        await page.send_state(notebook_state("a.ipynb"))
        page.respond = opens_review
        return page


@asynccontextmanager
async def running(server: ServerProcess) -> AsyncIterator[ServerProcess]:
    """The server, started; stopped at the end, also when it did not start in time (a slow
    start left it running after the test)."""
    try:
        await server.start()
        yield server
    finally:
        if server.proc is not None and server.proc.poll() is None:
            await server.stop()
        # A server killed outright leaves its kernels running: end them here.
        runtime = str(server.tmp / "runtime")
        for entry in Path("/proc").iterdir():
            with suppress(OSError, ValueError):
                if entry.name.isdigit() and runtime in (entry / "cmdline").read_text():
                    os.kill(int(entry.name), signal.SIGKILL)


@pytest.mark.parametrize("how", ["restart", "crash"])
async def test_after_a_server_restart_keep_and_allow_of_before_are_refused(
    tmp_path: Path, how: str
) -> None:
    (tmp_path / "root").mkdir()
    make_notebook(tmp_path / "root", "a.ipynb", [OLD])
    before = (tmp_path / "root" / "a.ipynb").read_text()
    server = ServerProcess(tmp_path, free_port(), "restart-token", {"agents": {}})
    async with running(server):
        status, _ = await server.http(
            "POST",
            "api/sessions",
            {
                "path": "a.ipynb",
                "name": "a.ipynb",
                "type": "notebook",
                "kernel": {"name": "python3"},
            },
        )
        assert status == 201
        page = await server.page("p-1")
        status, body = await server.http(
            "POST",
            "copilot/api/actions/jupyter_copilot.notebook.get-context",
            {"data": {}, "pageId": "p-1"},
        )
        artifact_id = next(
            e["value"]["artifactId"]
            for e in body["result"]["customContext"]
            if e["name"] == "notebook_selected_cell"
        )
        # An open review (autopilot over REST) and a waiting card (interactive over MCP).
        status, _ = await server.http(
            "POST",
            "copilot/api/actions/" + INVOKE,
            {"data": edit(artifact_id), "callId": "before-restart"},
        )
        assert status == 200

        async def waiting_call() -> Any:
            # Its own task: after a crash the client's connection just drops.
            async with mcp_client(mcp_url(server.port, "/"), server.headers) as client:
                return await client.call_tool("notebook_edit_cell", edit(artifact_id))

        call = asyncio.ensure_future(waiting_call())
        card = await next_of(page, "approval")
        if how == "restart":
            await server.stop(signal.SIGTERM)
            # A server that stops denies the waiting call.
            assert refusal_code(await asyncio.wait_for(call, 15)) == "denied"
        else:
            await server.stop(signal.SIGKILL)
            with pytest.raises((Exception, asyncio.CancelledError)):
                await asyncio.wait_for(call, 15)
        page.close()

        await server.start()
        page = await server.page("p-1")
        page.send({"type": "keep", "callId": "before-restart"})
        verdict = await next_of(page, "keep-verdict")
        assert (verdict["ok"], verdict["code"]) == (False, "aborted")
        status, body = await server.http(
            "POST",
            f"copilot/api/approvals/{card['request']['requestId']}",
            {"decision": "allow"},
        )
        assert (status, body["error"]["code"]) == (409, "aborted")
        assert page.requests == [] or all(r["action"] != INVOKE for r in page.requests)
        status, body = await server.http("GET", "copilot/api/status")
        assert status == 200 and body["pages"] == 1
        page.close()
    assert (tmp_path / "root" / "a.ipynb").read_text() == before
