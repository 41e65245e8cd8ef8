"""Side-panel conversations with a real ACP agent subprocess (scripted for the test).

The server, its authentication, the agent process, ACP over its stdio, the MCP endpoint and
the MCP client inside the agent are real; only the JupyterLab page is scripted over the
real bridge WebSocket.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import httpx2
import pytest

from jupyter_copilot.agents.client import tool_cell
from jupyter_copilot.mcp.tools import READ_CELLS
from jupyter_copilot.page.context import source_hash
from tests.conftest import make_notebook
from tests.conversations import agent_log, api, create, end_of, reply_of, scripted_agents, send
from tests.eventually import eventually
from tests.mcpclient import mcp_url, read_cells_answer
from tests.pages import ScriptedPage, context_answer, next_of, notebook_state
from tests.server import INSERT_INVOKE, INVOKE, RUN_INVOKE, start_session

# The kernel sessions here only give the notebook its tool registrations; no test talks to the
# kernel, so they attach to one real kernel per test process (tests/kernels.py).
pytestmark = pytest.mark.shared_kernel

SOURCE = "def f(x):\n    return x  # canary-conv-41\n"
#: What the scripted page answers once a run the person allowed has ended.
RUN_DONE = {
    "executionCount": 4,
    "status": "error",
    "outputs": [
        {"outputType": "stream", "name": "stdout", "text": "partial\n"},
        {"outputType": "display_data", "data": {"text/html": {"bytes": 28}}},
        {"outputType": "error", "ename": "ValueError", "evalue": "bad x"},
    ],
}


@pytest.fixture
def log(tmp_path: Path) -> Path:
    """Where the scripted agent records what it received."""
    return tmp_path / "agent.jsonl"


@pytest.fixture
def copilot_config(log: Path) -> dict[str, Any]:
    """Offer only the scripted agent."""
    return scripted_agents(log)


@pytest.fixture
def listening(http_server_client: Any) -> None:
    """Make the server listen: the agent's MCP client connects over real HTTP."""


async def open_notebook(jp_fetch: Any, jp_ws_fetch: Any, root: Path, copilot: Any) -> Any:
    """``a.ipynb`` with a kernel session, active and selected in a scripted page."""
    path = make_notebook(root, "a.ipynb", [SOURCE, "y = 2\n"])
    await start_session(jp_fetch, "a.ipynb")
    import nbformat

    cells = [
        {"cellId": c.id, "cellType": c.cell_type, "source": c.source}
        for c in nbformat.read(path, as_version=4).cells
    ]
    page = await ScriptedPage.connect(jp_ws_fetch, "p-1")
    await page.send_state(notebook_state("a.ipynb", selected=[cells[0]["cellId"]]))

    def respond(request: dict[str, Any]) -> dict[str, Any]:
        if request["action"] == READ_CELLS:
            return read_cells_answer(cells, request)
        if request["action"] == INVOKE:
            return {"diffReviewOpened": True}
        if request["action"] == INSERT_INVOKE:
            return {"reviewOpened": True}
        if request["action"] == RUN_INVOKE:
            return RUN_DONE
        return context_answer("a.ipynb", SOURCE, selected=[cells[0]["cellId"]])

    page.respond = respond
    page.cells = cells
    page.artifact_id = copilot.jupyter_server.artifact_id("a.ipynb")
    return page


# -- the pickers -------------------------------------------------------------------------------


async def test_agents_lists_the_configured_agent_the_context_refs_and_the_modes(
    jp_fetch: Any,
) -> None:
    status, body = await api(jp_fetch, "agents")
    assert status == 200
    assert body["agents"] == [
        {
            "id": "scripted",
            "label": "Scripted agent",
            "description": "Does what the test says.",
            "guarded": True,
            "warning": None,
            "unavailable": None,
        }
    ]
    assert body["defaultAgent"] == "scripted"
    assert [r["id"] for r in body["contextRefs"]] == [
        "selected_cell",
        "active_notebook",
        "cell_outputs",
        "kernel_variables",
        "files",
    ]
    assert all(r["label"] and r["allows"] for r in body["contextRefs"])
    # The scripted agent records to the test's folder, so it runs unsandboxed (tests/sandboxing.py).
    assert body["sandbox"]["mode"] == "off" and body["sandbox"]["active"] is False
    assert [(m["id"], m["label"]) for m in body["modes"]] == [
        ("plan", "Plan"),
        ("interactive", "Ask before edits"),
        ("autopilot", "Autopilot"),
    ]
    assert body["defaults"] == {"contextRefs": ["selected_cell"], "mode": "interactive"}
    assert body["toolsEnabled"] is True
    # No command, environment or path reaches the page.
    assert "scripted_agent.py" not in json.dumps(body)


