"""The built-in model agent (``jupyter_copilot.model_agent``) through the real server.

A ``CopilotApp.models`` entry points it at the scripted OpenAI-compatible endpoint of the
test (tests/scriptedmodel.py); the agent runs as the server starts every agent (its own
process, under the sandbox where one works) and reaches the notebook only through
``copilot/mcp``. Skipped where the model library (the ``models`` extra) is not installed.
Each endpoint error, an endpoint that does not answer and each reply's tokens are tested
for this provider and the others in tests/test_model_providers.py.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from jupyter_copilot.mcp.tools import READ_CELLS
from jupyter_copilot.page.context import source_hash
from tests.conftest import make_notebook
from tests.conversations import api, create, end_of, reply_of, send
from tests.mcpclient import read_cells_answer
from tests.pages import ScriptedPage, context_answer, notebook_state
from tests.scriptedmodel import (
    Failure,
    ScriptedModel,
    Slow,
    message_text,
    read_then_edit,
    tool_names,
)
from tests.server import INVOKE, start_session

# The kernel sessions here only give the notebook its tool registrations; no test talks to the
# kernel, so they attach to one real kernel per test process (tests/kernels.py).
pytestmark = pytest.mark.shared_kernel

pytest.importorskip("pydantic_ai", reason="the models extra is not installed")

#: The key the server hands the model agent; it may appear nowhere else.
KEY = "sk-canary-model-key-93c1f0"
OLD = "x = 1\n"
NEW = "x = 2  # set by the model\n"
READ = "notebook_read_selected_cell"
EDIT = "notebook_edit_cell"


@pytest.fixture
def copilot_config(
    scripted_model: ScriptedModel, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Any:
    """One model endpoint, the scripted one, with its key in the server's environment."""
    monkeypatch.setenv("TEST_MODEL_KEY", KEY)
    return {
        "conversations_db_path": str(tmp_path / "conversations.db"),
        "models": {
            "team-model": {
                "label": "Team model",
                "provider": "openai-compatible",
                "base_url": scripted_model.url,
                "model": "scripted",
                "api_key": {"fromEnv": "TEST_MODEL_KEY"},
                "turn_seconds": 5,
            }
        },
        "discover_agents": False,
        "agents": {},
    }


@pytest.fixture
def jp_server_config(jp_server_config: Any, capfd: Any) -> Any:
    """The server's log is captured from its start (capfd)."""
    return jp_server_config


@pytest.fixture
def listening(http_server_client: Any) -> None:
    """Make the server listen: the agent's MCP client connects over real HTTP."""


async def open_page(jp_fetch: Any, jp_ws_fetch: Any, root: Path) -> ScriptedPage:
    """A notebook with a kernel session, active in a scripted page that opens reviews."""
    make_notebook(root, "a.ipynb", [OLD])
    await start_session(jp_fetch, "a.ipynb")
    page = await ScriptedPage.connect(jp_ws_fetch, "p-1")
    await page.send_state(notebook_state("a.ipynb"))
    cells = [{"cellId": "c1", "cellType": "code", "source": OLD}]

    def respond(request: dict[str, Any]) -> dict[str, Any]:
        if request["action"] == INVOKE:
            return {"diffReviewOpened": True}
        if request["action"] == READ_CELLS:
            return read_cells_answer(cells, request)
        return context_answer("a.ipynb", OLD)

    page.respond = respond
    return page


async def test_the_model_agent_is_offered_under_its_entry_id(jp_fetch: Any) -> None:
    status, body = await api(jp_fetch, "agents")
    assert status == 200
    offered = {a["id"]: a for a in body["agents"]}
    assert list(offered)[0] == "team-model"
    assert offered["team-model"]["label"] == "Team model"
    assert offered["team-model"]["unavailable"] is None
    assert KEY not in json.dumps(body) and "TEST_MODEL_KEY" not in json.dumps(body)


