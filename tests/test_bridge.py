"""The page bridge protocol over a real WebSocket, with a scripted page."""

from __future__ import annotations

import asyncio
import json

import pytest
from tornado.httpclient import HTTPClientError

from tests.eventually import eventually
from tests.pages import ScriptedPage, context_answer, get_context, notebook_state


async def test_hello_is_answered_with_welcome_and_the_page_counts(jp_ws_fetch, jp_fetch) -> None:
    page = await ScriptedPage.connect(jp_ws_fetch, "p-1")
    assert page.welcome == {
        "type": "welcome",
        "protocol": 1,
        "pageId": "p-1",
        "toolsEnabled": True,
        "budgetBytes": 8192,
        "toolInputBudgetBytes": 65536,
    }
    status = json.loads((await jp_fetch("copilot", "api", "status")).body)
    assert status["pages"] == 1
    page.close()


async def test_a_socket_that_never_says_hello_is_not_a_page(jp_ws_fetch, jp_fetch) -> None:
    ws = await jp_ws_fetch("copilot", "api", "bridge")
    ws.write_message(json.dumps({"type": "state", "fingerprint": "f", "state": notebook_state()}))
    reply = json.loads(await ws.read_message())
    assert reply["type"] == "error" and reply["code"] == "invalid-message"
    status = json.loads((await jp_fetch("copilot", "api", "status")).body)
    assert status["pages"] == 0
    ws.close()


@pytest.mark.parametrize(
    "bad",
    [
        "{not json",
        "[1, 2]",
        json.dumps({"no": "type"}),
        json.dumps({"type": "teleport"}),
        json.dumps({"type": "state", "fingerprint": "f"}),
        json.dumps({"type": "state", "fingerprint": "f", "state": {"focused": "yes"}}),
        json.dumps({"type": "result", "requestId": "r", "ok": True}),
        json.dumps({"type": "hello", "protocol": 1, "pageId": "again", "url": ""}),
    ],
)
async def test_malformed_messages_get_an_error_and_the_page_stays(
    jp_ws_fetch, jp_fetch, jp_root_dir, bad
) -> None:
    page = await ScriptedPage.connect(jp_ws_fetch, "p-1")
    page.send(bad)
    reply = await page.next_message()
    assert reply["type"] == "error" and reply["code"] == "invalid-message"
    assert reply["message"]
    # Still connected and still serving.
    page.respond = lambda request: {"activeNotebook": None}
    assert await get_context(jp_fetch) == []
    assert len(page.requests) == 1
    page.close()


async def test_state_with_an_unchanged_fingerprint_is_deduplicated(jp_ws_fetch, copilot) -> None:
    page = await ScriptedPage.connect(jp_ws_fetch, "p-1")
    state = notebook_state()
    for _ in range(3):
        await page.send_state(state, fingerprint="same")
    await page.send_state(notebook_state(selected=["c2"]), fingerprint="other")
    session = copilot.dispatcher.pages()[0]
    assert (session.counts.received, session.counts.deduplicated) == (4, 2)
    assert session.state["activeNotebook"]["selectedCellIds"] == ["c2"]
    page.close()


async def test_request_and_result_round_trip_serves_live_state(
    jp_ws_fetch, jp_fetch, jp_root_dir
) -> None:
    (jp_root_dir / "a.ipynb").write_text("{}")
    page = await ScriptedPage.connect(jp_ws_fetch, "p-1")
    page.respond = lambda request: context_answer(source="live = 1")
    entries = await get_context(jp_fetch)
    assert [e["name"] for e in entries] == ["notebook_view_state", "notebook_selected_cell"]
    assert entries[1]["value"]["source"] == "live = 1"
    request = page.requests[0]
    assert request["action"] == "jupyter_copilot.notebook.get-context"
    assert request["data"] == {}
    assert request["deadlineMs"] == 10000
    page.close()


class TestShortDeadline:
    @pytest.fixture
    def copilot_config(self):
        return {"page_timeout_seconds": 0.3}

    async def test_a_page_that_does_not_answer_ends_the_call_with_timeout(
        self, jp_ws_fetch, jp_fetch
    ) -> None:
        page = await ScriptedPage.connect(jp_ws_fetch, "p-1")
        page.respond = lambda request: None
        with pytest.raises(HTTPClientError) as err:
            await get_context(jp_fetch)
        assert err.value.code == 504
        assert json.loads(err.value.response.body)["error"]["code"] == "timeout"
        assert page.requests[0]["deadlineMs"] == 300
        page.close()


