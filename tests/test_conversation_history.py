"""Earlier conversations: export as Markdown, the notebooks they came from, delete and
resume (docs/conversations.md, "Earlier conversations").

The server, its authentication, the scripted ACP agent and the conversation store are real;
the page is scripted over the real bridge WebSocket.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from jupyter_copilot.agents.export import redact
from jupyter_copilot.page.context import source_hash
from tests.conversations import agent_log, api, create, end_of, reply_of, scripted_agents, send
from tests.test_conversations import SOURCE, open_notebook

pytestmark = pytest.mark.shared_kernel

#: A model key someone pasted into a message; it must never reach an export.
PASTED_KEY = "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX123456"


@pytest.fixture
def log(tmp_path: Path) -> Path:
    """Where the scripted agent records what it received."""
    return tmp_path / "agent.jsonl"


@pytest.fixture
def sessions() -> bool:
    """Whether the scripted agent loads earlier sessions (ACP ``session/load``)."""
    return True


@pytest.fixture
def copilot_config(log: Path, tmp_path: Path, sessions: bool) -> dict[str, Any]:
    """The scripted agent, which loads earlier sessions unless told not to, and a store."""
    config = scripted_agents(log)
    if sessions:
        config["agents"]["scripted"]["env"]["SCRIPTED_AGENT_SESSIONS"] = str(tmp_path / "s.json")
    config["conversations_db_path"] = str(tmp_path / "store" / "conversations.db")
    return config


@pytest.fixture
def listening(http_server_client: Any) -> None:
    """Make the server listen: the agent's MCP client connects over real HTTP."""


async def export(jp_fetch: Any, conversation: str) -> Any:
    return await jp_fetch(
        "copilot", "api", "conversations", conversation, "export", raise_error=False
    )


