"""Export, resume and delete act only on a person's own conversations: another person's is
``unknown-conversation`` (404), as if it did not exist. The server knows alice and bob by
token (``tests/test_approvals_owner.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conversations import scripted_agents
from tests.test_approvals_owner import NamedTokens
from tests.test_conversation_store_people import ALICE, BOB, call


@pytest.fixture
def copilot_config(tmp_path: Path) -> dict[str, Any]:
    """The scripted agent, which loads earlier sessions."""
    config = scripted_agents(tmp_path / "agent.jsonl")
    config["agents"]["scripted"]["env"]["SCRIPTED_AGENT_SESSIONS"] = str(tmp_path / "s.json")
    return config


@pytest.fixture
def jp_server_config(jp_server_config: Any) -> Any:
    """This module's server knows alice and bob."""
    jp_server_config.ServerApp.identity_provider_class = NamedTokens
    return jp_server_config


async def test_another_persons_conversation_cannot_be_exported_resumed_or_deleted(
    jp_fetch: Any,
) -> None:
    status, body = await call(jp_fetch, ALICE, "conversations", body={"chatOnly": True})
    conversation = body["conversation"]["id"]
    await call(
        jp_fetch, ALICE, "conversations", conversation, "messages", body={"text": "remember x"}
    )
    status, body = await call(jp_fetch, ALICE, "conversations", conversation, "archive", body={})
    assert status == 200 and body["conversation"]["resumable"] is True

    response = await jp_fetch(
        "copilot", "api", "conversations", conversation, "export", headers=BOB, raise_error=False
    )
    assert response.code == 404 and b'"unknown-conversation"' in response.body
    status, body = await call(jp_fetch, BOB, "conversations", conversation, "resume", body={})
    assert (status, body["error"]["code"]) == (404, "unknown-conversation")
    response = await jp_fetch(
        "copilot",
        "api",
        "conversations",
        conversation,
        method="DELETE",
        headers=BOB,
        raise_error=False,
    )
    assert response.code == 404 and b'"unknown-conversation"' in response.body

    # Alice's conversation is untouched: still hers, still archived, still exportable.
    response = await jp_fetch(
        "copilot", "api", "conversations", conversation, "export", headers=ALICE
    )
    assert response.code == 200 and b"## You\n\nremember x\n" in response.body
    status, body = await call(jp_fetch, ALICE, "conversations", conversation)
    assert status == 200 and body["conversation"]["archived"] is True
