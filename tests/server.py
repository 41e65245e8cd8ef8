"""REST helpers for tests against the real server: actions, sessions and registrations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tornado.httpclient import HTTPClientError

ACTIONS = ("copilot", "api", "actions")
INVOKE = "jupyter_copilot.notebook.edit-cell.invoke"
ABORT = "jupyter_copilot.notebook.edit-cell.abort"
INSERT_INVOKE = "jupyter_copilot.notebook.insert-cell.invoke"
INSERT_ABORT = "jupyter_copilot.notebook.insert-cell.abort"
RUN_INVOKE = "jupyter_copilot.notebook.run-cell.invoke"
RUN_ABORT = "jupyter_copilot.notebook.run-cell.abort"
#: The tools each kernel session registers, in the registry's order.
NOTEBOOK_TOOLS = ("notebook_edit_cell", "notebook_insert_cell", "notebook_run_cell")


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


async def registrations(jp_fetch: Any, tool: str = "notebook_edit_cell") -> list[dict[str, Any]]:
    """The registrations of ``tool`` listed by ``GET copilot/api/tools``.

    Every kernel session registers each notebook tool once, so the other tools' lists are
    checked to hold the same sessions.
    """
    tools = json.loads((await jp_fetch("copilot", "api", "tools")).body)
    names = [t["name"] for t in tools["tools"]]
    assert names == list(NOTEBOOK_TOOLS)
    by_tool = {
        name: [{**r, "tool": None} for r in tools["registrations"] if r["tool"] == name]
        for name in names
    }
    assert all(listed == by_tool[names[0]] for listed in by_tool.values()), by_tool
    assert len(tools["registrations"]) == len(names) * len(by_tool[names[0]])
    return [r for r in tools["registrations"] if r["tool"] == tool]
