"""A real third-party ACP agent, fast-agent, edits a live notebook through ``copilot/mcp``.

Everything is real except the language model, a scripted OpenAI-compatible endpoint served
by the test, and the JupyterLab page, scripted over the real bridge WebSocket. fast-agent
runs from its own Python 3.12+ virtualenv (see ``tests/fastagent.py``); without one these
tests are skipped, or fail on CI.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import acp
import httpx2
import pytest
from acp.schema import ClientCapabilities, FileSystemCapabilities

from jupyter_copilot.mcp.tools import READ_CELLS
from jupyter_copilot.page.context import source_hash
from tests.conftest import make_notebook
from tests.conversations import api, create, end_of, reply_of, send
from tests.fastagent import (
    MCP_SERVER_NAME,
    FastAgentRun,
    RecordingClient,
    jupyter_mcp_server,
    spawn_fast_agent,
)
from tests.mcpclient import mcp_url, read_cells_answer
from tests.pages import ScriptedPage, context_answer, notebook_state
from tests.scriptedmodel import (
    ScriptedModel,
    ToolCall,
    last_tool_result,
    message_text,
    read_then_edit,
    tool_names,
)
from tests.server import INVOKE, start_session

# The kernel sessions here only give the notebook its tool registrations; no test talks to the
# kernel, so they attach to one real kernel per test process (tests/kernels.py).
pytestmark = pytest.mark.shared_kernel

OLD = "x = 1\n"
NEW = "x = 2  # set by fast-agent\n"
ASK = "Make x equal 2 in the selected cell, please. «verbatim ✓»"
READ = f"{MCP_SERVER_NAME}__notebook_read_selected_cell"
EDIT = f"{MCP_SERVER_NAME}__notebook_edit_cell"
CELLS = [{"cellId": "c1", "cellType": "code", "source": OLD}]


@pytest.fixture
def copilot_config(fast_agent_run: FastAgentRun) -> dict[str, Any]:
    """The server offers fast-agent, and only fast-agent, in the side panel."""
    # fast-agent keeps its home, config and log in the test's folder, which the sandbox
    # makes unreachable (it hides /tmp): this module tests the protocol, not the sandbox.
    return {
        "agents": {"fast-agent": fast_agent_run.agent_setting()},
        "discover_agents": False,
        "agent_sandbox": "off",
    }


async def open_page(jp_fetch: Any, jp_ws_fetch: Any, root: Path) -> ScriptedPage:
    """A notebook with a kernel session, active in a scripted page that opens reviews."""
    make_notebook(root, "a.ipynb", [OLD])
    await start_session(jp_fetch, "a.ipynb")
    page = await ScriptedPage.connect(jp_ws_fetch, "p-1")
    await page.send_state(notebook_state("a.ipynb"))

    def respond(request: dict[str, Any]) -> dict[str, Any]:
        if request["action"] == INVOKE:
            return {"diffReviewOpened": True}
        if request["action"] == READ_CELLS:
            return read_cells_answer(CELLS, request)
        return context_answer("a.ipynb", OLD)

    page.respond = respond
    return page


def invokes(page: ScriptedPage) -> list[dict[str, Any]]:
    """The review requests the page received."""
    return [r for r in page.requests if r["action"] == INVOKE]


def assert_the_model_read_then_edited(model: ScriptedModel, copilot: Any) -> None:
    """What the model saw: the ask verbatim and our tools, the cell, the edit's result."""
    model.check()
    first, second, third = model.requests
    assert message_text([m for m in first["messages"] if m["role"] == "user"][0]).startswith(ASK)
    assert {READ, EDIT} <= set(tool_names(first))
    cell = json.loads(last_tool_result(second["messages"]))["cell"]
    assert cell["source"] == OLD and cell["expectedSourceHash"] == source_hash(OLD)
    assert cell["artifactId"] == copilot.jupyter_server.artifact_id("a.ipynb")
    assert json.loads(last_tool_result(third["messages"]))["diffReviewOpened"] is True


async def test_fast_agent_as_an_outside_client_reads_the_cell_and_opens_a_review(
    fast_agent_run: FastAgentRun,
    scripted_model: ScriptedModel,
    http_server_client: Any,
    jp_http_port: int,
    jp_base_url: str,
    jp_auth_header: dict[str, str],
    jp_fetch: Any,
    jp_ws_fetch: Any,
    jp_root_dir: Path,
    copilot: Any,
) -> None:
    page = await open_page(jp_fetch, jp_ws_fetch, jp_root_dir)
    copilot.external_approval_mode = "autopilot"
    scripted_model.script = read_then_edit(READ, EDIT, NEW)
    client = RecordingClient()
    async with spawn_fast_agent(client, fast_agent_run) as (conn, stderr):
        await conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=False, write_text_file=False),
                terminal=False,
            ),
        )
        endpoint = mcp_url(jp_http_port, jp_base_url)
        session = await conn.new_session(
            cwd=str(fast_agent_run.directory),
            mcp_servers=[jupyter_mcp_server(endpoint, jp_auth_header["Authorization"])],
        )
        response = await asyncio.wait_for(
            conn.prompt(session_id=session.session_id, prompt=[acp.text_block(ASK)]), 60
        )
    assert response.stop_reason == "end_turn", stderr.read_text()
    assert_the_model_read_then_edited(scripted_model, copilot)
    first = scripted_model.requests[0]
    assert [message_text(m) for m in first["messages"] if m["role"] == "user"] == [ASK]
    # fast-agent asked before each MCP tool call; our client allowed both once.
    assert [p["title"] for p in client.permissions] == [
        f"{MCP_SERVER_NAME}/notebook_read_selected_cell",
        f"{MCP_SERVER_NAME}/notebook_edit_cell",
    ]
    [invoke] = invokes(page)
    assert invoke["data"]["newSource"] == NEW
    assert invoke["data"]["expectedSourceHash"] == source_hash(OLD)
    assert invoke["data"]["artifactId"] == copilot.jupyter_server.artifact_id("a.ipynb")
    assert client.agent_text() == "Review opened: True."
    page.close()


