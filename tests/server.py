"""REST helpers for tests against the real server: actions, sessions and registrations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tornado.httpclient import HTTPClientError

ACTIONS = ("copilot", "api", "actions")
INVOKE = "jupyter_copilot.notebook.edit-cell.invoke"
ABORT = "jupyter_copilot.notebook.edit-cell.abort"


async def call_action(jp_fetch: Any, action: str, body: Any) -> tuple[int, dict[str, Any]]:
    """POST an action; return the HTTP status and the JSON body, refusals included."""
    raw = body if isinstance(body, str) else json.dumps(body)
    try:
        response = await jp_fetch(*ACTIONS, action, method="POST", body=raw)
    except HTTPClientError as err:
        assert err.response is not None
        return err.code, json.loads(err.response.body)
    return response.code, json.loads(response.body)


async def start_session(jp_fetch: Any, path: str, kind: str = "notebook") -> dict[str, Any]:
    """Start a kernel session through the REST API, as JupyterLab does."""
    body = {"path": path, "name": Path(path).name, "type": kind, "kernel": {"name": "python3"}}
    response = await jp_fetch("api", "sessions", method="POST", body=json.dumps(body))
    return json.loads(response.body)  # type: ignore[no-any-return]


async def registrations(jp_fetch: Any) -> list[dict[str, Any]]:
    """The registrations listed by ``GET copilot/api/tools``."""
    tools = json.loads((await jp_fetch("copilot", "api", "tools")).body)
    assert [t["name"] for t in tools["tools"]] == ["notebook_edit_cell"]
    return tools["registrations"]  # type: ignore[no-any-return]
