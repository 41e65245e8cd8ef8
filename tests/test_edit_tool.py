"""``notebook_edit_cell`` on the server: the fail-closed order, callIds, abort and Keep.

The page is scripted over the real bridge WebSocket; the server, sessions and file IDs are
real. What only a real page can check (cell, lock, type, hash, diff) is proven in
``test_browser_review.py``; here the scripted page would answer ``stale-source`` if it were
ever asked, so a server refusal proves the page was not reached.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from jupyter_copilot.admin.killswitch import config_directories
from jupyter_copilot.page.context import source_hash
from tests.conftest import make_notebook
from tests.eventually import eventually
from tests.pages import ScriptedPage, context_answer, notebook_state
from tests.server import ABORT, INVOKE, call_action, start_session
from tests.test_canary import our_events, read_events

# The kernel sessions here only give the notebook its tool registrations; no test talks to the
# kernel, so they attach to one real kernel per test process (tests/kernels.py).
pytestmark = pytest.mark.shared_kernel

OLD = "x = 1\n"
NEW = "x = 2\n"
STALE = {"ok": False, "error": {"code": "stale-source", "message": "The cell changed."}}


@dataclass
class Scene:
    """One notebook with a kernel session, open in one scripted page."""

    page: ScriptedPage
    artifact_id: str
    copilot: Any

    def tool_input(self, **changes: Any) -> dict[str, Any]:
        data = {
            "artifactId": self.artifact_id,
            "cellId": "c1",
            "expectedSourceHash": source_hash(OLD),
            "newSource": NEW,
        }
        data.update(changes)
        return data

    def invokes(self) -> list[dict[str, Any]]:
        return [r for r in self.page.requests if r["action"] == INVOKE]


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
    page.respond = opens_review
    artifact_id = copilot.jupyter_server.artifact_id("a.ipynb")
    return Scene(page, artifact_id, copilot)


def opens_review(request: dict[str, Any]) -> dict[str, Any] | None:
    if request["action"] == INVOKE:
        return {"diffReviewOpened": True}
    if request["action"] == ABORT:
        return {"withdrawn": True}
    return context_answer("a.ipynb", OLD)


async def invoke(jp_fetch: Any, data: dict[str, Any], **body: Any) -> tuple[int, dict[str, Any]]:
    return await call_action(jp_fetch, INVOKE, {"data": data, **body})


def code_of(answer: tuple[int, dict[str, Any]]) -> tuple[int, str]:
    status, body = answer
    return status, body["error"]["code"]


# -- success, repeats and the page's request ----------------------------------------------


async def test_a_valid_call_opens_the_review_and_returns_metadata_only(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    status, body = await invoke(jp_fetch, s.tool_input(), callId="call-1")
    assert status == 200
    assert body["result"] == {
        "success": True,
        "artifactId": s.artifact_id,
        "cellId": "c1",
        "operation": "whole-cell-diff",
        "diffReviewOpened": True,
        "sourceHashAfter": source_hash(NEW),
    }
    [request] = s.invokes()
    assert request["data"] == {
        "callId": "call-1",
        "artifactId": s.artifact_id,
        "path": "a.ipynb",
        "cellId": "c1",
        "expectedSourceHash": source_hash(OLD),
        "newSource": NEW,
        "expectedCellType": None,
    }
    s.page.close()


async def test_the_served_cell_type_travels_with_the_call(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    status, _ = await call_action(jp_fetch, "jupyter_copilot.notebook.get-context", {"data": {}})
    assert status == 200
    await invoke(jp_fetch, s.tool_input())
    assert s.invokes()[0]["data"]["expectedCellType"] == "code"
    s.page.close()


async def test_a_repeated_call_id_returns_the_first_result_without_a_second_review(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    opened = asyncio.Event()
    answers: list[dict[str, Any]] = []

    def slow(request: dict[str, Any]) -> dict[str, Any] | None:
        if request["action"] == INVOKE:
            answers.append(request)
            opened.set()
            return None  # answered below, after the repeat has arrived
        return opens_review(request)

    s.page.respond = slow
    first = asyncio.ensure_future(invoke(jp_fetch, s.tool_input(), callId="same"))
    await opened.wait()
    repeat = asyncio.ensure_future(invoke(jp_fetch, s.tool_input(), callId="same"))
    # The repeat must reach the server before the first call ends, and nothing the page sees
    # tells that it has (the point: no second invoke), so a fixed wait.
    await asyncio.sleep(0.2)
    s.page.send(
        {
            "type": "result",
            "requestId": answers[0]["requestId"],
            "ok": True,
            "data": {"diffReviewOpened": True},
        }
    )
    assert (await first) == (await repeat)
    assert (await first)[0] == 200
    assert len(s.invokes()) == 1
    # Later repeats too, and a refusal is remembered like a result.
    assert (await invoke(jp_fetch, s.tool_input(), callId="same")) == (await first)
    s.page.close()


async def test_a_repeated_call_id_with_different_data_is_invalid_input(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    assert (await invoke(jp_fetch, s.tool_input(), callId="k"))[0] == 200
    answer = await invoke(jp_fetch, s.tool_input(newSource="other = 3"), callId="k")
    assert code_of(answer) == (400, "invalid-input")
    assert len(s.invokes()) == 1
    s.page.close()


# -- one test per server-side refusal code, in the order of docs/protocol.md section 5 --------


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"artifactId": "a", "cellId": "c1", "expectedSourceHash": "sha256:00"},
        {"artifactId": "a", "cellId": "c1", "expectedSourceHash": "md5:x", "newSource": "y"},
        {
            "artifactId": "a",
            "cellId": "c1",
            "expectedSourceHash": "sha256:" + "0" * 64,
            "newSource": "y",
            "extra": True,
        },
        {"artifactId": 1, "cellId": "c1", "expectedSourceHash": "sha256:" + "0" * 64},
    ],
)
async def test_input_that_breaks_the_tool_schema_is_invalid_input(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, data
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    status, body = await invoke(jp_fetch, data)
    assert (status, body["error"]["code"]) == (400, "invalid-input")
    assert "sha256:00" not in body["error"]["message"]
    assert s.invokes() == []
    s.page.close()


@pytest.mark.parametrize("raw", ["not json", "[]", '{"data": []}', '{"data": {}, "callId": 7}'])
async def test_malformed_bodies_are_invalid_input(jp_fetch, raw) -> None:
    assert code_of(await call_action(jp_fetch, INVOKE, raw)) == (400, "invalid-input")


async def test_no_page_is_no_active_page(jp_fetch, jp_root_dir, copilot) -> None:
    make_notebook(jp_root_dir, "a.ipynb", [OLD])
    await start_session(jp_fetch, "a.ipynb")
    data = {
        "artifactId": copilot.jupyter_server.artifact_id("a.ipynb"),
        "cellId": "c1",
        "expectedSourceHash": source_hash(OLD),
        "newSource": NEW,
    }
    assert code_of(await invoke(jp_fetch, data)) == (404, "no-active-page")


async def test_two_pages_never_focused_are_ambiguous(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    s.page.close()
    pages = [await ScriptedPage.connect(jp_ws_fetch, f"p-{i}") for i in (2, 3)]
    for page in pages:
        page.respond = opens_review
        await page.send_state(notebook_state("a.ipynb", focused=False))
    assert code_of(await invoke(jp_fetch, s.tool_input())) == (409, "ambiguous-active-notebook")
    assert all(not p.requests for p in pages)
    for page in pages:
        page.close()


@pytest.mark.parametrize("view", [None, "editor"])
async def test_no_notebook_being_edited_is_not_authoring_view(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, view
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    state = notebook_state("a.ipynb")
    if view is None:
        state["activeNotebook"] = None
    else:
        state["activeNotebook"]["viewType"] = view
    await s.page.send_state(state)
    assert code_of(await invoke(jp_fetch, s.tool_input())) == (409, "not-authoring-view")
    assert s.invokes() == []
    s.page.close()


async def test_another_notebook_is_artifact_mismatch(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    answer = await invoke(jp_fetch, s.tool_input(artifactId="not-this-notebook"))
    assert code_of(answer) == (409, "artifact-mismatch")
    assert s.invokes() == []
    s.page.close()


async def test_a_notebook_without_a_kernel_session_is_no_active_session(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, session=False)
    assert code_of(await invoke(jp_fetch, s.tool_input())) == (409, "no-active-session")
    assert s.invokes() == []
    s.page.close()


async def test_a_document_opened_read_only_is_read_only(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, writable=False)
    assert code_of(await invoke(jp_fetch, s.tool_input())) == (403, "read-only")
    assert s.invokes() == []
    s.page.close()


async def test_a_file_the_contents_service_reports_unwritable_is_read_only(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, monkeypatch
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    manager = copilot.serverapp.contents_manager
    # Running as root, file modes never stop a write; the contents service still decides.
    monkeypatch.setattr(manager, "is_writable", lambda path: path != "a.ipynb")
    assert code_of(await invoke(jp_fetch, s.tool_input())) == (403, "read-only")
    assert s.invokes() == []
    s.page.close()


class TestCustomContentsManager:
    @pytest.fixture
    def jp_server_config(self, jp_server_config: Any) -> Any:
        jp_server_config["ServerApp"]["contents_manager_class"] = (
            "tests.permissions.ReadOnlyNotebooksManager"
        )
        return jp_server_config

    async def test_a_manager_that_reports_unwritable_models_is_obeyed(
        self, jp_fetch, jp_ws_fetch, jp_root_dir, copilot
    ) -> None:
        make_notebook(jp_root_dir, "readonly-a.ipynb", [OLD])
        await start_session(jp_fetch, "readonly-a.ipynb")
        page = await ScriptedPage.connect(jp_ws_fetch, "p-1")
        await page.send_state(notebook_state("readonly-a.ipynb"))
        page.respond = opens_review
        data = {
            "artifactId": copilot.jupyter_server.artifact_id("readonly-a.ipynb"),
            "cellId": "c1",
            "expectedSourceHash": source_hash(OLD),
            "newSource": NEW,
        }
        assert code_of(await invoke(jp_fetch, data)) == (403, "read-only")
        page.close()


async def test_empty_new_source_is_invalid_input(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    assert code_of(await invoke(jp_fetch, s.tool_input(newSource=""))) == (400, "invalid-input")
    assert s.invokes() == []
    s.page.close()


async def test_a_page_that_never_answers_is_timeout(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    copilot.page_timeout_seconds = 0.3
    s.page.respond = lambda request: None
    assert code_of(await invoke(jp_fetch, s.tool_input())) == (504, "timeout")
    s.page.close()


@pytest.mark.parametrize(
    "code",
    [
        "not-authoring-view",
        "artifact-mismatch",
        "cell-not-found",
        "cell-locked",
        "cell-type-mismatch",
        "stale-source",
        "diff-unavailable",
    ],
)
async def test_the_pages_own_refusal_reaches_the_caller(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, code
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    s.page.respond = lambda request: {"ok": False, "error": {"code": code, "message": "no"}}
    status, body = await invoke(jp_fetch, s.tool_input())
    assert body["error"]["code"] == code
    assert status == {"cell-not-found": 404, "cell-locked": 403}.get(code, 409)
    s.page.close()


@pytest.mark.parametrize(("code", "status"), [("invalid-input", 400), ("page-error", 502)])
async def test_the_pages_malformed_and_failed_answers_reach_the_caller(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, code, status
) -> None:
    # Before the page codes came from the vocabulary these two ended as `timeout`.
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    s.page.respond = lambda request: {"ok": False, "error": {"code": code, "message": "no"}}
    answer = await invoke(jp_fetch, s.tool_input())
    assert answer == (status, {"error": {"code": code, "message": "no"}})
    s.page.close()


class TestSmallInputBudget:
    @pytest.fixture
    def copilot_config(self) -> dict[str, Any]:
        return {"tool_input_budget_bytes": 16}

    async def test_a_proposal_over_the_budget_is_over_budget_even_when_stale(
        self, jp_fetch, jp_ws_fetch, jp_root_dir, copilot
    ) -> None:
        s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
        s.page.respond = lambda request: STALE
        # 17 bytes: one over. Emoji count in UTF-8 bytes, not characters.
        answer = await invoke(
            jp_fetch, s.tool_input(newSource="x = '\U0001f600\U0001f600\U0001f600'")
        )
        status, body = answer
        assert (status, body["error"]["code"]) == (400, "over-budget")
        assert "16" in body["error"]["message"]
        assert s.invokes() == []
        s.page.close()


# -- the order of pairs of failures -------------------------------------------------------


async def test_wrong_artifact_and_stale_is_artifact_mismatch(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    s.page.respond = lambda request: STALE
    answer = await invoke(jp_fetch, s.tool_input(artifactId="elsewhere"))
    assert code_of(answer) == (409, "artifact-mismatch")
    s.page.close()


async def test_invalid_input_comes_before_the_switches(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    copilot.enabled = False
    assert code_of(await invoke(jp_fetch, {"cellId": "c1"})) == (400, "invalid-input")
    assert code_of(await invoke(jp_fetch, s.tool_input())) == (503, "feature-disabled")
    copilot.enabled = True
    s.page.close()


class TestKillSwitchFromConfig:
    @pytest.fixture
    def copilot_config(self) -> dict[str, Any]:
        return {"tools_enabled": False}

    async def test_kill_switch_and_stale_is_kill_switch(
        self, jp_fetch, jp_ws_fetch, jp_root_dir, copilot
    ) -> None:
        s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
        assert s.page.welcome["toolsEnabled"] is False
        status = json.loads((await jp_fetch("copilot", "api", "status")).body)
        assert status["killSwitch"] == {"engaged": True, "source": "config"}
        s.page.respond = lambda request: STALE
        status, body = await invoke(jp_fetch, s.tool_input())
        assert (status, body["error"]["code"]) == (503, "kill-switch")
        assert s.invokes() == []
        # With the feature switch off too, the kill switch is named first.
        copilot.enabled = False
        assert code_of(await invoke(jp_fetch, s.tool_input(newSource="y"))) == (
            503,
            "kill-switch",
        )
        copilot.enabled = True
        # Reading context is not affected.
        s.page.respond = opens_review
        status, _ = await call_action(
            jp_fetch, "jupyter_copilot.notebook.get-context", {"data": {}}
        )
        assert status == 200
        s.page.close()


# -- abort ---------------------------------------------------------------------------------


async def test_abort_before_the_review_opened_ends_the_call_with_aborted(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    s.page.respond = lambda r: {"withdrawn": True} if r["action"] == ABORT else None
    call = asyncio.ensure_future(invoke(jp_fetch, s.tool_input(), callId="slow"))
    await eventually(s.invokes, "the page to be asked to invoke")
    status, body = await call_action(jp_fetch, ABORT, {"data": {"callId": "slow"}})
    assert (status, body) == (200, {"result": {"aborted": True}})
    assert code_of(await asyncio.wait_for(call, 5)) == (409, "aborted")
    # The page was told to make sure nothing opens.
    assert [r["data"] for r in s.page.requests if r["action"] == ABORT] == [{"callId": "slow"}]
    # A second abort has nothing left to abort.
    status, body = await call_action(jp_fetch, ABORT, {"data": {"callId": "slow"}})
    assert body == {"result": {"aborted": False}}
    s.page.close()


async def test_abort_after_the_review_opened_withdraws_it_and_blocks_keep(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    assert (await invoke(jp_fetch, s.tool_input(), callId="open"))[0] == 200
    status, body = await call_action(jp_fetch, ABORT, {"data": {"callId": "open"}})
    assert (status, body) == (200, {"result": {"aborted": True}})
    assert [r["data"] for r in s.page.requests if r["action"] == ABORT] == [{"callId": "open"}]
    s.page.send({"type": "keep", "callId": "open"})
    verdict = await s.page.next_message()
    assert verdict == {"type": "keep-verdict", "callId": "open", "ok": False, "code": "aborted"}
    s.page.close()


async def test_abort_answers_without_waiting_for_a_busy_page_and_the_event_follows_its_answer(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    """docs/protocol.md section 4.3: the agent is answered once Keep is refused and the page
    has been told; the page, busy drawing, answers later, and the event says what it did."""
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    events: list[dict[str, Any]] = []
    subscription = await jp_ws_fetch("api", "events", "subscribe")
    reader = asyncio.ensure_future(read_events(subscription, events))
    assert (await invoke(jp_fetch, s.tool_input(), callId="busy"))[0] == 200
    s.page.respond = lambda r: None  # the page does not answer the withdrawal yet
    status, body = await call_action(jp_fetch, ABORT, {"data": {"callId": "busy"}})
    assert (status, body) == (200, {"result": {"aborted": True}})
    [withdrawal] = [r for r in s.page.requests if r["action"] == ABORT]
    assert withdrawal["data"] == {"callId": "busy"}
    # Keep is refused already, before the page has withdrawn anything.
    s.page.send({"type": "keep", "callId": "busy"})
    verdict = await s.page.next_message()
    assert verdict == {"type": "keep-verdict", "callId": "busy", "ok": False, "code": "aborted"}
    assert not [e for e in events if e.get("schema_id", "").endswith("edit/aborted/v1")]
    # The page answers once it has drawn: only then is the abort recorded, as withdrawn.
    s.page.send(
        {
            "type": "result",
            "requestId": withdrawal["requestId"],
            "ok": True,
            "data": {"withdrawn": True},
        }
    )
    [aborted] = [
        e
        for e in await our_events(events, {"edit/aborted/v1"})
        if e["schema_id"].endswith("edit/aborted/v1")
    ]
    assert (aborted["reviewWasOpen"], aborted["withdrawn"]) == (True, True)
    reader.cancel()
    subscription.close()
    s.page.close()


async def test_abort_of_an_unknown_or_decided_call_is_false(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    assert (await call_action(jp_fetch, ABORT, {"data": {"callId": "nope"}}))[1] == {
        "result": {"aborted": False}
    }
    await invoke(jp_fetch, s.tool_input(), callId="done")
    s.page.send({"type": "review", "callId": "done", "decision": "undo"})
    await s.page.sync()
    assert (await call_action(jp_fetch, ABORT, {"data": {"callId": "done"}}))[1] == {
        "result": {"aborted": False}
    }
    s.page.close()


@pytest.mark.parametrize("data", [{}, {"callId": ""}, {"callId": 5}, {"callId": "a", "x": 1}])
async def test_abort_with_bad_data_is_invalid_input(jp_fetch, data) -> None:
    assert code_of(await call_action(jp_fetch, ABORT, {"data": data})) == (400, "invalid-input")


async def test_abort_is_never_refused_by_the_switches(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    await invoke(jp_fetch, s.tool_input(), callId="late")
    copilot.enabled = False
    status, body = await call_action(jp_fetch, ABORT, {"data": {"callId": "late"}})
    copilot.enabled = True
    assert (status, body) == (200, {"result": {"aborted": True}})
    s.page.close()


# -- Keep ----------------------------------------------------------------------------------


async def test_keep_is_allowed_once_for_an_open_review(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    await invoke(jp_fetch, s.tool_input(), callId="k1")
    s.page.send({"type": "keep", "callId": "k1"})
    assert await s.page.next_message() == {"type": "keep-verdict", "callId": "k1", "ok": True}
    s.page.send({"type": "review", "callId": "k1", "decision": "keep"})
    s.page.send({"type": "keep", "callId": "k1"})
    verdict = await s.page.next_message()
    assert (verdict["ok"], verdict["code"]) == (False, "aborted")
    s.page.close()


async def test_keep_from_another_page_or_for_an_unknown_call_is_refused(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    await invoke(jp_fetch, s.tool_input(), callId="mine")
    other = await ScriptedPage.connect(jp_ws_fetch, "p-other")
    other.send({"type": "keep", "callId": "mine"})
    assert (await other.next_message())["ok"] is False
    s.page.send({"type": "keep", "callId": "unknown"})
    assert (await s.page.next_message())["ok"] is False
    other.close()
    s.page.close()


async def test_a_kill_switch_file_written_during_a_review_refuses_keep_and_tells_pages(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    await invoke(jp_fetch, s.tool_input(), callId="k2")
    engaged = json.dumps({"CopilotApp": {"tools_enabled": False}})
    config_dir = Path(config_directories(copilot)[0])
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / "jupyter_copilot_config.json").write_text(engaged)
    s.page.send({"type": "keep", "callId": "k2"})
    # The verdict, and within 2 seconds the news every page hears, in either order.
    heard = [await s.page.next_message(timeout=2.5) for _ in range(2)]
    assert sorted(heard, key=lambda m: m["type"]) == [
        {"type": "keep-verdict", "callId": "k2", "ok": False, "code": "kill-switch"},
        {"type": "tools-enabled", "enabled": False},
    ]
    status = json.loads((await jp_fetch("copilot", "api", "status")).body)
    assert status["killSwitch"] == {"engaged": True, "source": "file"}
    assert status["toolsEnabled"] is False
    assert code_of(await invoke(jp_fetch, s.tool_input(), callId="k3")) == (503, "kill-switch")
    # Released the same way, without a restart.
    (config_dir / "jupyter_copilot_config.json").write_text(
        json.dumps({"CopilotApp": {"tools_enabled": True}})
    )
    assert await s.page.next_message(timeout=2.5) == {"type": "tools-enabled", "enabled": True}
    assert (await invoke(jp_fetch, s.tool_input(), callId="k4"))[0] == 200
    s.page.close()
