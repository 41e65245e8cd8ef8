"""A unique string placed in every piece of content never reaches an event or a log line."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from jupyter_copilot.mcp.tools import READ_CELLS
from jupyter_copilot.page.context import source_hash
from tests.conftest import make_notebook
from tests.conversations import create, reply_of, scripted_agents, send
from tests.eventually import eventually
from tests.mcpclient import mcp_client, mcp_url, read_cells_answer, structured
from tests.pages import ScriptedPage, context_answer, notebook_state
from tests.server import ABORT, INVOKE, call_action, start_session

# The kernel sessions here only give the notebook its tool registrations; no test talks to the
# kernel, so they attach to one real kernel per test process (tests/kernels.py).
pytestmark = pytest.mark.shared_kernel

CANARY = "CANARY-7f3c9e1d-do-not-leak"
OLD = f"secret = '{CANARY}-old'\n"
NEW = f"secret = '{CANARY}-new'\n"
NOTEBOOK = f"{CANARY}.ipynb"


@pytest.fixture
def copilot_config(tmp_path: Path) -> dict[str, Any]:
    """The scripted ACP agent for the conversation test (the others do not use it)."""
    return scripted_agents(tmp_path / "agent.jsonl")


async def read_events(ws: Any, into: list[dict[str, Any]]) -> None:
    while True:
        text = await ws.read_message()
        if text is None:
            return
        into.append(json.loads(text))


async def our_events(events: list[dict[str, Any]], expected: set[str]) -> list[dict[str, Any]]:
    """jupyter-copilot's events, once every schema in ``expected`` has been seen."""
    prefix = "https://events.jupyter.org/jupyter_copilot/"

    def seen() -> set[str]:
        return {e.get("schema_id", "").removeprefix(prefix) for e in events}

    await eventually(lambda: expected <= seen(), f"the events {sorted(expected)}", 5)
    assert expected <= seen(), seen()
    return [e for e in events if e.get("schema_id", "").startswith(prefix)]


async def test_no_content_in_events_or_logs(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, caplog
) -> None:
    caplog.set_level(logging.DEBUG)
    events: list[dict[str, Any]] = []
    subscription = await jp_ws_fetch("api", "events", "subscribe")
    reader = asyncio.ensure_future(read_events(subscription, events))

    make_notebook(jp_root_dir, NOTEBOOK, [OLD])
    await start_session(jp_fetch, NOTEBOOK)
    artifact_id = copilot.jupyter_server.artifact_id(NOTEBOOK)
    page = await ScriptedPage.connect(jp_ws_fetch, f"page-{CANARY}", url=f"lab/tree/{NOTEBOOK}")

    def respond(request: dict[str, Any]) -> dict[str, Any] | None:
        if request["action"] == INVOKE:
            if request["data"]["callId"].endswith("stale"):
                return {"ok": False, "error": {"code": "stale-source", "message": CANARY}}
            return {"diffReviewOpened": True}
        if request["action"] == ABORT:
            return {"withdrawn": True}
        return context_answer(NOTEBOOK, OLD, selected=[f"cell-{CANARY}"])

    page.respond = respond
    await page.send_state(notebook_state(NOTEBOOK, selected=[f"cell-{CANARY}"]))
    status, body = await call_action(
        jp_fetch, "jupyter_copilot.notebook.get-context", {"data": {}, "pageId": page.page_id}
    )
    assert status == 200 and CANARY in json.dumps(body)

    data = {
        "artifactId": artifact_id,
        "cellId": f"cell-{CANARY}",
        "expectedSourceHash": source_hash(OLD),
        "newSource": NEW,
    }
    outcomes = []
    for call_id, changes in [
        (f"{CANARY}-keep", {}),
        (f"{CANARY}-undo", {}),
        (f"{CANARY}-abort", {}),
        (f"{CANARY}-stale", {}),
        (f"{CANARY}-mismatch", {"artifactId": CANARY}),
        (f"{CANARY}-bad", {"newSource": 7}),
    ]:
        status, _ = await call_action(
            jp_fetch, INVOKE, {"data": {**data, **changes}, "callId": call_id}
        )
        outcomes.append(status)
    assert outcomes == [200, 200, 200, 409, 409, 400]
    page.send({"type": "keep", "callId": f"{CANARY}-keep"})
    assert (await page.next_message())["ok"] is True
    page.send({"type": "review", "callId": f"{CANARY}-keep", "decision": "keep"})
    page.send({"type": "review", "callId": f"{CANARY}-undo", "decision": "undo"})
    await page.sync()
    status, _ = await call_action(jp_fetch, ABORT, {"data": {"callId": f"{CANARY}-abort"}})
    assert status == 200
    page.send({"type": CANARY})
    await page.next_message()
    page.close()

    expected = {
        "context/served/v1",
        "context/refresh/v1",
        "edit/invoked/v1",
        "edit/refused/v1",
        "edit/review-opened/v1",
        "edit/decision/v1",
        "edit/aborted/v1",
    }
    ours = await our_events(events, expected)
    reader.cancel()
    subscription.close()
    text = json.dumps(ours)
    assert CANARY not in text
    assert artifact_id not in text
    decisions = sorted(
        e["decision"] for e in ours if e.get("schema_id", "").endswith("decision/v1")
    )
    assert decisions == ["keep", "undo"]
    refused = sorted(e["code"] for e in ours if e.get("schema_id", "").endswith("refused/v1"))
    assert refused == ["artifact-mismatch", "invalid-input", "stale-source"]
    loud = [r for r in caplog.records if r.levelno >= logging.INFO]
    assert loud, "the server logged nothing at INFO: the check would prove nothing"
    assert not [r.getMessage() for r in loud if CANARY in r.getMessage()]