async def answer_cards(
    page: ScriptedPage, http: httpx2.AsyncClient, approvals_url: str, cards: list[dict[str, Any]]
) -> None:
    """The person at the page: allow each card once, as the side panel would."""
    while True:
        message = await page.next_message(timeout=60)
        if message["type"] != "approval":
            continue
        request = message["request"]
        cards.append(request)
        if request["kind"] == "permission":
            [allow] = [o for o in request["options"] if o["kind"] == "allow_once"]
            body = {"optionId": allow["optionId"]}
        else:
            body = {"decision": "allow"}
        response = await http.post(approvals_url + request["requestId"], json=body)
        assert response.status_code == 200, response.text


async def test_a_conversation_drives_fast_agent_with_cards_for_its_permission_requests(
    scripted_model: ScriptedModel,
    http_server_client: Any,
    jp_http_port: int,
    jp_base_url: str,
    jp_auth_header: dict[str, str],
    jp_fetch: Any,
    jp_ws_fetch: Any,
    jp_root_dir: Path,
    copilot: Any,
) -> None:
    page = await open_page(jp_fetch, jp_ws_fetch, jp_root_dir)
    scripted_model.script = read_then_edit(READ, EDIT, NEW)
    status, agents = await api(jp_fetch, "agents")
    assert status == 200 and [a["id"] for a in agents["agents"]] == ["fast-agent"]
    conversation = await create(
        jp_fetch, agentId="fast-agent", chatOnly=False, contextRefs=["selected_cell"]
    )
    artifact = copilot.jupyter_server.artifact_id("a.ipynb")
    attachment = {"artifactId": artifact, "cellId": "c1", "expectedSourceHash": source_hash(OLD)}
    cards: list[dict[str, Any]] = []
    approvals = f"http://localhost:{jp_http_port}{jp_base_url}copilot/api/approvals/"
    async with httpx2.AsyncClient(headers=jp_auth_header, timeout=10) as http:
        reply = asyncio.ensure_future(
            send(jp_fetch, conversation, ASK, page_id="p-1", attachment=attachment)
        )
        person = asyncio.ensure_future(answer_cards(page, http, approvals, cards))
        await asyncio.wait({reply, person}, return_when=asyncio.FIRST_COMPLETED)
        person.cancel()
        if person.done() and not person.cancelled():
            reply.cancel()
            person.result()  # the person could not answer a card: say why
        events = await reply
    assert end_of(events) == {"type": "end", "stopReason": "end_turn", "error": None}
    assert reply_of(events) == "Review opened: True."
    assert_the_model_read_then_edited(scripted_model, copilot)

    # The person's words reach the model verbatim; the attached cell is a part of its own.
    [user] = [m for m in scripted_model.requests[0]["messages"] if m["role"] == "user"]
    words, attached = user["content"]
    assert words == {"type": "text", "text": ASK}
    assert attached["type"] == "text" and f"\n{OLD}\n" in attached["text"]
    assert 'mimetype="text/x-python"' in attached["text"]

    # Each tool call was a permission card first; the edit then showed its own edit card.
    assert [(c["kind"], c["toolName"]) for c in cards] == [
        ("permission", f"{MCP_SERVER_NAME}/notebook_read_selected_cell"),
        ("permission", f"{MCP_SERVER_NAME}/notebook_edit_cell"),
        ("edit", "notebook_edit_cell"),
    ]
    permission = cards[0]
    assert permission["description"] == "fast-agent asks for permission"
    assert permission["details"]["conversationId"] == conversation
    assert {"allow_once", "reject_once"} <= {o["kind"] for o in permission["options"]}
    assert NEW not in json.dumps(cards)

    [invoke] = invokes(page)
    assert invoke["data"]["newSource"] == NEW
    assert invoke["data"]["artifactId"] == artifact
    status, body = await api(jp_fetch, "conversations", conversation)
    assert status == 200 and body["conversation"]["toolsAttached"] is True
    [turn] = body["turns"]
    assert turn["user"]["text"] == ASK and turn["stopReason"] == "end_turn"
    assert [t["status"] for t in turn["toolCalls"]] == ["completed", "completed"]
    page.close()


async def test_the_scripted_model_streams_chunks_and_answers_whole_completions(
    scripted_model: ScriptedModel,
) -> None:
    scripted_model.script = [
        ToolCall(READ, {"includeOutputs": False}),
        lambda messages: f"You said: {message_text(messages[-1])}",
    ]
    url = scripted_model.url + "/chat/completions"
    async with httpx2.AsyncClient(timeout=10) as http:
        streamed = await http.post(
            url, json={"model": "scripted", "stream": True, "messages": [{"role": "user"}]}
        )
        whole = await http.post(
            url,
            json={"model": "scripted", "messages": [{"role": "user", "content": "hi"}]},
        )
    assert streamed.headers["content-type"] == "text/event-stream"
    events = [line[len("data: ") :] for line in streamed.text.split("\n\n") if line]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    calls = [call for d in deltas for call in d.get("tool_calls", [])]
    assert calls[0]["function"]["name"] == READ and calls[0]["id"]
    assert json.loads("".join(c["function"]["arguments"] for c in calls)) == {
        "includeOutputs": False
    }
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "tool_calls"
    assert chunks[-1]["usage"]["total_tokens"] == 15
    assert whole.json()["choices"][0]["message"] == {"role": "assistant", "content": "You said: hi"}
    assert len(scripted_model.requests) == 2
    scripted_model.check()
