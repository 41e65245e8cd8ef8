"""``notebook_run_cell`` on the server: every refusal, the run card, the result and events.

As in ``test_insert_tool.py`` the server, kernel sessions and file IDs are real and the page
is scripted over the real bridge WebSocket; the person's Allow and Deny go through the real
``POST copilot/api/approvals/<id>``. A refusal with no ``run-cell.invoke`` in
``page.requests`` proves the cell never ran. Running the cell in a real kernel, the page's own
checks against its live model and the card as a person sees it belong to
``test_browser_run.py``.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from jupyter_copilot.page.bridge import server_message_problem
from jupyter_copilot.page.context import source_hash
from jupyter_copilot.protocol.refusals import Refusal
from jupyter_copilot.protocol.registry import first_error
from jupyter_copilot.tools.run_tool import check_live_run_cell, run_locked, run_result
from tests.conftest import make_notebook
from tests.eventually import eventually
from tests.mcpclient import mcp_client, mcp_url, refusal_code, structured
from tests.node_harness import run_node
from tests.pages import ScriptedPage, next_of, notebook_state
from tests.server import RUN_ABORT, RUN_INVOKE, call_action, registrations, start_session
from tests.test_approvals import decide
from tests.test_canary import our_events, read_events

# The kernel sessions here only give the notebook its tool registrations; the scripted page
# answers the runs, so no test talks to the kernel: they attach to one real kernel per test
# process (tests/kernels.py).
pytestmark = pytest.mark.shared_kernel

SOURCE = "print('hi')  # canary-7e2a\n"
HASH = source_hash(SOURCE)
DONE = {
    "executionCount": 3,
    "status": "ok",
    "outputs": [{"outputType": "stream", "name": "stdout", "text": "hi\n"}],
}


@dataclass
class Scene:
    """One notebook with a kernel session, open in one scripted page, and the person."""

    page: ScriptedPage
    artifact_id: str
    decide: Any

    def tool_input(self, **changes: Any) -> dict[str, Any]:
        data: dict[str, Any] = {
            "artifactId": self.artifact_id,
            "cellId": "c1",
            "expectedSourceHash": HASH,
        }
        data.update(changes)
        return data

    def runs(self) -> list[dict[str, Any]]:
        return [r for r in self.page.requests if r["action"] == RUN_INVOKE]

    async def card(self) -> dict[str, Any]:
        return await next_of(self.page, "approval")


def runs_the_cell(request: dict[str, Any]) -> dict[str, Any] | None:
    if request["action"] == RUN_INVOKE:
        return DONE
    if request["action"] == RUN_ABORT:
        return {"withdrawn": False}
    return None


@pytest.fixture
def url(http_server_client: Any, jp_http_port: int, jp_base_url: str) -> str:
    """The endpoint of the running server (the fixture makes the server listen)."""
    return mcp_url(jp_http_port, jp_base_url)


async def scene(
    jp_fetch: Any,
    jp_ws_fetch: Any,
    root: Path,
    copilot: Any,
    person: tuple[int, str, dict[str, str]],
    *,
    session: bool = True,
    writable: bool = True,
) -> Scene:
    make_notebook(root, "a.ipynb", [SOURCE])
    if session:
        await start_session(jp_fetch, "a.ipynb")
    page = await ScriptedPage.connect(jp_ws_fetch, "p-1")
    await page.send_state(notebook_state("a.ipynb", writable=writable))
    page.respond = runs_the_cell
    port, base, headers = person

    async def decide_card(request_id: str, decision: str) -> tuple[int, dict[str, Any]]:
        return await decide(port, base, headers, request_id, decision)

    return Scene(page, copilot.jupyter_server.artifact_id("a.ipynb"), decide_card)


@pytest.fixture
def person(jp_http_port: int, jp_base_url: str, jp_auth_header: dict[str, str]) -> Any:
    """How the person's clicks on a card reach the server."""
    return (jp_http_port, jp_base_url, jp_auth_header)