async def test_no_content_in_mcp_events_or_logs(
    jp_fetch,
    jp_ws_fetch,
    jp_root_dir,
    copilot,
    caplog,
    http_server_client,
    jp_http_port,
    jp_base_url,
    jp_auth_header,
) -> None:
    caplog.set_level(logging.DEBUG)
    events: list[dict[str, Any]] = []
    subscription = await jp_ws_fetch("api", "events", "subscribe")
    reader = asyncio.ensure_future(read_events(subscription, events))
    make_notebook(jp_root_dir, NOTEBOOK, [OLD])
    await start_session(jp_fetch, NOTEBOOK)
    artifact_id = copilot.jupyter_server.artifact_id(NOTEBOOK)
    cell_id = f"cell-{CANARY}"
    page = await ScriptedPage.connect(jp_ws_fetch, f"page-{CANARY}", url=f"lab/tree/{NOTEBOOK}")
    cells = [
        {
            "cellId": cell_id,
            "cellType": "code",
            "source": OLD,
            "outputs": [{"outputType": "stream", "name": "stdout", "text": CANARY}],
        }
    ]

    def respond(request: dict[str, Any]) -> dict[str, Any] | None:
        if request["action"] == INVOKE:
            return {"diffReviewOpened": True}
        if request["action"] == READ_CELLS:
            return read_cells_answer(cells, request, NOTEBOOK)
        return context_answer(NOTEBOOK, OLD, selected=[cell_id])

    page.respond = respond
    await page.send_state(notebook_state(NOTEBOOK, selected=[cell_id]))
    copilot.external_context_refs = ["selected_cell", "active_notebook", "cell_outputs"]
    edit = {
        "artifactId": artifact_id,
        "cellId": cell_id,
        "expectedSourceHash": source_hash(OLD),
        "newSource": NEW,
    }
    url = mcp_url(jp_http_port, jp_base_url)
    async with mcp_client(url, jp_auth_header) as client:
        assert CANARY in json.dumps(
            structured(await client.call_tool("notebook_read_selected_cell", {}))
        )
        await client.call_tool("notebook_read_cells", {"includeOutputs": True})
        await client.call_tool("context_snapshot", {})
        await client.call_tool("skill_read", {"skillId": CANARY[:60]})
        await client.call_tool(f"tool_{CANARY}", {"x": CANARY})
        for decision in ("allow", "deny"):
            call = asyncio.ensure_future(client.call_tool("notebook_edit_cell", edit))
            while (card := await page.next_message())["type"] != "approval":
                pass
            request_id = card["request"]["requestId"]
            await jp_fetch(
                "copilot",
                "api",
                "approvals",
                request_id,
                method="POST",
                body=json.dumps({"decision": decision}),
            )
            await asyncio.wait_for(call, 10)
    page.close()

    expected = {"mcp/tool-call/v1", "approval/requested/v1", "approval/ended/v1"}
    ours = await our_events(events, expected)
    reader.cancel()
    subscription.close()
    text = json.dumps(ours)
    assert CANARY not in text
    assert artifact_id not in text
    calls = [e for e in ours if e["schema_id"].endswith("mcp/tool-call/v1")]
    assert [e["outcome"] for e in calls] == [
        "ok",
        "ok",
        "ok",
        "unknown-skill",
        "unknown-action",
        "ok",
        "denied",
    ]
    assert calls[4]["toolName"] is None
    ended = [e["outcome"] for e in ours if e["schema_id"].endswith("approval/ended/v1")]
    assert ended == ["allowed", "denied"]
    loud = [r for r in caplog.records if r.levelno >= logging.INFO]
    assert not [r.getMessage() for r in loud if CANARY in r.getMessage()]