async def test_a_reply_streams_in_parts_with_the_key_sent_only_to_the_endpoint(
    listening: None, scripted_model: ScriptedModel, jp_fetch: Any
) -> None:
    scripted_model.script = ["Hello from the team model, streamed word by word."]
    conversation = await create(jp_fetch, agentId="team-model", chatOnly=True)
    events = await send(jp_fetch, conversation, "Say hello «verbatim ✓»")
    scripted_model.check()
    assert end_of(events) == {"type": "end", "stopReason": "end_turn", "error": None}
    texts = [e["text"] for e in events if e["type"] == "text"]
    assert len(texts) > 3, texts
    assert "".join(texts) == "Hello from the team model, streamed word by word."
    [request] = scripted_model.requests
    assert request["stream"] is True and request["model"] == "scripted"
    users = [m for m in request["messages"] if m["role"] == "user"]
    assert "Say hello «verbatim ✓»" in message_text(users[-1])
    assert scripted_model.authorizations == [f"Bearer {KEY}"]


async def test_a_tool_call_reads_the_cell_and_opens_a_review_and_changes_nothing(
    listening: None,
    scripted_model: ScriptedModel,
    jp_fetch: Any,
    jp_ws_fetch: Any,
    jp_root_dir: Path,
    copilot: Any,
) -> None:
    page = await open_page(jp_fetch, jp_ws_fetch, jp_root_dir)
    before = (jp_root_dir / "a.ipynb").read_bytes()

    scripted_model.script = read_then_edit(READ, EDIT, NEW)
    conversation = await create(
        jp_fetch,
        agentId="team-model",
        mode="autopilot",
        chatOnly=False,
        contextRefs=["selected_cell"],
    )
    events = await send(jp_fetch, conversation, "Make x equal 2.", page_id="p-1")
    scripted_model.check()
    assert end_of(events) == {"type": "end", "stopReason": "end_turn", "error": None}, events
    assert reply_of(events) == "Review opened: True."
    assert {READ, EDIT} <= set(tool_names(scripted_model.requests[0]))
    await check_review_opened_unapplied(
        page, copilot, jp_fetch, jp_root_dir / "a.ipynb", before, conversation
    )
    page.close()


async def check_review_opened_unapplied(
    page: ScriptedPage, copilot: Any, jp_fetch: Any, path: Path, before: bytes, conversation: str
) -> None:
    """The page got the edit of OLD to NEW with OLD's hash, the file is as it was before
    (the review is open; nothing is written before Keep), and both tool calls completed."""
    [invoke] = [r for r in page.requests if r["action"] == INVOKE]
    assert invoke["data"]["newSource"] == NEW
    assert invoke["data"]["expectedSourceHash"] == source_hash(OLD)
    assert invoke["data"]["artifactId"] == copilot.jupyter_server.artifact_id(path.name)
    assert path.read_bytes() == before
    _, body = await api(jp_fetch, "conversations", conversation)
    [turn] = body["turns"]
    assert [t["status"] for t in turn["toolCalls"]] == ["completed", "completed"]


async def test_cancel_stops_the_stream_at_once(
    listening: None, scripted_model: ScriptedModel, jp_fetch: Any
) -> None:
    scripted_model.script = [Slow(" ".join(f"w{i}" for i in range(200)), 0.1)]
    conversation = await create(jp_fetch, agentId="team-model", chatOnly=True)
    reply = asyncio.ensure_future(send(jp_fetch, conversation, "Count slowly."))
    while not scripted_model.requests:
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.5)
    status, _ = await api(jp_fetch, "conversations", conversation, "cancel", method="POST")
    assert status == 200
    started = asyncio.get_running_loop().time()
    events = await reply
    assert asyncio.get_running_loop().time() - started < 2.0
    assert end_of(events)["stopReason"] == "cancelled"
    assert len(reply_of(events).split()) < 100
    for _ in range(40):
        if scripted_model.hung_up:
            break
        await asyncio.sleep(0.05)
    assert scripted_model.hung_up == 1