async def run(jp_fetch: Any, data: Any, **body: Any) -> tuple[int, dict[str, Any]]:
    return await call_action(jp_fetch, RUN_INVOKE, {"data": data, **body})


async def run_and_decide(s: Scene, jp_fetch: Any, decision: str, **body: Any) -> Any:
    """Call the tool, answer its card with ``decision``; the call's answer."""
    call = asyncio.ensure_future(run(jp_fetch, s.tool_input(), **body))
    card = await s.card()
    status, _ = await s.decide(card["request"]["requestId"], decision)
    assert status == 200
    return await asyncio.wait_for(call, 10)


def code_of(answer: tuple[int, dict[str, Any]]) -> tuple[int, str]:
    status, body = answer
    return status, body["error"]["code"]


# -- the registry ----------------------------------------------------------------------------


async def test_each_kernel_session_registers_the_run_tool_once(
    jp_fetch, jp_root_dir, copilot
) -> None:
    make_notebook(jp_root_dir, "a.ipynb", [SOURCE])
    await start_session(jp_fetch, "a.ipynb")
    listed = await registrations(jp_fetch, "notebook_run_cell")
    assert [(r["tool"], r["path"]) for r in listed] == [("notebook_run_cell", "a.ipynb")]
    tool = copilot.registry.tool("notebook_run_cell")
    assert tool["invoke"]["action"] == RUN_INVOKE
    assert tool["abort"]["action"] == RUN_ABORT


# -- the card, Allow and the result ----------------------------------------------------------


async def test_allow_runs_the_cell_once_and_returns_the_pages_digests(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person)
    call = asyncio.ensure_future(run(jp_fetch, s.tool_input(), callId="run-1"))
    card = await s.card()
    # The card names the cell and the hash; it carries no source and nothing ran yet.
    assert card["path"] == "a.ipynb"
    assert card["request"]["toolName"] == "notebook_run_cell"
    assert card["request"]["kind"] == "run"
    assert card["request"]["details"] == {
        "artifactId": s.artifact_id,
        "cellId": "c1",
        "expectedSourceHash": HASH,
    }
    assert "canary-7e2a" not in json.dumps(card)
    assert s.runs() == []
    await s.decide(card["request"]["requestId"], "allow")
    status, body = await asyncio.wait_for(call, 10)
    assert (status, body) == (200, {"result": {"success": True, **DONE, "outputsOmitted": 0}})
    [request] = s.runs()
    assert request["data"] == {
        "callId": "run-1",
        "artifactId": s.artifact_id,
        "path": "a.ipynb",
        "cellId": "c1",
        "expectedSourceHash": HASH,
    }
    assert server_message_problem(request) is None
    assert first_error("bridge-server-message", request["data"], "runCellRequest") is None
    assert first_error("bridge-page-message", DONE, "runCellDone") is None
    # The same callId again: the first result, and the cell does not run twice.
    assert await run(jp_fetch, s.tool_input(), callId="run-1") == (status, body)
    assert len(s.runs()) == 1
    s.page.close()


async def test_deny_is_denied_and_nothing_runs(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person)
    assert code_of(await run_and_decide(s, jp_fetch, "deny")) == (403, "denied")
    assert s.runs() == []
    s.page.close()


async def test_a_card_nobody_answers_is_denied_and_nothing_runs(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person)
    copilot.approval_timeout_seconds = 1.0
    status, body = await run(jp_fetch, s.tool_input())
    assert (status, body["error"]["code"]) == (403, "denied")
    assert "in time" in body["error"]["message"]
    assert s.runs() == []
    s.page.close()


async def test_the_server_checks_again_after_allow(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person)
    call = asyncio.ensure_future(run(jp_fetch, s.tool_input()))
    card = await s.card()
    # While the card waits, the admin forbids runs: Allow no longer runs anything.
    copilot.agent_run_cells = "never"
    await s.decide(card["request"]["requestId"], "allow")
    assert code_of(await asyncio.wait_for(call, 10)) == (403, "not-permitted")
    assert s.runs() == []
    s.page.close()


