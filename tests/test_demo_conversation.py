"""The shipped demo agent, started by the server, in a conversation with a scripted page."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from jupyter_copilot.page.context import source_hash
from tests.conversations import api, create, end_of, reply_of, send
from tests.eventually import eventually
from tests.server import INSERT_INVOKE, INVOKE, RUN_INVOKE
from tests.test_conversations import next_of, open_notebook

UNDOCUMENTED = "def f(x):\n    return x  # canary-conv-41\n"


@pytest.fixture
def copilot_config(request: pytest.FixtureRequest) -> dict[str, Any]:
    """No agent configured: the demo agent is what is offered (or the test's settings)."""
    return {"discover_agents": False, **getattr(request, "param", {})}


#: The demo agent of this source tree, configured by hand: the offered one runs isolated
#: (``python -I``) and so imports the installed package, which may be an older one.
THIS_DEMO = {
    "agents": {
        "demo": {
            "label": "Demo",
            "command": [sys.executable, "-m", "jupyter_copilot.demo_agent"],
            "env": {"PYTHONPATH": str(Path(__file__).resolve().parent.parent)},
        }
    }
}


async def test_the_demo_agent_is_offered_when_no_agent_is_configured(jp_fetch: Any) -> None:
    _, body = await api(jp_fetch, "agents")
    assert [a["id"] for a in body["agents"]] == ["demo"]
    assert "rule-based" in body["agents"][0]["label"]
    conversation = await create(jp_fetch, chatOnly=True)
    events = await send(jp_fetch, conversation, "Reply with the word received")
    assert reply_of(events) == "received"


async def test_ask_before_edits_the_demo_agent_proposes_docstrings_after_allow(
    jp_fetch: Any, jp_ws_fetch: Any, jp_root_dir: Path, copilot: Any, http_server_client: Any
) -> None:
    page = await open_notebook(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    cell_id = page.cells[0]["cellId"]
    attachment = {
        "artifactId": page.artifact_id,
        "cellId": cell_id,
        "expectedSourceHash": source_hash(UNDOCUMENTED),
    }
    conversation = await create(jp_fetch, contextRefs=["selected_cell"], mode="interactive")
    turn = asyncio.ensure_future(
        send(jp_fetch, conversation, "add docstrings", page_id="p-1", attachment=attachment)
    )
    card = await next_of(page, "approval", timeout=30)
    assert card["request"]["toolName"] == "notebook_edit_cell"
    assert card["request"]["details"]["cellId"] == cell_id
    assert not [r for r in page.requests if r["action"] == INVOKE]
    status, _ = await api(
        jp_fetch,
        "approvals",
        card["request"]["requestId"],
        method="POST",
        body={"decision": "allow"},
    )
    assert status == 200
    events = await asyncio.wait_for(turn, 60)
    assert end_of(events)["stopReason"] == "end_turn"
    [invoke] = [r for r in page.requests if r["action"] == INVOKE]
    new = invoke["data"]["newSource"]
    assert new == 'def f(x):\n    """F."""\n    return x  # canary-conv-41\n'
    assert invoke["data"]["expectedSourceHash"] == source_hash(UNDOCUMENTED)
    assert "Keep" in reply_of(events)
    tools = [e for e in events if e["type"] == "tool"]
    assert tools and tools[-1]["status"] == "completed"
    # The edit's card names the cell, by id only: the panel links it to the cell.
    edit = [e for e in tools if e["title"] == "Propose an edit of the cell"]
    assert edit and {e.get("cellId") for e in edit} == {cell_id}
    shown = {"type", "toolCallId", "title", "status", "error", "kind", "cellId"}
    assert all(set(e) <= shown for e in tools), "only these fields, never the input"

    # The same in Plan mode is refused, and nothing reaches the page.
    await api(jp_fetch, "conversations", conversation, method="PATCH", body={"mode": "plan"})
    events = await send(
        jp_fetch, conversation, "add docstrings", page_id="p-1", attachment=attachment
    )
    assert "Plan mode" in reply_of(events)
    assert len([r for r in page.requests if r["action"] == INVOKE]) == 1
    page.close()


@pytest.mark.parametrize("copilot_config", [THIS_DEMO], indirect=True)
async def test_in_autopilot_the_demo_agent_proposes_a_note_as_a_pending_cell(
    jp_fetch: Any, jp_ws_fetch: Any, jp_root_dir: Path, copilot: Any
) -> None:
    page = await open_notebook(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    cell_id = page.cells[0]["cellId"]
    attachment = {
        "artifactId": page.artifact_id,
        "cellId": cell_id,
        "expectedSourceHash": source_hash(UNDOCUMENTED),
    }
    conversation = await create(jp_fetch, contextRefs=["selected_cell"], mode="autopilot")
    events = await send(
        jp_fetch,
        conversation,
        "add a cell that describes this one",
        page_id="p-1",
        attachment=attachment,
    )
    assert end_of(events)["stopReason"] == "end_turn"
    [request] = [r for r in page.requests if r["action"] == INSERT_INVOKE]
    data = request["data"]
    assert (data["afterCellId"], data["cellType"]) == (cell_id, "markdown")
    assert data["source"].startswith("### About the cell above\n\nThe cell above has 2 lines")
    assert "`f(x)`" in data["source"]
    assert not [r for r in page.requests if r["action"] == INVOKE]
    assert "Keep" in reply_of(events) and "not in the notebook yet" in reply_of(events)
    # A new cell's card names the cell it is to follow.
    tools = [e for e in events if e["type"] == "tool"]
    insert = [e for e in tools if e["title"] == "Propose a new cell"]
    assert insert and {e.get("cellId") for e in insert} == {cell_id}
    page.close()


@pytest.mark.parametrize("copilot_config", [THIS_DEMO], indirect=True)
async def test_even_in_autopilot_the_demo_agent_runs_a_cell_only_after_the_run_card(
    jp_fetch: Any, jp_ws_fetch: Any, jp_root_dir: Path, copilot: Any
) -> None:
    page = await open_notebook(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    cell_id = page.cells[0]["cellId"]
    attachment = {
        "artifactId": page.artifact_id,
        "cellId": cell_id,
        "expectedSourceHash": source_hash(UNDOCUMENTED),
    }
    conversation = await create(jp_fetch, contextRefs=["selected_cell"], mode="autopilot")

    async def ask_and_decide(decision: str) -> list[dict[str, Any]]:
        turn = asyncio.ensure_future(
            send(jp_fetch, conversation, "run this cell", page_id="p-1", attachment=attachment)
        )
        card = await next_of(page, "approval", timeout=30)
        assert (card["request"]["kind"], card["request"]["details"]["cellId"]) == ("run", cell_id)
        assert not [r for r in page.requests if r["action"] == RUN_INVOKE]
        status, _ = await api(
            jp_fetch,
            "approvals",
            card["request"]["requestId"],
            method="POST",
            body={"decision": decision},
        )
        assert status == 200
        return await asyncio.wait_for(turn, 60)

    events = await ask_and_decide("deny")
    assert "`denied`" in reply_of(events)
    assert not [r for r in page.requests if r["action"] == RUN_INVOKE]
    events = await ask_and_decide("allow")
    assert end_of(events)["stopReason"] == "end_turn"
    [run] = [r for r in page.requests if r["action"] == RUN_INVOKE]
    assert run["data"]["cellId"] == cell_id
    reply = reply_of(events)
    # It says how the run ended and what it printed, from the digests only.
    assert "raised an error (execution count 4)" in reply
    assert "partial" in reply and "text/html (28 bytes)" in reply
    assert "`ValueError`: bad x" in reply
    tools = [e for e in events if e["type"] == "tool"]
    assert tools[-1]["status"] == "completed"
    page.close()


@pytest.mark.parametrize("copilot_config", [THIS_DEMO], indirect=True)
async def test_the_demo_agent_stopped_for_idleness_comes_back_with_its_session(
    jp_fetch: Any, copilot: Any
) -> None:
    copilot.agent_idle_timeout_seconds = 0.5
    conversation_id = await create(jp_fetch, chatOnly=True)
    assert reply_of(await send(jp_fetch, conversation_id, "Reply with the word one")) == "one"
    conversation = copilot.conversations.get("owner", conversation_id)
    session, process = conversation.session_id, conversation.process
    assert conversation.loads_sessions is True
    await eventually(lambda: process.exited, "the idle demo agent to stop", 10)
    events = await send(jp_fetch, conversation_id, "Reply with the word two")
    # session/load brought the same session back: the panel does not say it starts fresh.
    assert events[0]["restarted"] is False and reply_of(events) == "two"
    assert not [e for e in events if e["type"] == "notice"]
    assert conversation.process is not process and conversation.session_id == session
