"""Approval modes for ``notebook_edit_cell`` over MCP: plan, interactive and autopilot.

The MCP client, the server, its authentication, sessions and file IDs are real; the page is
scripted over the real bridge WebSocket and answers the review request as a page would.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest

from jupyter_copilot.page.context import source_hash
from tests.conftest import make_notebook
from tests.mcpclient import mcp_client, mcp_url, refusal_code, structured
from tests.pages import ScriptedPage, context_answer, next_of, notebook_state
from tests.server import INVOKE, start_session

# The kernel sessions here only give the notebook its tool registrations; no test talks to the
# kernel, so they attach to one real kernel per test process (tests/kernels.py).
pytestmark = pytest.mark.shared_kernel

OLD = "x = 1\n"
NEW = "x = 2  # canary-7f3a\n"


@dataclass
class Scene:
    """A notebook with a kernel session, active in one scripted page."""

    page: ScriptedPage
    artifact_id: str
    url: str

    def arguments(self) -> dict[str, Any]:
        return {
            "artifactId": self.artifact_id,
            "cellId": "c1",
            "expectedSourceHash": source_hash(OLD),
            "newSource": NEW,
        }

    def invokes(self) -> list[dict[str, Any]]:
        return [r for r in self.page.requests if r["action"] == INVOKE]


@pytest.fixture
def url(http_server_client: Any, jp_http_port: int, jp_base_url: str) -> str:
    """The endpoint of the running server (the fixture makes the server listen)."""
    return mcp_url(jp_http_port, jp_base_url)


async def scene(jp_fetch: Any, jp_ws_fetch: Any, root: Path, copilot: Any, url: str) -> Scene:
    make_notebook(root, "a.ipynb", [OLD])
    await start_session(jp_fetch, "a.ipynb")
    page = await ScriptedPage.connect(jp_ws_fetch, "p-1")
    await page.send_state(notebook_state("a.ipynb"))

    def respond(request: dict[str, Any]) -> dict[str, Any]:
        if request["action"] == INVOKE:
            return {"diffReviewOpened": True}
        return context_answer("a.ipynb", OLD)

    page.respond = respond
    return Scene(page, copilot.jupyter_server.artifact_id("a.ipynb"), url)


async def decide(
    http_port: int, base_url: str, headers: dict[str, str], request_id: str, decision: str
) -> tuple[int, dict[str, Any]]:
    """The person's click, as the side panel sends it."""
    async with httpx2.AsyncClient(headers=headers, timeout=10) as http:
        response = await http.post(
            f"http://localhost:{http_port}{base_url}copilot/api/approvals/{request_id}",
            content=json.dumps({"decision": decision}),
        )
    return response.status_code, response.json()


# -- plan and autopilot -----------------------------------------------------------------------


async def test_plan_mode_refuses_edits_without_a_card_or_a_review(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, url, jp_auth_header
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, url)
    copilot.external_approval_mode = "plan"
    async with mcp_client(url, jp_auth_header) as client:
        result = await client.call_tool("notebook_edit_cell", s.arguments())
    assert refusal_code(result) == "plan-mode"
    assert s.invokes() == []
    assert s.page.inbox.empty()
    s.page.close()


async def test_autopilot_goes_straight_to_the_review(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, url, jp_auth_header
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, url)
    copilot.external_approval_mode = "autopilot"
    async with mcp_client(url, jp_auth_header) as client:
        result = await client.call_tool("notebook_edit_cell", s.arguments())
    assert structured(result) == {
        "success": True,
        "artifactId": s.artifact_id,
        "cellId": "c1",
        "operation": "whole-cell-diff",
        "diffReviewOpened": True,
        "sourceHashAfter": source_hash(NEW),
    }
    [request] = s.invokes()
    assert request["data"]["newSource"] == NEW
    assert s.page.inbox.empty()  # no card
    s.page.close()


# -- interactive ------------------------------------------------------------------------------