# -- 0. input --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "names"),
    [
        ({"expectedSourceHash": "md5:x"}, "expectedSourceHash"),
        ({"cellId": ""}, "cellId"),
        ({"cellId": 7}, "cellId"),
        ({"source": "x"}, "additional"),
    ],
)
async def test_input_that_breaks_the_tool_schema_is_invalid_input_and_says_where(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person, changes, names
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person)
    status, body = await run(jp_fetch, s.tool_input(**changes))
    assert (status, body["error"]["code"]) == (400, "invalid-input")
    assert names in body["error"]["message"]
    assert s.page.inbox.empty() and s.runs() == []
    s.page.close()


@pytest.mark.parametrize("missing", ["artifactId", "cellId", "expectedSourceHash"])
async def test_every_field_is_required(jp_fetch, missing) -> None:
    data = {"artifactId": "a", "cellId": "c1", "expectedSourceHash": HASH}
    del data[missing]
    status, body = await run(jp_fetch, data)
    assert (status, body["error"]["code"]) == (400, "invalid-input")
    assert missing in body["error"]["message"]


async def test_invalid_input_comes_before_the_switches(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person)
    copilot.enabled = False
    try:
        assert code_of(await run(jp_fetch, {"cellId": "x"})) == (400, "invalid-input")
        assert code_of(await run(jp_fetch, s.tool_input())) == (503, "feature-disabled")
    finally:
        copilot.enabled = True
    assert s.page.inbox.empty() and s.runs() == []
    s.page.close()


# -- 1. switches, the caller's mode and the server's policy ----------------------------------


class TestKillSwitchFromConfig:
    @pytest.fixture
    def copilot_config(self) -> dict[str, Any]:
        return {"tools_enabled": False, "agent_run_cells": "never"}

    async def test_the_kill_switch_comes_before_the_run_policy(
        self, jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person
    ) -> None:
        s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person)
        assert code_of(await run(jp_fetch, s.tool_input())) == (503, "kill-switch")
        assert s.page.inbox.empty() and s.runs() == []
        s.page.close()


class TestRunsForbidden:
    @pytest.fixture
    def copilot_config(self) -> dict[str, Any]:
        return {"agent_run_cells": "never"}

    async def test_never_is_not_permitted_without_a_card(
        self, jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person
    ) -> None:
        s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person)
        status, body = await run(jp_fetch, s.tool_input())
        assert (status, body["error"]["code"]) == (403, "not-permitted")
        assert "agent_run_cells" in body["error"]["message"]
        # The policy comes before the page: not even a wrong notebook is looked at.
        status, body = await run(jp_fetch, s.tool_input(artifactId="elsewhere"))
        assert (status, body["error"]["code"]) == (403, "not-permitted")
        assert s.page.inbox.empty() and s.runs() == []
        s.page.close()

    async def test_plan_mode_is_named_before_the_policy(
        self, jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person, url, jp_auth_header
    ) -> None:
        s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person)
        copilot.external_approval_mode = "plan"
        async with mcp_client(url, jp_auth_header) as client:
            result = await client.call_tool("notebook_run_cell", s.tool_input())
        assert refusal_code(result) == "plan-mode"
        assert s.page.inbox.empty() and s.runs() == []
        s.page.close()


# -- 2 to 4. the page, the artifact, the session and permission ------------------------------


async def test_no_page_is_no_active_page(jp_fetch, jp_root_dir, copilot) -> None:
    make_notebook(jp_root_dir, "a.ipynb", [SOURCE])
    await start_session(jp_fetch, "a.ipynb")
    data = {
        "artifactId": copilot.jupyter_server.artifact_id("a.ipynb"),
        "cellId": "c1",
        "expectedSourceHash": HASH,
    }
    assert code_of(await run(jp_fetch, data)) == (404, "no-active-page")


async def test_no_notebook_being_edited_is_not_authoring_view(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person)
    await s.page.send_state({"focused": True, "url": "lab", "activeNotebook": None})
    assert code_of(await run(jp_fetch, s.tool_input())) == (409, "not-authoring-view")
    assert s.page.inbox.empty() and s.runs() == []
    s.page.close()