async def test_conversations_created_in_the_same_second_are_listed_newest_first(
    jp_fetch: Any, copilot: Any
) -> None:
    ids = [await create(jp_fetch, chatOnly=True) for _ in range(3)]
    # createdAt counts whole seconds: make all three fall in one.
    for conversation in copilot.conversations.listed("owner"):
        conversation.created_at = "2026-12-02T18:00:00Z"
    _, listed = await api(jp_fetch, "conversations")
    assert [c["id"] for c in listed["conversations"]] == ids[::-1]


# -- what reaches the agent --------------------------------------------------------------------


async def test_a_chat_only_message_reaches_the_agent_verbatim_with_no_mcp_server(
    jp_fetch: Any, log: Path
) -> None:
    conversation = await create(jp_fetch, chatOnly=True)
    events = await send(jp_fetch, conversation, "Reply with the word received")
    assert events[0]["type"] == "turn" and events[0]["toolsAttached"] is False
    assert reply_of(events) == "received"
    assert end_of(events) == {"type": "end", "stopReason": "end_turn", "error": None}
    assert [e["blocks"] for e in agent_log(log, "prompt")] == [
        [{"type": "text", "text": "Reply with the word received"}]
    ]
    [session] = agent_log(log, "new_session")
    assert session["mcpServers"] == []
    [init] = agent_log(log, "initialize")
    caps = init["clientCapabilities"]
    # Announced in every mode: what the agent asks for is then held to the mode by us.
    assert caps["fs"]["readTextFile"] is True and caps["fs"]["writeTextFile"] is True
    assert caps["terminal"] is True
    status, body = await api(jp_fetch, "conversations", conversation)
    assert body["conversation"]["toolsAttached"] is False
    assert body["conversation"]["title"] == "Reply with the word received"
    [turn] = body["turns"]
    assert turn["user"] == {"text": "Reply with the word received", "attachment": None}
    assert (turn["reply"], turn["stopReason"]) == ("received", "end_turn")


async def test_no_context_reference_means_no_tools_even_when_not_chat_only(
    jp_fetch: Any, log: Path
) -> None:
    conversation = await create(jp_fetch, chatOnly=False, contextRefs=[])
    events = await send(jp_fetch, conversation, "mcp context_snapshot {}")
    assert events[0]["toolsAttached"] is False
    assert "no tools" in reply_of(events)
    assert agent_log(log, "new_session")[0]["mcpServers"] == []


