"""``notebook_insert_cell`` on the server: every refusal, validation, callIds, abort and Keep.

As in ``test_edit_tool.py`` the server, kernel sessions and file IDs are real and the page is
scripted over the real bridge WebSocket. The scripted page answers ``diff-unavailable`` when
told to refuse, so a server refusal with another code, and no request in ``page.requests``,
proves that the page was never reached. What only a real page can do (show the pending
cell, insert it as one undo step on Keep, refuse Keep when the anchor is gone) belongs to
the browser tests of the page part.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from jupyter_copilot.admin.killswitch import config_directories
from jupyter_copilot.page.bridge import server_message_problem
from jupyter_copilot.protocol.registry import first_error
from tests.conftest import make_notebook
from tests.eventually import eventually
from tests.mcpclient import mcp_client, mcp_url, refusal_code, structured
from tests.pages import ScriptedPage, context_answer, next_of, notebook_state
from tests.server import (
    ABORT,
    INSERT_ABORT,
    INSERT_INVOKE,
    INVOKE,
    call_action,
    registrations,
    start_session,
)
from tests.test_approvals import decide
from tests.test_canary import our_events, read_events

# The kernel sessions here only give the notebook its tool registrations; no test talks to the
# kernel, so they attach to one real kernel per test process (tests/kernels.py).
pytestmark = pytest.mark.shared_kernel

OLD = "x = 1\n"
SOURCE = "y = 2  # canary-41c0\n"
UNAVAILABLE = {"ok": False, "error": {"code": "diff-unavailable", "message": "not shown"}}


@dataclass
class Scene:
    """One notebook with a kernel session, open in one scripted page."""

    page: ScriptedPage
    artifact_id: str

    def tool_input(self, **changes: Any) -> dict[str, Any]:
        data: dict[str, Any] = {
            "artifactId": self.artifact_id,
            "afterCellId": "c1",
            "cellType": "code",
            "source": SOURCE,
        }
        data.update(changes)
        return data

    def inserts(self) -> list[dict[str, Any]]:
        return [r for r in self.page.requests if r["action"] == INSERT_INVOKE]


def opens_pending_cell(request: dict[str, Any]) -> dict[str, Any] | None:
    if request["action"] == INSERT_INVOKE:
        return {"reviewOpened": True}
    if request["action"] in (INSERT_ABORT, ABORT):
        return {"withdrawn": True}
    return context_answer("a.ipynb", OLD)


async def scene(
    jp_fetch: Any,
    jp_ws_fetch: Any,
    root: Path,
    copilot: Any,
    *,
    session: bool = True,
    writable: bool = True,
) -> Scene:
    make_notebook(root, "a.ipynb", [OLD])
    if session:
        await start_session(jp_fetch, "a.ipynb")
    page = await ScriptedPage.connect(jp_ws_fetch, "p-1")
    await page.send_state(notebook_state("a.ipynb", writable=writable))
    page.respond = opens_pending_cell
    return Scene(page, copilot.jupyter_server.artifact_id("a.ipynb"))


async def insert(jp_fetch: Any, data: Any, **body: Any) -> tuple[int, dict[str, Any]]:
    return await call_action(jp_fetch, INSERT_INVOKE, {"data": data, **body})


def code_of(answer: tuple[int, dict[str, Any]]) -> tuple[int, str]:
    status, body = answer
    return status, body["error"]["code"]


# -- the registry ----------------------------------------------------------------------------


async def test_each_kernel_session_registers_the_insert_tool_once(
    jp_fetch, jp_root_dir, copilot
) -> None:
    make_notebook(jp_root_dir, "a.ipynb", [OLD])
    make_notebook(jp_root_dir, "b.ipynb", [OLD])
    await start_session(jp_fetch, "a.ipynb")
    await start_session(jp_fetch, "b.ipynb")
    listed = await registrations(jp_fetch, "notebook_insert_cell")
    assert sorted(r["path"] for r in listed) == ["a.ipynb", "b.ipynb"]
    assert {r["tool"] for r in listed} == {"notebook_insert_cell"}
    assert {r["artifactId"] for r in listed} == {
        copilot.jupyter_server.artifact_id("a.ipynb"),
        copilot.jupyter_server.artifact_id("b.ipynb"),
    }
    tool = copilot.registry.tool("notebook_insert_cell")
    assert tool["invoke"]["action"] == INSERT_INVOKE
    assert tool["abort"]["action"] == INSERT_ABORT


# -- success, repeats and the page's request ------------------------------------------------


@pytest.mark.parametrize("anchor", ["c1", None])
async def test_a_valid_call_opens_the_pending_cell_and_returns_metadata_only(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, anchor
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    status, body = await insert(
        jp_fetch, s.tool_input(afterCellId=anchor, cellType="markdown"), callId="ins-1"
    )
    assert (status, body) == (
        200,
        {
            "result": {
                "success": True,
                "artifactId": s.artifact_id,
                "operation": "insert-cell",
                "reviewOpened": True,
            }
        },
    )
    [request] = s.inserts()
    assert request["data"] == {
        "callId": "ins-1",
        "artifactId": s.artifact_id,
        "path": "a.ipynb",
        "afterCellId": anchor,
        "cellType": "markdown",
        "source": SOURCE,
    }
    assert server_message_problem(request) is None
    assert first_error("bridge-server-message", request["data"], "insertCellRequest") is None
    s.page.close()


async def test_a_repeated_call_id_returns_the_first_result_without_a_second_pending_cell(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    first = await insert(jp_fetch, s.tool_input(), callId="again")
    second = await insert(jp_fetch, s.tool_input(), callId="again")
    assert first == second and first[0] == 200
    assert len(s.inserts()) == 1
    other = await insert(jp_fetch, s.tool_input(source="z = 3\n"), callId="again")
    assert code_of(other) == (400, "invalid-input")
    assert len(s.inserts()) == 1
    s.page.close()


# -- 0. the input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "names"),
    [
        ({"artifactId": None}, "artifactId"),
        ({"afterCellId": 7}, "afterCellId"),
        ({"afterCellId": ""}, "afterCellId"),
        ({"cellType": "python"}, "cellType"),
        ({"cellType": None}, "cellType"),
        ({"source": ["y = 2\n"]}, "source"),
        ({"extra": True}, "additional"),
        ({"cellId": "c1"}, "additional"),
    ],
)
async def test_input_that_breaks_the_tool_schema_is_invalid_input_and_says_where(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, changes, names
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    status, body = await insert(jp_fetch, s.tool_input(**changes))
    assert (status, body["error"]["code"]) == (400, "invalid-input")
    assert names in body["error"]["message"]
    assert SOURCE not in body["error"]["message"]
    assert s.inserts() == []
    s.page.close()


@pytest.mark.parametrize("missing", ["artifactId", "afterCellId", "cellType", "source"])
async def test_every_field_is_required(jp_fetch, missing) -> None:
    data = {"artifactId": "a", "afterCellId": None, "cellType": "code", "source": "x"}
    del data[missing]
    status, body = await insert(jp_fetch, data)
    assert (status, body["error"]["code"]) == (400, "invalid-input")
    assert missing in body["error"]["message"]


@pytest.mark.parametrize(
    "raw",
    [
        "not json",
        "[]",
        json.dumps({"data": []}),
        json.dumps({"data": {}, "callId": ""}),
        json.dumps({"data": {}, "pageId": 5}),
    ],
)
async def test_malformed_bodies_are_invalid_input_never_a_server_error(jp_fetch, raw) -> None:
    assert code_of(await call_action(jp_fetch, INSERT_INVOKE, raw)) == (400, "invalid-input")


async def test_empty_source_is_invalid_input(jp_fetch, jp_ws_fetch, jp_root_dir, copilot) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    status, body = await insert(jp_fetch, s.tool_input(source=""))
    assert (status, body["error"]["code"]) == (400, "invalid-input")
    assert "source is empty" in body["error"]["message"]
    assert s.inserts() == []
    s.page.close()


async def test_invalid_input_comes_before_the_switches(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    copilot.enabled = False
    try:
        assert code_of(await insert(jp_fetch, {"source": "x"})) == (400, "invalid-input")
        assert code_of(await insert(jp_fetch, s.tool_input())) == (503, "feature-disabled")
    finally:
        copilot.enabled = True
    assert s.inserts() == []
    s.page.close()


# -- 1. switches -----------------------------------------------------------------------------


class TestKillSwitchFromConfig:
    @pytest.fixture
    def copilot_config(self) -> dict[str, Any]:
        return {"tools_enabled": False}

    async def test_the_kill_switch_refuses_before_the_page_is_asked(
        self, jp_fetch, jp_ws_fetch, jp_root_dir, copilot
    ) -> None:
        s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
        assert code_of(await insert(jp_fetch, s.tool_input())) == (503, "kill-switch")
        # With the feature switch off too, the kill switch is named first.
        copilot.enabled = False
        try:
            assert code_of(await insert(jp_fetch, s.tool_input())) == (503, "kill-switch")
        finally:
            copilot.enabled = True
        assert s.inserts() == []
        s.page.close()


# -- 2. the page ----------------------------------------------------------------------------


async def test_no_page_is_no_active_page(jp_fetch, jp_root_dir, copilot) -> None:
    make_notebook(jp_root_dir, "a.ipynb", [OLD])
    await start_session(jp_fetch, "a.ipynb")
    data = {
        "artifactId": copilot.jupyter_server.artifact_id("a.ipynb"),
        "afterCellId": None,
        "cellType": "code",
        "source": SOURCE,
    }
    assert code_of(await insert(jp_fetch, data)) == (404, "no-active-page")
    assert code_of(await insert(jp_fetch, data, pageId="nobody")) == (404, "no-active-page")


async def test_two_pages_never_focused_are_ambiguous(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    make_notebook(jp_root_dir, "a.ipynb", [OLD])
    await start_session(jp_fetch, "a.ipynb")
    pages = [await ScriptedPage.connect(jp_ws_fetch, f"p-{i}") for i in (1, 2)]
    for page in pages:
        await page.send_state(notebook_state("a.ipynb", focused=False))
        page.respond = opens_pending_cell
    data = Scene(pages[0], copilot.jupyter_server.artifact_id("a.ipynb")).tool_input()
    assert code_of(await insert(jp_fetch, data)) == (409, "ambiguous-active-notebook")
    # Naming the page resolves it.
    assert (await insert(jp_fetch, data, pageId="p-2"))[0] == 200
    assert [len(p.requests) for p in pages] == [0, 1]
    for page in pages:
        page.close()


async def test_no_notebook_being_edited_is_not_authoring_view(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    await s.page.send_state({"focused": True, "url": "lab", "activeNotebook": None})
    assert code_of(await insert(jp_fetch, s.tool_input())) == (409, "not-authoring-view")
    other_view = notebook_state("a.ipynb")
    other_view["activeNotebook"]["viewType"] = "json"
    await s.page.send_state(other_view)
    assert code_of(await insert(jp_fetch, s.tool_input())) == (409, "not-authoring-view")
    assert s.inserts() == []
    s.page.close()


# -- 3. the artifact and its session --------------------------------------------------------


async def test_another_notebook_is_artifact_mismatch(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    s.page.respond = lambda request: UNAVAILABLE
    answer = await insert(jp_fetch, s.tool_input(artifactId="not-this-notebook"))
    assert code_of(answer) == (409, "artifact-mismatch")
    assert s.inserts() == []
    s.page.close()


async def test_a_notebook_without_a_kernel_session_is_no_active_session(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, session=False)
    assert code_of(await insert(jp_fetch, s.tool_input())) == (409, "no-active-session")
    assert s.inserts() == []
    s.page.close()


# -- 4. permission ---------------------------------------------------------------------------


async def test_a_document_opened_read_only_is_read_only(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, writable=False)
    assert code_of(await insert(jp_fetch, s.tool_input())) == (403, "read-only")
    assert s.inserts() == []
    s.page.close()


async def test_a_file_the_contents_service_reports_unwritable_is_read_only(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, monkeypatch
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    manager = copilot.serverapp.contents_manager
    # Running as root, file modes never stop a write; the contents service still decides.
    monkeypatch.setattr(manager, "is_writable", lambda path: path != "a.ipynb")
    assert code_of(await insert(jp_fetch, s.tool_input())) == (403, "read-only")
    assert s.inserts() == []
    s.page.close()


# -- 5. size ---------------------------------------------------------------------------------


class TestSmallInputBudget:
    @pytest.fixture
    def copilot_config(self) -> dict[str, Any]:
        return {"tool_input_budget_bytes": 16}

    async def test_a_cell_over_the_budget_is_over_budget_before_the_page_is_asked(
        self, jp_fetch, jp_ws_fetch, jp_root_dir, copilot
    ) -> None:
        s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
        s.page.respond = lambda request: UNAVAILABLE
        # 9 characters, 18 bytes: the budget counts UTF-8 bytes, not characters.
        status, body = await insert(jp_fetch, s.tool_input(source="é" * 9))
        assert (status, body["error"]["code"]) == (400, "over-budget")
        assert "16" in body["error"]["message"]
        assert s.inserts() == []
        s.page.close()


# -- 6 and 8. what the page answers ----------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("cell-not-found", 404),
        ("diff-unavailable", 409),
        ("not-authoring-view", 409),
        ("artifact-mismatch", 409),
        ("invalid-input", 400),
        ("page-error", 502),
    ],
)
async def test_the_pages_own_refusal_reaches_the_caller(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, code, status
) -> None:
    # The page is the authority on the anchor without collaboration: `cell-not-found`.
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    s.page.respond = lambda request: {"ok": False, "error": {"code": code, "message": "no"}}
    answer = await insert(jp_fetch, s.tool_input(afterCellId="gone"))
    assert answer == (status, {"error": {"code": code, "message": "no"}})
    assert len(s.inserts()) == 1
    s.page.close()


async def test_a_code_that_is_not_the_pages_to_say_is_page_error(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    s.page.respond = lambda request: {"ok": False, "error": {"code": "kill-switch", "message": "x"}}
    assert code_of(await insert(jp_fetch, s.tool_input())) == (502, "page-error")
    s.page.close()


async def test_the_edit_tools_answer_does_not_count_as_an_open_pending_cell(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    s.page.respond = lambda request: {"diffReviewOpened": True}
    assert code_of(await insert(jp_fetch, s.tool_input())) == (504, "timeout")
    s.page.close()


async def test_a_page_that_never_answers_is_timeout(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    copilot.page_timeout_seconds = 0.3
    s.page.respond = lambda request: None
    assert code_of(await insert(jp_fetch, s.tool_input())) == (504, "timeout")
    s.page.close()


# -- abort -----------------------------------------------------------------------------------


async def test_abort_before_the_pending_cell_opened_ends_the_call_with_aborted(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    s.page.respond = lambda r: {"withdrawn": True} if r["action"] == INSERT_ABORT else None
    call = asyncio.ensure_future(insert(jp_fetch, s.tool_input(), callId="slow"))
    await eventually(s.inserts, "the page to be asked to insert")
    status, body = await call_action(jp_fetch, INSERT_ABORT, {"data": {"callId": "slow"}})
    assert (status, body) == (200, {"result": {"aborted": True}})
    assert code_of(await asyncio.wait_for(call, 5)) == (409, "aborted")
    assert [r["data"] for r in s.page.requests if r["action"] == INSERT_ABORT] == [
        {"callId": "slow"}
    ]
    status, body = await call_action(jp_fetch, INSERT_ABORT, {"data": {"callId": "slow"}})
    assert body == {"result": {"aborted": False}}
    s.page.close()


async def test_abort_after_the_pending_cell_opened_withdraws_it_and_blocks_keep(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    assert (await insert(jp_fetch, s.tool_input(), callId="open"))[0] == 200
    # The edit tool's abort does not reach an insert call.
    status, body = await call_action(jp_fetch, ABORT, {"data": {"callId": "open"}})
    assert body == {"result": {"aborted": False}}
    status, body = await call_action(jp_fetch, INSERT_ABORT, {"data": {"callId": "open"}})
    assert (status, body) == (200, {"result": {"aborted": True}})
    assert [r["data"] for r in s.page.requests if r["action"] == INSERT_ABORT] == [
        {"callId": "open"}
    ]
    s.page.send({"type": "keep", "callId": "open"})
    verdict = await s.page.next_message()
    assert verdict == {"type": "keep-verdict", "callId": "open", "ok": False, "code": "aborted"}
    s.page.close()


@pytest.mark.parametrize("data", [{}, {"callId": ""}, {"callId": 5}, {"callId": "a", "x": 1}])
async def test_abort_with_bad_data_is_invalid_input(jp_fetch, data) -> None:
    answer = await call_action(jp_fetch, INSERT_ABORT, {"data": data})
    assert code_of(answer) == (400, "invalid-input")


async def test_abort_is_never_refused_by_the_switches(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    await insert(jp_fetch, s.tool_input(), callId="late")
    copilot.enabled = False
    try:
        status, body = await call_action(jp_fetch, INSERT_ABORT, {"data": {"callId": "late"}})
    finally:
        copilot.enabled = True
    assert (status, body) == (200, {"result": {"aborted": True}})
    s.page.close()


# -- Keep ------------------------------------------------------------------------------------


async def test_keep_is_allowed_once_and_the_decision_ends_the_call(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    await insert(jp_fetch, s.tool_input(), callId="k1")
    s.page.send({"type": "keep", "callId": "k1"})
    assert await s.page.next_message() == {"type": "keep-verdict", "callId": "k1", "ok": True}
    s.page.send({"type": "review", "callId": "k1", "decision": "keep"})
    s.page.send({"type": "keep", "callId": "k1"})
    verdict = await s.page.next_message()
    assert (verdict["ok"], verdict["code"]) == (False, "aborted")
    assert copilot.proposal_tools["notebook_insert_cell"].calls.open_reviews() == []
    # Decided: nothing left to abort.
    answer = await call_action(jp_fetch, INSERT_ABORT, {"data": {"callId": "k1"}})
    assert answer[1] == {"result": {"aborted": False}}
    s.page.close()


async def test_keep_after_the_kernel_session_ended_is_no_active_session(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    make_notebook(jp_root_dir, "a.ipynb", [OLD])
    session = await start_session(jp_fetch, "a.ipynb")
    page = await ScriptedPage.connect(jp_ws_fetch, "p-1")
    await page.send_state(notebook_state("a.ipynb"))
    page.respond = opens_pending_cell
    s = Scene(page, copilot.jupyter_server.artifact_id("a.ipynb"))
    assert (await insert(jp_fetch, s.tool_input(), callId="k2"))[0] == 200
    await jp_fetch("api", "sessions", session["id"], method="DELETE")
    page.send({"type": "keep", "callId": "k2"})
    verdict = await page.next_message()
    assert verdict == {
        "type": "keep-verdict",
        "callId": "k2",
        "ok": False,
        "code": "no-active-session",
    }
    page.close()


async def test_a_kill_switch_file_written_while_the_cell_is_pending_refuses_keep(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    await insert(jp_fetch, s.tool_input(), callId="k3")
    config_dir = Path(config_directories(copilot)[0])
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / "jupyter_copilot_config.json").write_text(
        json.dumps({"CopilotApp": {"tools_enabled": False}})
    )
    assert await next_of(s.page, "tools-enabled", timeout=2.5) == {
        "type": "tools-enabled",
        "enabled": False,
    }
    s.page.send({"type": "keep", "callId": "k3"})
    verdict = await next_of(s.page, "keep-verdict")
    assert (verdict["ok"], verdict["code"]) == (False, "kill-switch")
    assert code_of(await insert(jp_fetch, s.tool_input(), callId="k4")) == (503, "kill-switch")
    (config_dir / "jupyter_copilot_config.json").write_text(
        json.dumps({"CopilotApp": {"tools_enabled": True}})
    )
    await next_of(s.page, "tools-enabled", timeout=2.5)
    s.page.close()


async def test_a_closing_page_withdraws_its_pending_cells(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    await insert(jp_fetch, s.tool_input(), callId="gone")
    assert [
        c.call_id for c in copilot.proposal_tools["notebook_insert_cell"].calls.open_reviews()
    ] == ["gone"]
    s.page.close()
    await eventually(
        lambda: copilot.proposal_tools["notebook_insert_cell"].calls.open_reviews() == [],
        "the pending cell to end",
    )


# -- MCP: the same tool, the same refusals ---------------------------------------------------


@pytest.fixture
def url(http_server_client: Any, jp_http_port: int, jp_base_url: str) -> str:
    """The endpoint of the running server (the fixture makes the server listen)."""
    return mcp_url(jp_http_port, jp_base_url)


async def test_mcp_autopilot_opens_the_pending_cell_with_the_contracts_result(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, url, jp_auth_header
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    copilot.external_approval_mode = "autopilot"
    async with mcp_client(url, jp_auth_header) as client:
        result = await client.call_tool("notebook_insert_cell", s.tool_input(afterCellId=None))
    assert structured(result) == {
        "success": True,
        "artifactId": s.artifact_id,
        "operation": "insert-cell",
        "reviewOpened": True,
    }
    [request] = s.inserts()
    assert request["data"]["afterCellId"] is None
    assert request["data"]["callId"].startswith("mcp-")
    assert s.page.inbox.empty()  # no card
    s.page.close()


@pytest.mark.parametrize(
    "arguments",
    [
        {"artifactId": "a", "afterCellId": None, "cellType": "code"},
        {"artifactId": "a", "afterCellId": None, "cellType": "sql", "source": "x"},
    ],
)
async def test_mcp_input_that_breaks_the_schema_is_invalid_input(
    url, jp_auth_header, arguments
) -> None:
    async with mcp_client(url, jp_auth_header) as client:
        result = await client.call_tool("notebook_insert_cell", arguments)
    assert refusal_code(result) == "invalid-input"


async def test_mcp_plan_mode_refuses_without_a_card_or_a_pending_cell(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, url, jp_auth_header
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    copilot.external_approval_mode = "plan"
    async with mcp_client(url, jp_auth_header) as client:
        result = await client.call_tool("notebook_insert_cell", s.tool_input())
    assert refusal_code(result) == "plan-mode"
    assert s.inserts() == []
    assert s.page.inbox.empty()
    s.page.close()


async def test_mcp_interactive_shows_a_content_free_card_and_deny_is_denied(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, url, jp_auth_header, jp_http_port, jp_base_url
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    async with mcp_client(url, jp_auth_header) as client:
        call = asyncio.ensure_future(client.call_tool("notebook_insert_cell", s.tool_input()))
        card = await next_of(s.page, "approval")
        assert card["request"]["toolName"] == "notebook_insert_cell"
        assert card["request"]["kind"] == "edit"
        # Where the new cell goes (the anchor), never its source.
        assert card["request"]["details"] == {
            "artifactId": s.artifact_id,
            "newSourceBytes": len(SOURCE.encode()),
            "cellId": "c1",
        }
        assert "canary-41c0" not in json.dumps(card)
        status, _ = await decide(
            jp_http_port, jp_base_url, jp_auth_header, card["request"]["requestId"], "deny"
        )
        result = await asyncio.wait_for(call, 10)
    assert status == 200
    assert refusal_code(result) == "denied"
    assert s.inserts() == []
    s.page.close()


async def test_mcp_interactive_allow_checks_again_and_opens_the_pending_cell(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, url, jp_auth_header, jp_http_port, jp_base_url
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    async with mcp_client(url, jp_auth_header) as client:
        call = asyncio.ensure_future(client.call_tool("notebook_insert_cell", s.tool_input()))
        card = await next_of(s.page, "approval")
        await decide(
            jp_http_port, jp_base_url, jp_auth_header, card["request"]["requestId"], "allow"
        )
        result = await asyncio.wait_for(call, 10)
    assert structured(result)["reviewOpened"] is True
    assert len(s.inserts()) == 1
    s.page.close()


# -- telemetry and logs ----------------------------------------------------------------------


async def test_no_source_path_or_call_id_in_events_or_logs(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, caplog
) -> None:
    canary = "CANARY-insert-5d1e"
    notebook = f"{canary}.ipynb"
    caplog.set_level(logging.DEBUG)
    events: list[dict[str, Any]] = []
    subscription = await jp_ws_fetch("api", "events", "subscribe")
    reader = asyncio.ensure_future(read_events(subscription, events))
    make_notebook(jp_root_dir, notebook, [OLD])
    await start_session(jp_fetch, notebook)
    page = await ScriptedPage.connect(jp_ws_fetch, f"page-{canary}", url=f"lab/tree/{notebook}")
    page.respond = opens_pending_cell
    await page.send_state(notebook_state(notebook))
    data = {
        "artifactId": copilot.jupyter_server.artifact_id(notebook),
        "afterCellId": f"cell-{canary}",
        "cellType": "code",
        "source": f"leak = '{canary}'\n",
    }
    assert (await insert(jp_fetch, data, callId=f"{canary}-keep"))[0] == 200
    assert (await insert(jp_fetch, data, callId=f"{canary}-abort"))[0] == 200
    wrong = {**data, "artifactId": canary}
    assert code_of(await insert(jp_fetch, wrong, callId=f"{canary}-x")) == (
        409,
        "artifact-mismatch",
    )
    page.send({"type": "keep", "callId": f"{canary}-keep"})
    assert (await page.next_message())["ok"] is True
    page.send({"type": "review", "callId": f"{canary}-keep", "decision": "keep"})
    await page.sync()
    await call_action(jp_fetch, INSERT_ABORT, {"data": {"callId": f"{canary}-abort"}})
    page.close()
    expected = {
        "edit/invoked/v1",
        "edit/refused/v1",
        "edit/review-opened/v1",
        "edit/decision/v1",
        "edit/aborted/v1",
    }
    ours = await our_events(events, expected)
    reader.cancel()
    subscription.close()
    edits = [e for e in ours if e["schema_id"].split("/")[-3] == "edit"]
    assert edits and {e["operation"] for e in edits} == {"insert-cell"}
    assert canary not in json.dumps(ours)
    loud = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO]
    assert loud, "the server logged nothing at INFO: the check would prove nothing"
    assert not [m for m in loud if canary in m]


async def test_edit_cell_events_name_their_operation(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    events: list[dict[str, Any]] = []
    subscription = await jp_ws_fetch("api", "events", "subscribe")
    reader = asyncio.ensure_future(read_events(subscription, events))
    answer = await call_action(jp_fetch, INVOKE, {"data": {"artifactId": "x", "cellId": "c"}})
    assert code_of(answer) == (400, "invalid-input")
    [refused] = await our_events(events, {"edit/refused/v1"})
    assert refused["operation"] == "whole-cell-diff"
    reader.cancel()
    subscription.close()
    s.page.close()