async def test_another_notebook_is_artifact_mismatch(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person)
    answer = await run(jp_fetch, s.tool_input(artifactId="not-this-notebook"))
    assert code_of(answer) == (409, "artifact-mismatch")
    assert s.page.inbox.empty() and s.runs() == []
    s.page.close()


async def test_a_notebook_without_a_kernel_session_is_no_active_session(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person, session=False)
    assert code_of(await run(jp_fetch, s.tool_input())) == (409, "no-active-session")
    assert s.page.inbox.empty() and s.runs() == []
    s.page.close()


async def test_a_document_opened_read_only_is_read_only(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person, writable=False)
    assert code_of(await run(jp_fetch, s.tool_input())) == (403, "read-only")
    assert s.page.inbox.empty() and s.runs() == []
    s.page.close()


# -- 6 and 7. what the page answers after Allow -----------------------------------------------


@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("cell-not-found", 404),
        ("cell-locked", 403),
        ("cell-type-mismatch", 409),
        ("stale-source", 409),
        ("not-authoring-view", 409),
        ("artifact-mismatch", 409),
        ("page-error", 502),
    ],
)
async def test_the_pages_own_refusal_reaches_the_caller(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person, code, status
) -> None:
    # Without collaboration the page is the authority on the cell: its checks run right
    # before it runs the cell, after the person allowed the card.
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person)
    s.page.respond = lambda request: {"ok": False, "error": {"code": code, "message": "no"}}
    answer = await run_and_decide(s, jp_fetch, "allow")
    assert answer == (status, {"error": {"code": code, "message": "no"}})
    assert len(s.runs()) == 1
    s.page.close()


@pytest.mark.parametrize(
    "answer",
    [
        {"reviewOpened": True},
        {**DONE, "status": "finished"},
        {**DONE, "executionCount": "3"},
        {**DONE, "executionCount": True},
        {**DONE, "outputs": "hi"},
        {**DONE, "outputs": ["hi"]},
        {**DONE, "extra": 1},
    ],
)
async def test_an_answer_of_another_shape_is_page_error(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person, answer
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person)
    s.page.respond = lambda request: answer
    assert code_of(await run_and_decide(s, jp_fetch, "allow")) == (502, "page-error")
    s.page.close()


async def test_a_run_longer_than_its_limit_is_timeout(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person)
    # The page timeout does not apply to a run: only the run's own limit does.
    copilot.page_timeout_seconds = 0.1
    copilot.agent_run_timeout_seconds = 1.0
    s.page.respond = lambda request: None
    status, body = await run_and_decide(s, jp_fetch, "allow")
    assert (status, body["error"]["code"]) == (504, "timeout")
    assert "1 seconds" in body["error"]["message"]
    s.page.close()


# -- abort -----------------------------------------------------------------------------------


async def test_abort_while_the_card_waits_ends_the_card_and_nothing_runs(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person)
    call = asyncio.ensure_future(run(jp_fetch, s.tool_input(), callId="r-abort"))
    card = await s.card()
    status, body = await call_action(jp_fetch, RUN_ABORT, {"data": {"callId": "r-abort"}})
    assert (status, body) == (200, {"result": {"aborted": True}})
    assert code_of(await asyncio.wait_for(call, 5)) == (409, "aborted")
    ended = await next_of(s.page, "approval-ended")
    assert ended == {
        "type": "approval-ended",
        "requestId": card["request"]["requestId"],
        "outcome": "aborted",
    }
    # Too late to allow: the card is over.
    status, body = await s.decide(card["request"]["requestId"], "allow")
    assert (status, body["error"]["code"]) == (409, "aborted")
    assert s.runs() == []
    s.page.close()