async def test_no_content_in_conversation_events_or_logs(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, caplog, http_server_client
) -> None:
    caplog.set_level(logging.DEBUG)
    events: list[dict[str, Any]] = []
    subscription = await jp_ws_fetch("api", "events", "subscribe")
    reader = asyncio.ensure_future(read_events(subscription, events))
    make_notebook(jp_root_dir, NOTEBOOK, [OLD])
    await start_session(jp_fetch, NOTEBOOK)
    artifact_id = copilot.jupyter_server.artifact_id(NOTEBOOK)
    cell_id = f"cell-{CANARY}"
    page = await ScriptedPage.connect(jp_ws_fetch, f"page-{CANARY}", url=f"lab/tree/{NOTEBOOK}")
    cells = [{"cellId": cell_id, "cellType": "code", "source": OLD}]

    def respond(request: dict[str, Any]) -> dict[str, Any] | None:
        if request["action"] == READ_CELLS:
            return read_cells_answer(cells, request, NOTEBOOK)
        return context_answer(NOTEBOOK, OLD, selected=[cell_id])

    page.respond = respond
    await page.send_state(notebook_state(NOTEBOOK, selected=[cell_id]))
    conversation = await create(jp_fetch, contextRefs=["selected_cell"])
    attachment = {
        "artifactId": artifact_id,
        "cellId": cell_id,
        "expectedSourceHash": source_hash(OLD),
    }
    events_of_turn = await send(
        jp_fetch, conversation, f"reply {CANARY}", page_id=page.page_id, attachment=attachment
    )
    assert CANARY in reply_of(events_of_turn)
    turn = asyncio.ensure_future(send(jp_fetch, conversation, "permission", page_id=page.page_id))
    while (card := await page.next_message())["type"] != "approval":
        pass
    await jp_fetch(
        "copilot",
        "api",
        "approvals",
        card["request"]["requestId"],
        method="POST",
        body=json.dumps({"optionId": "yes-once"}),
    )
    await asyncio.wait_for(turn, 20)
    await send(jp_fetch, conversation, f"crash {CANARY}")
    page.close()

    ours = await our_events(events, {"conversation/turn/v1", "approval/requested/v1"})
    reader.cancel()
    subscription.close()
    text = json.dumps(ours)
    assert CANARY not in text
    assert conversation not in text and artifact_id not in text
    turns = [e for e in ours if e["schema_id"].endswith("conversation/turn/v1")]
    assert [(e["stopReason"], e["attachment"], e["agentKind"]) for e in turns] == [
        ("end_turn", True, "configured"),
        ("end_turn", False, "configured"),
        ("error", False, "configured"),
    ]
    [requested] = [e for e in ours if e["schema_id"].endswith("approval/requested/v1")]
    assert requested["toolName"] is None and requested["callerKind"] == "conversation"
    loud = [r for r in caplog.records if r.levelno >= logging.INFO]
    assert not [r.getMessage() for r in loud if CANARY in r.getMessage()]