async def test_an_export_is_markdown_with_cell_links_tool_summaries_and_no_secrets(
    jp_fetch: Any,
    jp_ws_fetch: Any,
    jp_root_dir: Path,
    copilot: Any,
    log: Path,
    listening: None,
    jp_serverapp: Any,
) -> None:
    page = await open_notebook(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    attachment = {
        "artifactId": page.artifact_id,
        "cellId": page.cells[0]["cellId"],
        "expectedSourceHash": source_hash(SOURCE),
    }
    conversation = await create(jp_fetch, contextRefs=["selected_cell"], mode="plan")
    events = await send(
        jp_fetch, conversation, "mcp context_snapshot {}", page_id="p-1", attachment=attachment
    )
    assert end_of(events)["stopReason"] == "end_turn"
    token = jp_serverapp.identity_provider.token
    assert len(token) >= 8
    leaky = f"reply my key is {PASTED_KEY}, api_key=hunter2hunter2 and the token {token}"
    events = await send(jp_fetch, conversation, leaky, page_id="p-1")
    assert PASTED_KEY in reply_of(events)

    response = await export(jp_fetch, conversation)
    assert response.code == 200
    assert response.headers["Content-Type"] == "text/markdown; charset=UTF-8"
    disposition = response.headers["Content-Disposition"]
    assert re.fullmatch(
        r'attachment; filename="copilot-mcp-context-snapshot-\d{4}-\d{2}-\d{2}\.md"; '
        r"filename\*=UTF-8''copilot-mcp-context-snapshot-\d{4}-\d{2}-\d{2}\.md",
        disposition,
    ), disposition
    text = response.body.decode("utf-8")
    assert text.startswith("# mcp context_snapshot {}\n\n- Agent: Scripted agent\n")
    assert "- Notebooks: [a.ipynb](a.ipynb)\n" in text
    cell_id = page.cells[0]["cellId"]
    assert f"Attached: Code cell 1 of [a.ipynb](a.ipynb) (cell id `{cell_id}`)" in text
    assert "## You\n\nmcp context_snapshot {}\n\n" in text
    assert "Tool calls:\n\n- " in text and ": done" in text
    # The cell is linked, never copied; no secret is written.
    assert "canary-conv-41" not in text
    assert PASTED_KEY not in text and "hunter2hunter2" not in text and token not in text
    assert "jcc-" not in text
    assert "my key is [redacted], api_key=[redacted] and the token [redacted]" in text


async def test_a_conversation_lists_the_notebooks_it_came_from(
    jp_fetch: Any, jp_ws_fetch: Any, jp_root_dir: Path, copilot: Any, log: Path
) -> None:
    await open_notebook(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    here = await create(jp_fetch, chatOnly=True)
    await send(jp_fetch, here, "reply hi", page_id="p-1")
    elsewhere = await create(jp_fetch, chatOnly=True)
    _, listed = await api(jp_fetch, "conversations")
    notebooks = {c["id"]: c["notebooks"] for c in listed["conversations"]}
    assert notebooks == {here: ["a.ipynb"], elsewhere: []}


async def test_delete_forgets_a_conversation_and_its_export(
    jp_fetch: Any, jp_ws_fetch: Any, jp_root_dir: Path, copilot: Any, log: Path
) -> None:
    conversation = await create(jp_fetch, chatOnly=True)
    await send(jp_fetch, conversation, "reply hi")
    response = await jp_fetch("copilot", "api", "conversations", conversation, method="DELETE")
    assert (response.code, response.body) == (200, b'{"deleted": true}')
    _, listed = await api(jp_fetch, "conversations")
    assert listed["conversations"] == []
    response = await export(jp_fetch, conversation)
    assert response.code == 404
    assert b"unknown-conversation" in response.body


async def test_an_archived_conversation_resumes_with_its_agents_earlier_session(
    jp_fetch: Any, jp_ws_fetch: Any, jp_root_dir: Path, copilot: Any, log: Path
) -> None:
    conversation = await create(jp_fetch, chatOnly=True)
    await send(jp_fetch, conversation, "remember the blue heron")
    _, body = await api(jp_fetch, "conversations", conversation, "archive", method="POST")
    assert body["conversation"]["archived"] is True
    assert body["conversation"]["resumable"] is True
    status, _ = await api(
        jp_fetch, "conversations", conversation, "messages", method="POST", body={"text": "x"}
    )
    assert status == 400

    status, body = await api(jp_fetch, "conversations", conversation, "resume", method="POST")
    assert status == 200, body
    assert body["conversation"]["archived"] is False
    assert body["conversation"]["resumable"] is False
    assert [t["user"]["text"] for t in body["turns"]] == ["remember the blue heron"]
    events = await send(jp_fetch, conversation, "recall")
    assert end_of(events)["stopReason"] == "end_turn"
    assert "the blue heron" in reply_of(events)
    assert agent_log(log, "load_session")


@pytest.mark.parametrize("sessions", [False])
async def test_resume_is_refused_for_an_agent_that_cannot_load_sessions(
    jp_fetch: Any, copilot: Any, log: Path
) -> None:
    conversation = await create(jp_fetch, chatOnly=True)
    # Not yet archived: resuming changes nothing.
    status, _ = await api(jp_fetch, "conversations", conversation, "resume", method="POST")
    assert status == 200
    await send(jp_fetch, conversation, "reply hi")
    _, body = await api(jp_fetch, "conversations", conversation, "archive", method="POST")
    assert body["conversation"]["resumable"] is False
    status, body = await api(jp_fetch, "conversations", conversation, "resume", method="POST")
    assert (status, body["error"]["code"]) == (400, "invalid-input")
    assert "cannot pick up an earlier session" in body["error"]["message"]


def test_redaction_replaces_known_secrets_and_things_that_look_like_keys() -> None:
    text = (
        "token abc: Bearer abcdefghijklmnopqrstuvwxyz123456, AKIAABCDEFGHIJKLMNOP, "
        "ghp_abcdefghijklmnopqrstuvwxyz0123, password: 'correct-horse', my-own-secret-value"
    )
    assert redact(text, ["my-own-secret-value"]) == (
        "token abc: Bearer [redacted], [redacted], [redacted], password: [redacted], [redacted]"
    )