async def test_abort_during_the_run_answers_the_agent_and_the_page_says_nothing_was_withdrawn(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person)
    s.page.respond = lambda r: {"withdrawn": False} if r["action"] == RUN_ABORT else None
    call = asyncio.ensure_future(run(jp_fetch, s.tool_input(), callId="r-long"))
    card = await s.card()
    await s.decide(card["request"]["requestId"], "allow")
    await eventually(s.runs, "the page to be asked to run the cell")
    status, body = await call_action(jp_fetch, RUN_ABORT, {"data": {"callId": "r-long"}})
    assert (status, body) == (200, {"result": {"aborted": True}})
    assert code_of(await asyncio.wait_for(call, 5)) == (409, "aborted")
    assert [r["data"] for r in s.page.requests if r["action"] == RUN_ABORT] == [
        {"callId": "r-long"}
    ]
    s.page.close()


# -- MCP: a card in every mode ---------------------------------------------------------------


@pytest.mark.parametrize("mode", ["interactive", "autopilot"])
async def test_mcp_always_shows_the_run_card_even_in_autopilot(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person, url, jp_auth_header, mode
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person)
    copilot.external_approval_mode = mode
    async with mcp_client(url, jp_auth_header) as client:
        call = asyncio.ensure_future(client.call_tool("notebook_run_cell", s.tool_input()))
        card = await s.card()
        assert card["request"]["kind"] == "run"
        assert s.runs() == []
        await s.decide(card["request"]["requestId"], "allow")
        result = await asyncio.wait_for(call, 10)
    assert structured(result) == {"success": True, **DONE, "outputsOmitted": 0}
    assert len(s.runs()) == 1
    s.page.close()


async def test_an_mcp_client_that_gives_up_leaves_no_card(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person, url, jp_auth_header
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person)
    async with mcp_client(url, jp_auth_header) as client:
        call = asyncio.ensure_future(client.call_tool("notebook_run_cell", s.tool_input()))
        card = await s.card()
        call.cancel()
    ended = await next_of(s.page, "approval-ended")
    assert (ended["requestId"], ended["outcome"]) == (card["request"]["requestId"], "aborted")
    assert copilot.approvals.waiting == 0
    assert s.runs() == []
    s.page.close()


# -- telemetry and logs ----------------------------------------------------------------------


async def test_no_source_output_path_or_call_id_in_events_or_logs(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, person, caplog
) -> None:
    canary = "CANARY-run-9b3f"
    notebook = f"{canary}.ipynb"
    caplog.set_level(logging.DEBUG)
    events: list[dict[str, Any]] = []
    subscription = await jp_ws_fetch("api", "events", "subscribe")
    reader = asyncio.ensure_future(read_events(subscription, events))
    make_notebook(jp_root_dir, notebook, [f"print('{canary}')\n"])
    await start_session(jp_fetch, notebook)
    page = await ScriptedPage.connect(jp_ws_fetch, f"page-{canary}", url=f"lab/tree/{notebook}")
    leak = [{"outputType": "stream", "name": "stdout", "text": f"{canary}\n"}]
    page.respond = lambda r: {**DONE, "outputs": leak} if r["action"] == RUN_INVOKE else None
    await page.send_state(notebook_state(notebook))
    data = {
        "artifactId": copilot.jupyter_server.artifact_id(notebook),
        "cellId": f"cell-{canary}",
        "expectedSourceHash": HASH,
    }
    call = asyncio.ensure_future(run(jp_fetch, data, callId=f"{canary}-call"))
    card = await next_of(page, "approval")
    await decide(*person, card["request"]["requestId"], "allow")
    status, body = await asyncio.wait_for(call, 10)
    assert status == 200 and body["result"]["outputs"] == leak
    assert code_of(await run(jp_fetch, {**data, "artifactId": canary})) == (
        409,
        "artifact-mismatch",
    )
    page.close()
    expected = {
        "edit/invoked/v1",
        "edit/refused/v1",
        "run/finished/v1",
        "approval/requested/v1",
        "approval/ended/v1",
    }
    ours = await our_events(events, expected)
    reader.cancel()
    subscription.close()
    by_schema = {e["schema_id"].split("jupyter_copilot/")[1]: e for e in ours}
    assert {by_schema[s]["operation"] for s in ("edit/invoked/v1", "edit/refused/v1")} == {
        "run-cell"
    }
    finished = by_schema["run/finished/v1"]
    assert (finished["status"], finished["outputCount"], finished["outputsOmitted"]) == (
        "ok",
        1,
        0,
    )
    requested = by_schema["approval/requested/v1"]
    assert (requested["toolName"], requested["callerKind"]) == ("notebook_run_cell", "page")
    assert canary not in json.dumps(ours)
    loud = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO]
    assert loud, "the server logged nothing at INFO: the check would prove nothing"
    assert not [m for m in loud if canary in m]


