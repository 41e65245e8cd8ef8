"""Helpers for conversation tests: the scripted agent's configuration, its log, the REST API."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

SCRIPTED_AGENT = Path(__file__).parent / "agents" / "scripted_agent.py"


def scripted_agents(log: Path) -> dict[str, Any]:
    """``CopilotApp`` settings that offer only the scripted agent, logging to ``log``.

    The command names ``log`` as well (the agent reads it from its environment and ignores
    its arguments): each test's agent has a command line of its own, by which the test
    finds its process among those of other tests running at the same time.
    """
    return {
        "agents": {
            "scripted": {
                "label": "Scripted agent",
                "description": "Does what the test says.\nSecond line is not shown.",
                "command": [sys.executable, str(SCRIPTED_AGENT), str(log)],
                "env": {"SCRIPTED_AGENT_LOG": str(log)},
            }
        },
        "discover_agents": False,
    }


def agent_log(log: Path, kind: str | None = None) -> list[dict[str, Any]]:
    """What the agent recorded, optionally only one kind of entry."""
    if not log.exists():
        return []
    entries = [json.loads(line) for line in log.read_text().splitlines() if line]
    return [e for e in entries if kind is None or e["kind"] == kind]


async def api(
    jp_fetch: Any, *path: str, method: str = "GET", body: Any = None
) -> tuple[int, dict[str, Any]]:
    """One call of ``copilot/api/...``: status and JSON body, errors included."""
    response = await jp_fetch(
        "copilot",
        "api",
        *path,
        method=method,
        body=json.dumps(body if body is not None else {}) if method != "GET" else None,
        raise_error=False,
    )
    return response.code, json.loads(response.body or b"{}")


async def create(jp_fetch: Any, **settings: Any) -> str:
    """Create a conversation with ``settings``; its id."""
    status, body = await api(jp_fetch, "conversations", method="POST", body=settings)
    assert status == 201, body
    return str(body["conversation"]["id"])


async def send(
    jp_fetch: Any,
    conversation_id: str,
    text: str,
    *,
    page_id: str | None = None,
    attachment: dict[str, str] | None = None,
    references: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Send a message; every event of the streamed reply (the body ends with the turn)."""
    body: dict[str, Any] = {"text": text, "pageId": page_id, "attachment": attachment}
    if references is not None:
        body["references"] = references
    response = await jp_fetch(
        "copilot",
        "api",
        "conversations",
        conversation_id,
        "messages",
        method="POST",
        body=json.dumps(body),
        raise_error=False,
        request_timeout=60,
    )
    assert response.code == 200, response.body
    assert response.headers["Content-Type"].startswith("application/x-ndjson")
    return [json.loads(line) for line in response.body.decode().splitlines()]


def reply_of(events: list[dict[str, Any]]) -> str:
    """The reply text of a turn's events."""
    return "".join(e["text"] for e in events if e["type"] == "text")


def end_of(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The turn's last event, which is its end."""
    assert events[-1]["type"] == "end", events
    return events[-1]
