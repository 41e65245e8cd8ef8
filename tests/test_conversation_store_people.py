"""Two people sharing one conversation store never see each other's conversations.

The server knows alice and bob by token (``tests/test_approvals_owner.py``); both use the
same store file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conversations import reply_of, scripted_agents
from tests.test_approvals_owner import NamedTokens
from tests.test_conversation_store import stored

ALICE = {"Authorization": "token alice-token"}
BOB = {"Authorization": "token bob-token"}


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """The shared store's file."""
    return tmp_path / "shared" / "conversations.db"


@pytest.fixture
def copilot_config(tmp_path: Path, db: Path) -> dict[str, Any]:
    """The scripted agent and the shared store."""
    return {**scripted_agents(tmp_path / "agent.jsonl"), "conversations_db_path": str(db)}


@pytest.fixture
def jp_server_config(jp_server_config: Any) -> Any:
    """This module's server knows alice and bob."""
    jp_server_config.ServerApp.identity_provider_class = NamedTokens
    return jp_server_config


async def call(jp_fetch: Any, headers: dict[str, str], *path: str, body: Any = None) -> Any:
    """One call as a person: status and body (NDJSON lines for a message)."""
    response = await jp_fetch(
        "copilot",
        "api",
        *path,
        method="GET" if body is None else "POST",
        body=None if body is None else json.dumps(body),
        headers=headers,
        raise_error=False,
        request_timeout=60,
    )
    text = response.body.decode()
    if path[-1] == "messages":
        return response.code, [json.loads(line) for line in text.splitlines()]
    return response.code, json.loads(text or "{}")


async def test_one_persons_stored_conversations_are_not_anothers(jp_fetch: Any, db: Path) -> None:
    status, body = await call(jp_fetch, ALICE, "conversations", body={"chatOnly": True})
    assert status == 201
    conversation = body["conversation"]["id"]
    status, events = await call(
        jp_fetch, ALICE, "conversations", conversation, "messages", body={"text": "reply hi"}
    )
    assert status == 200 and reply_of(events) == "hi"
    assert stored(db)[conversation].owner == "user:alice"
    _, body = await call(jp_fetch, BOB, "conversations")
    assert body["conversations"] == [] and body["stored"] is True
    status, body = await call(jp_fetch, BOB, "conversations", conversation)
    assert (status, body["error"]["code"]) == (404, "unknown-conversation")
    _, body = await call(jp_fetch, ALICE, "conversations")
    assert [(c["id"], [t["reply"] for t in c["turns"]]) for c in body["conversations"]] == [
        (conversation, ["hi"])
    ]