# -- the pure parts --------------------------------------------------------------------------


RUN_MARKS = [
    ({"jupyter_copilot": {"agent_run": False}}, True),
    ({"jupyter_copilot": {"agent_run": True}}, False),
    ({"jupyter_copilot": {"agent_run": 0}}, False),
    ({"jupyter_copilot": {}}, False),
    ({"jupyter_copilot": False}, False),
    ({"editable": False}, False),
    (None, False),
    ([], False),
]


@pytest.mark.parametrize(("metadata", "locked"), RUN_MARKS)
def test_only_an_explicit_false_mark_locks_a_cell_against_runs(metadata, locked) -> None:
    assert run_locked(metadata) is locked


def test_the_page_reads_the_run_mark_as_the_server_does() -> None:
    script = """
const { runLocked } = await import(LIB + '/run/checks.js');
process.stdout.write(JSON.stringify(input.map(m => runLocked(m))));
"""
    assert run_node(script, [m for m, _ in RUN_MARKS]) == [locked for _, locked in RUN_MARKS]


@pytest.mark.parametrize(
    ("cell", "code"),
    [
        (None, "cell-not-found"),
        (
            {
                "cell_type": "markdown",
                "source": SOURCE,
                "metadata": {"jupyter_copilot": {"agent_run": False}},
            },
            "cell-locked",
        ),
        ({"cell_type": "markdown", "source": SOURCE, "metadata": {}}, "cell-type-mismatch"),
        ({"cell_type": "code", "source": SOURCE + " ", "metadata": {}}, "stale-source"),
        ({"cell_type": "code", "source": [SOURCE], "metadata": {}}, None),
        # An edit lock does not stop a run: the source is not changed by running it.
        ({"cell_type": "code", "source": SOURCE, "metadata": {"editable": False}}, None),
    ],
)
def test_a_live_cell_is_checked_in_the_contracts_order(cell, code) -> None:
    if code is None:
        check_live_run_cell(cell, HASH)
        return
    with pytest.raises(Refusal) as refused:
        check_live_run_cell(cell, HASH)
    assert refused.value.code == code


def test_outputs_are_kept_in_order_while_they_fit_and_the_rest_are_counted() -> None:
    outputs = [{"outputType": "stream", "name": "stdout", "text": str(i) * 40} for i in range(5)]
    whole = run_result({**DONE, "outputs": outputs}, 10_000)
    assert whole["outputs"] == outputs and whole["outputsOmitted"] == 0
    size = len(json.dumps(whole, separators=(",", ":")).encode())
    # Exactly the budget keeps everything; one byte less drops the last output whole.
    assert run_result({**DONE, "outputs": outputs}, size)["outputsOmitted"] == 0
    fewer = run_result({**DONE, "outputs": outputs}, size - 1)
    assert fewer["outputs"] == outputs[:4] and fewer["outputsOmitted"] == 1
    assert len(json.dumps(fewer, separators=(",", ":")).encode()) <= size - 1
    # An output too big to fit stops the list there: later ones are not reordered in.
    big = [outputs[0], {"outputType": "stream", "name": "stdout", "text": "x" * 500}, outputs[1]]
    cut = run_result({**DONE, "outputs": big}, 300)
    assert cut["outputs"] == [outputs[0]] and cut["outputsOmitted"] == 2
    # Non-ASCII text counts in UTF-8 bytes.
    wide = [{"outputType": "stream", "name": "stdout", "text": "é" * 100}]
    assert run_result({**DONE, "outputs": wide}, 150)["outputsOmitted"] == 1