async def test_a_turn_over_its_time_limit_ends_in_plain_words(
    listening: None, scripted_model: ScriptedModel, jp_fetch: Any, copilot: Any
) -> None:
    scripted_model.script = [Slow(" ".join(f"w{i}" for i in range(400)), 0.05)]
    conversation = await create(jp_fetch, agentId="team-model", chatOnly=True)
    events = await send(jp_fetch, conversation, "Count slowly.")
    end = end_of(events)
    assert end["stopReason"] == "error"
    assert end["error"] == (
        "The model took longer than 5 seconds for this message; it was stopped."
    )


async def test_the_key_is_in_no_log_event_store_or_answer(
    listening: None,
    scripted_model: ScriptedModel,
    jp_fetch: Any,
    jp_serverapp: Any,
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
) -> None:
    events_seen = io.StringIO()
    handler = logging.StreamHandler(events_seen)
    jp_serverapp.event_logger.register_handler(handler)
    # A 401 is not retried: one request per turn.
    scripted_model.script = [
        Failure(401, f"Incorrect API key provided: {KEY}", "invalid_api_key"),
        "Fine now.",
    ]
    conversation = await create(jp_fetch, agentId="team-model", chatOnly=True)
    failed = await send(jp_fetch, conversation, "Hello?")
    answered = await send(jp_fetch, conversation, "Hello again?")
    assert end_of(failed)["stopReason"] == "error" and reply_of(answered) == "Fine now."
    _, listed = await api(jp_fetch, "conversations", conversation)
    _, status = await api(jp_fetch, "status")
    jp_serverapp.event_logger.remove_handler(handler)
    assert "conversation/turn" in events_seen.getvalue()
    seen = {
        "replies": json.dumps([failed, answered, listed, status]),
        "events": events_seen.getvalue(),
        "log": "".join(capfd.readouterr()),
        "store": (tmp_path / "conversations.db").read_bytes().decode("latin-1"),
    }
    assert [where for where, text in seen.items() if KEY in text] == []
    assert scripted_model.authorizations == [f"Bearer {KEY}"] * 2


class TestASmallContextWindow:
    @pytest.fixture
    def copilot_config(self, copilot_config: Any) -> Any:
        """The scripted endpoint counts 10 input tokens per request: over this budget."""
        entry = copilot_config["models"]["team-model"]
        entry.update(context_window=20, max_output_tokens=15)
        return copilot_config

    async def test_a_request_over_the_budget_ends_the_turn_in_plain_words(
        self, listening: None, scripted_model: ScriptedModel, jp_fetch: Any
    ) -> None:
        scripted_model.script = ["Too long to fit."]
        conversation = await create(jp_fetch, agentId="team-model", chatOnly=True)
        events = await send(jp_fetch, conversation, "Hello?")
        end = end_of(events)
        assert end["stopReason"] == "error"
        assert end["error"] == (
            "This conversation no longer fits the model's context window (20 tokens). "
            "Start a new conversation."
        )
        [request] = scripted_model.requests
        assert request.get("max_tokens", request.get("max_completion_tokens")) == 15


#: A session of the model agent in a fresh interpreter; prints whether the MCP client is loaded.
SESSION_IMPORTS = """
import asyncio, sys
from acp.schema import HttpMcpServer
from jupyter_copilot.model_agent.agent import ModelAgent
from jupyter_copilot.model_agent.settings import ModelSettings

agent = ModelAgent(ModelSettings("openai-compatible", "m", base_url="http://127.0.0.1:9/v1"))
url = "http://127.0.0.1:9/copilot/mcp"
servers = [HttpMcpServer(name="jupyter", url=url, headers=[], type="http")]
asyncio.run(agent.new_session(cwd="/", mcp_servers=servers if sys.argv[1] == "tools" else []))
print("pydantic_ai.mcp" in sys.modules)
"""


@pytest.mark.parametrize(("session", "loaded"), [("chat-only", "False"), ("tools", "True")])
def test_only_a_session_with_tools_loads_the_mcp_client(session: str, loaded: str) -> None:
    # The MCP client is about a second of the agent's start: a chat-only session skips it.
    result = subprocess.run(
        [sys.executable, "-I", "-c", SESSION_IMPORTS, session],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert result.stdout.strip() == loaded