class TestLongDeadline:
    @pytest.fixture
    def copilot_config(self):
        return {"page_timeout_seconds": 120}

    async def test_a_page_closing_mid_request_fails_the_call_at_once(
        self, jp_ws_fetch, jp_fetch, copilot
    ) -> None:
        page = await ScriptedPage.connect(jp_ws_fetch, "p-1")
        page.respond = lambda request: None
        call = asyncio.ensure_future(get_context(jp_fetch))
        await eventually(lambda: page.requests, "the page to be asked for its context")
        page.close()
        # Far less than the 120 s deadline: the close itself must end the call.
        with pytest.raises(HTTPClientError) as err:
            await asyncio.wait_for(call, 20)
        assert err.value.code == 504
        assert json.loads(err.value.response.body)["error"]["code"] == "timeout"
        assert copilot.dispatcher.pages() == []

    async def test_a_late_or_unknown_result_is_ignored(self, jp_ws_fetch, jp_fetch) -> None:
        page = await ScriptedPage.connect(jp_ws_fetch, "p-1")
        page.send({"type": "result", "requestId": "never-asked", "ok": True, "data": {}})
        await page.sync()
        page.respond = lambda request: {"activeNotebook": None}
        assert await get_context(jp_fetch) == []
        page.close()


async def test_a_page_refusal_code_reaches_the_caller(jp_ws_fetch, jp_fetch) -> None:
    page = await ScriptedPage.connect(jp_ws_fetch, "p-1")
    page.respond = lambda request: {
        "ok": False,
        "error": {"code": "unknown-action", "message": "no"},
    }
    with pytest.raises(HTTPClientError) as err:
        await get_context(jp_fetch)
    assert err.value.code == 404
    page.close()


@pytest.mark.parametrize(
    ("code", "status"), [("invalid-input", 400), ("page-error", 502), ("cell-locked", 403)]
)
async def test_every_page_code_reaches_the_caller_as_itself(
    jp_ws_fetch, jp_fetch, code, status
) -> None:
    # The lab extension refuses malformed requests with invalid-input and answers page-error
    # when an action fails inside the page (docs/protocol.md section 9); neither is a timeout.
    page = await ScriptedPage.connect(jp_ws_fetch, "p-1")
    page.respond = lambda request: {"ok": False, "error": {"code": code, "message": "page says"}}
    with pytest.raises(HTTPClientError) as err:
        await get_context(jp_fetch)
    assert err.value.code == status
    assert json.loads(err.value.response.body)["error"] == {"code": code, "message": "page says"}
    page.close()


async def test_a_code_outside_the_pages_vocabulary_is_a_page_error(jp_ws_fetch, jp_fetch) -> None:
    page = await ScriptedPage.connect(jp_ws_fetch, "p-1")
    # kill-switch is a refusal code, but not one a page may answer with.
    for code in ("kill-switch", "made-up"):
        page.respond = lambda request, code=code: {
            "ok": False,
            "error": {"code": code, "message": "no"},
        }
        with pytest.raises(HTTPClientError) as err:
            await get_context(jp_fetch)
        assert err.value.code == 502
        assert json.loads(err.value.response.body)["error"]["code"] == "page-error"
    page.close()


async def test_an_unusable_page_answer_is_not_served(jp_ws_fetch, jp_fetch) -> None:
    page = await ScriptedPage.connect(jp_ws_fetch, "p-1")
    page.respond = lambda request: {"activeNotebook": {"path": 3}}
    with pytest.raises(HTTPClientError) as err:
        await get_context(jp_fetch)
    assert err.value.code == 504
    page.close()


async def test_a_reconnecting_page_replaces_its_old_connection(jp_ws_fetch, copilot) -> None:
    first = await ScriptedPage.connect(jp_ws_fetch, "p-1")
    second = await ScriptedPage.connect(jp_ws_fetch, "p-1")
    assert len(copilot.dispatcher.pages()) == 1
    first.close()
    await second.sync()
    assert len(copilot.dispatcher.pages()) == 1
    second.close()