async def test_the_attached_cell_travels_as_a_resource_and_tools_use_the_conversation_token(
    jp_fetch: Any, jp_ws_fetch: Any, jp_root_dir: Path, copilot: Any, log: Path, listening: None
) -> None:
    page = await open_notebook(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    cell_id = page.cells[0]["cellId"]
    conversation = await create(jp_fetch, contextRefs=["selected_cell"], mode="plan")
    attachment = {
        "artifactId": page.artifact_id,
        "cellId": cell_id,
        "expectedSourceHash": source_hash(SOURCE),
    }
    text = "mcp context_snapshot {}"
    events = await send(jp_fetch, conversation, text, page_id="p-1", attachment=attachment)
    assert end_of(events)["stopReason"] == "end_turn"
    [prompt] = agent_log(log, "prompt")
    # The message verbatim, and the cell as its own block: never pasted into the text.
    assert prompt["blocks"][0] == {"type": "text", "text": text}
    resource = prompt["blocks"][1]["resource"]
    assert prompt["blocks"][1]["type"] == "resource"
    assert resource["text"] == SOURCE
    # The hash travels in the URI too: real adapters pass the URI on and drop _meta.
    assert resource["uri"] == (
        f"jupyter-copilot://cell/{page.artifact_id}/{cell_id}"
        f"?expectedSourceHash={source_hash(SOURCE)}"
    )
    assert resource["_meta"] == {
        "cellId": cell_id,
        "cellType": "code",
        "expectedSourceHash": source_hash(SOURCE),
    }
    [server] = agent_log(log, "new_session")[0]["mcpServers"]
    assert server["name"] == "jupyter-copilot"
    assert server["url"].endswith("copilot/mcp")
    [header] = server["headers"]
    assert header["name"] == "Authorization" and header["value"].startswith("Bearer jcc-")
    [tool] = agent_log(log, "tool")
    assert tool["isError"] is False
    assert tool["result"]["approvalMode"] == "plan"
    assert tool["result"]["contextRefs"] == ["selected_cell"]
    # The panel sees the attachment's label, not its source.
    _, detail = await api(jp_fetch, "conversations", conversation)
    # With the notebook it came from, for an export's link (docs/conversations.md).
    assert detail["turns"][0]["user"]["attachment"] == {
        "cellId": cell_id,
        "label": "Code cell 1",
        "notebook": "a.ipynb",
    }
    assert "canary-conv-41" not in json.dumps(detail)

    # Grants are read again on every call: the change applies to the next call.
    status, _ = await api(
        jp_fetch,
        "conversations",
        conversation,
        method="PATCH",
        body={"mode": "autopilot", "contextRefs": ["selected_cell", "cell_outputs"]},
    )
    assert status == 200
    await send(jp_fetch, conversation, "mcp context_snapshot {}")
    second = agent_log(log, "tool")[-1]["result"]
    assert second["approvalMode"] == "autopilot"
    assert second["contextRefs"] == ["selected_cell", "cell_outputs"]

    # The token works only for this conversation's life.
    token = header["value"]
    status, _ = await api(jp_fetch, "conversations", conversation, "archive", method="POST")
    assert status == 200
    async with httpx2.AsyncClient(headers={"Authorization": token}, timeout=10) as http:
        response = await http.post(
            server["url"],
            content=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
            headers={"content-type": "application/json", "accept": "application/json"},
        )
    assert response.status_code == 403
    status, body = await api(
        jp_fetch, "conversations", conversation, "messages", method="POST", body={"text": "hi"}
    )
    assert (status, body["error"]["code"]) == (400, "invalid-input")
    page.close()


async def test_an_unknown_conversation_token_is_refused(
    jp_http_port: int, jp_base_url: str, listening: None
) -> None:
    async with httpx2.AsyncClient(headers={"Authorization": "Bearer jcc-nope"}) as http:
        response = await http.post(
            mcp_url(jp_http_port, jp_base_url),
            content=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
            headers={"content-type": "application/json"},
        )
    assert response.status_code == 403


async def test_a_deleted_attached_cell_refuses_the_message_before_the_agent_starts(
    jp_fetch: Any, jp_ws_fetch: Any, jp_root_dir: Path, copilot: Any, log: Path
) -> None:
    page = await open_notebook(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    conversation = await create(jp_fetch)
    status, body = await api(
        jp_fetch,
        "conversations",
        conversation,
        "messages",
        method="POST",
        body={
            "text": "explain",
            "pageId": "p-1",
            "attachment": {
                "artifactId": page.artifact_id,
                "cellId": "gone",
                "expectedSourceHash": "h",
            },
        },
    )
    assert (status, body["error"]["code"]) == (404, "cell-not-found")
    assert agent_log(log) == []
    page.close()


# -- permission requests, Stop, crashes --------------------------------------------------------


async def test_the_agents_permission_request_is_a_card_with_its_options(
    jp_fetch: Any, jp_ws_fetch: Any, jp_root_dir: Path, copilot: Any
) -> None:
    page = await open_notebook(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    conversation = await create(jp_fetch)
    for decision, expected in (
        ({"optionId": "yes-once"}, "chose yes-once"),
        ({"optionId": "no"}, "chose no"),
        ({"decision": "allow"}, "chose yes-once"),
        ({"decision": "deny"}, "chose cancelled"),
    ):
        turn = asyncio.ensure_future(send(jp_fetch, conversation, "permission", page_id="p-1"))
        card = await next_of(page, "approval")
        request = card["request"]
        assert request["kind"] == "permission"
        assert request["toolName"] == "Run a scripted step"
        assert request["description"] == "Scripted agent asks for permission"
        assert request["details"]["conversationId"] == conversation
        assert request["options"] == [
            {"optionId": "yes-once", "name": "Allow once", "kind": "allow_once"},
            {"optionId": "no", "name": "Reject", "kind": "reject_once"},
        ]
        status, _ = await api(
            jp_fetch, "approvals", request["requestId"], method="POST", body={"optionId": "maybe"}
        )
        assert status == 400
        status, _ = await api(
            jp_fetch, "approvals", request["requestId"], method="POST", body=decision
        )
        assert status == 200
        events = await asyncio.wait_for(turn, 30)
        assert reply_of(events) == expected
    page.close()


async def test_stop_cancels_a_slow_reply_and_ends_its_waiting_cards(
    jp_fetch: Any, log: Path
) -> None:
    conversation = await create(jp_fetch, chatOnly=True)
    turn = asyncio.ensure_future(send(jp_fetch, conversation, "slow"))

    async def thinking() -> Any:
        _, body = await api(jp_fetch, "conversations", conversation)
        return body if body["turns"] and body["turns"][0]["reply"] == "thinking" else None

    body = await eventually(thinking, "the slow reply's first words", 10)
    assert body["conversation"]["state"] == "running"
    status, body = await api(jp_fetch, "conversations", conversation, "cancel", method="POST")
    assert (status, body) == (200, {"cancelled": True})
    events = await asyncio.wait_for(turn, 10)
    assert end_of(events)["stopReason"] == "cancelled"
    assert agent_log(log, "cancel")
    # Nothing is running any more; a second Stop says so.
    _, body = await api(jp_fetch, "conversations", conversation, "cancel", method="POST")
    assert body == {"cancelled": False}


async def test_stop_ends_an_agent_that_ignores_it_and_the_next_message_restarts_it(
    jp_fetch: Any, log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("jupyter_copilot.agents.turns.CANCEL_GRACE_SECONDS", 0.5)
    conversation = await create(jp_fetch, chatOnly=True)
    turn = asyncio.ensure_future(send(jp_fetch, conversation, "stubborn"))
    await eventually(lambda: agent_log(log, "prompt"), "the agent to get the prompt")
    await api(jp_fetch, "conversations", conversation, "cancel", method="POST")
    events = await asyncio.wait_for(turn, 15)
    assert end_of(events)["stopReason"] == "cancelled"
    events = await send(jp_fetch, conversation, "Reply with the word again")
    assert events[0]["restarted"] is True
    assert reply_of(events) == "again"
    assert len(agent_log(log, "initialize")) == 2


async def test_a_crash_is_reported_in_the_conversation_and_the_next_message_works(
    jp_fetch: Any, log: Path
) -> None:
    conversation = await create(jp_fetch, chatOnly=True)
    events = await send(jp_fetch, conversation, "crash")
    end = end_of(events)
    assert end["stopReason"] == "error"
    assert "stopped unexpectedly" in end["error"] and "exit code 3" in end["error"]
    events = await send(jp_fetch, conversation, "Reply with the word back")
    assert reply_of(events) == "back"
    assert end_of(events)["stopReason"] == "end_turn"
    _, body = await api(jp_fetch, "conversations", conversation)
    assert [t["stopReason"] for t in body["turns"]] == ["error", "end_turn"]


async def test_an_idle_agent_is_stopped_and_the_next_message_starts_it_again(
    jp_fetch: Any, copilot: Any, log: Path
) -> None:
    copilot.agent_idle_timeout_seconds = 0.5
    conversation = await create(jp_fetch, chatOnly=True)
    assert reply_of(await send(jp_fetch, conversation, "Reply with the word one")) == "one"
    pid = copilot.conversations.get("owner", conversation).process.pid
    await eventually(lambda: not alive(pid), "the idle agent to stop", 10)
    assert not alive(pid)
    events = await send(jp_fetch, conversation, "Reply with the word two")
    assert events[0]["restarted"] is True and reply_of(events) == "two"
    assert len(agent_log(log, "initialize")) == 2


async def test_a_second_message_while_the_agent_replies_is_refused_as_busy(
    jp_fetch: Any,
) -> None:
    conversation = await create(jp_fetch, chatOnly=True)
    turn = asyncio.ensure_future(send(jp_fetch, conversation, "slow"))

    async def running() -> bool:
        _, body = await api(jp_fetch, "conversations", conversation)
        return body["conversation"]["state"] == "running"  # type: ignore[no-any-return]

    await eventually(running, "the conversation to be running")
    status, body = await api(
        jp_fetch, "conversations", conversation, "messages", method="POST", body={"text": "hi"}
    )
    assert (status, body["error"]["code"]) == (409, "conversation-busy")
    await api(jp_fetch, "conversations", conversation, "cancel", method="POST")
    await asyncio.wait_for(turn, 10)


# -- edits through the conversation's tools ----------------------------------------------------


async def test_plan_mode_refuses_the_agents_edit_and_interactive_shows_a_card_stop_ends(
    jp_fetch: Any, jp_ws_fetch: Any, jp_root_dir: Path, copilot: Any, log: Path, listening: None
) -> None:
    page = await open_notebook(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    conversation = await create(jp_fetch, mode="plan")
    new = json.dumps('def f(x):\n    """Return x."""\n    return x\n')
    await send(jp_fetch, conversation, f"edit-selected {new}", page_id="p-1")
    edit = agent_log(log, "tool")[-1]
    assert edit["name"] == "notebook_edit_cell" and edit["result"]["error"]["code"] == "plan-mode"
    assert not [r for r in page.requests if r["action"] == INVOKE]

    await api(jp_fetch, "conversations", conversation, method="PATCH", body={"mode": "interactive"})
    turn = asyncio.ensure_future(
        send(jp_fetch, conversation, f"edit-selected {new}", page_id="p-1")
    )
    card = await next_of(page, "approval")
    assert card["request"]["kind"] == "edit" and card["request"]["toolName"] == "notebook_edit_cell"
    await api(jp_fetch, "conversations", conversation, "cancel", method="POST")
    ended = await next_of(page, "approval-ended")
    assert ended["outcome"] == "aborted"
    events = await asyncio.wait_for(turn, 15)
    assert end_of(events)["stopReason"] in ("cancelled", "end_turn")
    assert not [r for r in page.requests if r["action"] == INVOKE]
    page.close()


async def test_the_kill_switch_engaged_mid_conversation_refuses_the_next_edit(
    jp_fetch: Any,
    jp_ws_fetch: Any,
    jp_root_dir: Path,
    jp_config_dir: Path,
    copilot: Any,
    log: Path,
    listening: None,
) -> None:
    page = await open_notebook(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    conversation = await create(jp_fetch, mode="autopilot")
    new = json.dumps("def f(x):\n    return 2 * x\n")
    await send(jp_fetch, conversation, f"edit-selected {new}", page_id="p-1")
    assert agent_log(log, "tool")[-1]["result"]["diffReviewOpened"] is True
    (jp_config_dir / "jupyter_copilot_config.json").write_text(
        json.dumps({"CopilotApp": {"tools_enabled": False}})
    )
    arguments = {
        "artifactId": page.artifact_id,
        "cellId": page.cells[0]["cellId"],
        "expectedSourceHash": source_hash(SOURCE),
        "newSource": "x = 3\n",
    }
    await send(jp_fetch, conversation, f"mcp notebook_edit_cell {json.dumps(arguments)}")
    assert agent_log(log, "tool")[-1]["result"]["error"]["code"] == "kill-switch"
    assert len([r for r in page.requests if r["action"] == INVOKE]) == 1
    _, body = await api(jp_fetch, "agents")
    assert body["toolsEnabled"] is False
    page.close()


# -- bad input and other people's conversations ------------------------------------------------


@pytest.mark.parametrize(
    ("path", "method", "body", "status", "code"),
    [
        (("conversations",), "POST", {"agentId": "nope"}, 400, "invalid-input"),
        (("conversations",), "POST", {"mode": "yolo"}, 400, "invalid-input"),
        (("conversations",), "POST", {"contextRefs": ["everything"]}, 400, "invalid-input"),
        (("conversations",), "POST", {"chatOnly": "yes"}, 400, "invalid-input"),
        (("conversations",), "POST", {"extra": 1}, 400, "invalid-input"),
        (("conversations",), "POST", [1], 400, "invalid-input"),
        (("conversations", "0" * 32), "GET", None, 404, "unknown-conversation"),
        (
            ("conversations", "0" * 32, "messages"),
            "POST",
            {"text": "x"},
            404,
            "unknown-conversation",
        ),
        (("approvals", "nope"), "POST", {"optionId": 3}, 400, "invalid-input"),
    ],
)
async def test_bad_requests_get_a_clear_error(
    jp_fetch: Any, path: tuple[str, ...], method: str, body: Any, status: int, code: str
) -> None:
    got, answer = await api(jp_fetch, *path, method=method, body=body)
    assert (got, answer["error"]["code"]) == (status, code)


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"text": ""},
        {"text": 3},
        {"text": "x", "attachment": {"cellId": "c"}},
        {"text": "x", "y": 1},
    ],
)
async def test_bad_messages_are_refused_and_nothing_reaches_the_agent(
    jp_fetch: Any, log: Path, body: dict[str, Any]
) -> None:
    conversation = await create(jp_fetch)
    status, answer = await api(
        jp_fetch, "conversations", conversation, "messages", method="POST", body=body
    )
    assert (status, answer["error"]["code"]) == (400, "invalid-input")
    assert agent_log(log) == []


async def test_the_agent_and_chat_only_are_fixed_at_the_first_message(jp_fetch: Any) -> None:
    conversation = await create(jp_fetch, chatOnly=True)
    status, _ = await api(
        jp_fetch, "conversations", conversation, method="PATCH", body={"chatOnly": False}
    )
    assert status == 200
    await send(jp_fetch, conversation, "Reply with the word fixed")
    status, body = await api(
        jp_fetch, "conversations", conversation, method="PATCH", body={"chatOnly": True}
    )
    assert (status, body["error"]["code"]) == (400, "invalid-input")
    _, listed = await api(jp_fetch, "conversations")
    assert [c["id"] for c in listed["conversations"]] == [conversation]


# -- server shutdown ---------------------------------------------------------------------------


def running(*argv: str) -> bool:
    """Whether a live process has exactly this command line (found in any PID namespace)."""
    wanted = "\0".join(argv) + "\0"
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_text() == wanted and alive(int(entry.name)):
                    return True
            except OSError:
                continue
    return False


def alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie waiting to be reaped."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        # Gone before the open, or reaped between the open and the read (ESRCH).
        return False


async def test_server_shutdown_stops_every_agent_and_its_children(
    jp_fetch: Any, copilot: Any, log: Path
) -> None:
    first = await create(jp_fetch, chatOnly=True)
    second = await create(jp_fetch, chatOnly=True)
    # One agent ignores SIGTERM and has a child; the other is busy replying.
    await send(jp_fetch, first, "ignore-term")
    await send(jp_fetch, first, "spawn-child")
    busy = asyncio.ensure_future(send(jp_fetch, second, "slow"))
    await eventually(lambda: len(agent_log(log, "prompt")) >= 3, "three prompts")
    [child] = [e["marker"] for e in agent_log(log, "child")]
    agents = [c.process.pid for c in copilot.conversations.listed("owner")]
    assert len(agents) == 2 and all(alive(pid) for pid in agents) and running("sleep", child)
    sandboxed = copilot.conversations.host.sandbox.active
    await copilot.stop_extension()
    assert not any(alive(pid) for pid in agents)
    # A child that left the agent's process group ends with it only under the sandbox (its
    # PID namespace); these scripted agents run without it (docs/security.md, "Limits").
    if sandboxed:
        assert not running("sleep", child)
    else:
        subprocess.run(["pkill", "-f", child], check=False)
    events = await asyncio.wait_for(busy, 10)
    assert end_of(events)["stopReason"] == "cancelled"


@pytest.mark.parametrize(
    ("raw_input", "cell"),
    [
        ({"cellId": "cell-7", "newSource": "print('secret')"}, "cell-7"),
        ({"afterCellId": "a1_B", "source": "x"}, "a1_B"),
        ({"cellId": "c", "afterCellId": "d"}, "c"),
        ({"cellId": "../../etc/passwd"}, None),
        ({"cellId": "x" * 65}, None),
        ({"cellId": "cell-7\n"}, None),
        ({"cellId": "z\u00e9"}, None),
        ({"cellId": 7}, None),
        ({"cell": {"cellId": "c"}}, None),
        ("cellId=cell-7", None),
        (["cell-7"], None),
        (None, None),
    ],
)
def test_a_tool_card_names_a_cell_only_by_a_well_formed_id_of_its_input(
    raw_input: Any, cell: str | None
) -> None:
    # Whatever the agent puts in a call's input, the card gets at most a cell id from it.
    assert tool_cell(raw_input) == cell