async def test_interactive_shows_a_card_and_allow_opens_the_review(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, url, jp_auth_header, jp_http_port, jp_base_url
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, url)
    async with mcp_client(url, jp_auth_header) as client:
        call = asyncio.ensure_future(client.call_tool("notebook_edit_cell", s.arguments()))
        card = await next_of(s.page, "approval")
        # Waiting: the page has not been asked to open anything (the point: nothing happens
        # while the card waits, so a fixed wait).
        await asyncio.sleep(0.3)
        assert not call.done() and s.invokes() == []
        assert card["request"] == {
            "requestId": card["request"]["requestId"],
            "toolName": "notebook_edit_cell",
            "kind": "edit",
            "description": "Open a whole-cell diff for the attached notebook cell",
            "details": {
                "artifactId": s.artifact_id,
                "cellId": "c1",
                "newSourceBytes": len(NEW.encode()),
            },
        }
        assert card["path"] == "a.ipynb"
        assert "canary-7f3a" not in json.dumps(card)
        status, body = await decide(
            jp_http_port, jp_base_url, jp_auth_header, card["request"]["requestId"], "allow"
        )
        assert (status, body["outcome"]) == (200, "allowed")
        result = await asyncio.wait_for(call, 10)
    assert structured(result)["diffReviewOpened"] is True
    assert len(s.invokes()) == 1
    ended = await next_of(s.page, "approval-ended")
    assert ended == {
        "type": "approval-ended",
        "requestId": card["request"]["requestId"],
        "outcome": "allowed",
    }
    # Allow once: the next call asks again, and a decided request cannot be decided again.
    status, body = await decide(
        jp_http_port, jp_base_url, jp_auth_header, card["request"]["requestId"], "allow"
    )
    assert (status, body["error"]["code"]) == (409, "aborted")
    s.page.close()


async def test_deny_ends_the_call_with_denied_and_opens_nothing(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, url, jp_auth_header, jp_http_port, jp_base_url
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, url)
    async with mcp_client(url, jp_auth_header) as client:
        call = asyncio.ensure_future(client.call_tool("notebook_edit_cell", s.arguments()))
        card = await next_of(s.page, "approval")
        status, _ = await decide(
            jp_http_port, jp_base_url, jp_auth_header, card["request"]["requestId"], "deny"
        )
        result = await asyncio.wait_for(call, 10)
    assert status == 200
    assert refusal_code(result) == "denied"
    assert s.invokes() == []
    assert (await next_of(s.page, "approval-ended"))["outcome"] == "denied"
    s.page.close()


async def test_a_card_nobody_answers_times_out_as_denied(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, url, jp_auth_header
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, url)
    copilot.approval_timeout_seconds = 1.0
    async with mcp_client(url, jp_auth_header) as client:
        started = asyncio.get_running_loop().time()
        result = await client.call_tool("notebook_edit_cell", s.arguments())
        waited = asyncio.get_running_loop().time() - started
    assert refusal_code(result) == "denied"
    assert "in time" in structured(result)["error"]["message"]
    assert 0.9 <= waited < 8
    assert (await next_of(s.page, "approval-ended"))["outcome"] == "timeout"
    assert s.invokes() == []
    s.page.close()


async def test_closing_the_page_dismisses_the_card_as_denied(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, url, jp_auth_header
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, url)
    async with mcp_client(url, jp_auth_header) as client:
        call = asyncio.ensure_future(client.call_tool("notebook_edit_cell", s.arguments()))
        await next_of(s.page, "approval")
        s.page.close()
        result = await asyncio.wait_for(call, 10)
    assert refusal_code(result) == "denied"
    assert "dismissed" in structured(result)["error"]["message"]


async def test_a_server_stop_denies_the_waiting_call(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, url, jp_auth_header
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, url)
    async with mcp_client(url, jp_auth_header) as client:
        call = asyncio.ensure_future(client.call_tool("notebook_edit_cell", s.arguments()))
        await next_of(s.page, "approval")
        await copilot.stop_extension()
        result = await asyncio.wait_for(call, 10)
        assert refusal_code(result) == "denied"
        assert "stopped" in structured(result)["error"]["message"]
    assert s.invokes() == []
    assert copilot.approvals.waiting == 0
    s.page.close()


async def test_a_cancelled_call_takes_its_card_away(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, url, jp_auth_header
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, url)
    async with mcp_client(url, jp_auth_header) as client:
        call = asyncio.ensure_future(client.call_tool("notebook_edit_cell", s.arguments()))
        await next_of(s.page, "approval")
        call.cancel()
        ended = await next_of(s.page, "approval-ended")
    assert ended["outcome"] == "aborted"
    assert copilot.approvals.waiting == 0
    assert s.invokes() == []
    s.page.close()


@pytest.mark.parametrize(
    "body", ["{", "[]", '{"decision": "maybe"}', '{"decision": "allow", "x": 1}']
)
async def test_a_bad_decision_body_is_invalid_input(
    jp_auth_header, jp_http_port, jp_base_url, url, body: str
) -> None:
    async with httpx2.AsyncClient(headers=jp_auth_header, timeout=10) as http:
        response = await http.post(
            f"http://localhost:{jp_http_port}{jp_base_url}copilot/api/approvals/abc", content=body
        )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid-input"
