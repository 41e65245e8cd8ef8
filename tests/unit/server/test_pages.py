"""A page's bridge session from hello to close: Keep verdicts, decisions, and what a closing
page ends (docs/protocol.md sections 6 and 9), for both tools whose page opens a review."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from jupyter_copilot.protocol.refusals import Refusal
from tests.unit.scene import EDIT_CELL, INSERT_CELL, RUN_CELL, Browser, Scene, caller


def review_input(tool: str, scene: Scene) -> dict[str, Any]:
    if tool == INSERT_CELL.name:
        return {"artifactId": "nb-a", "afterCellId": "c1", "cellType": "code", "source": "y\n"}
    notebook = scene.browser.notebook
    assert notebook is not None
    hash_ = notebook.cell("c1").hash
    return {"artifactId": "nb-a", "cellId": "c1", "expectedSourceHash": hash_, "newSource": "y\n"}


REVIEWING = pytest.mark.parametrize("tool", [EDIT_CELL.name, INSERT_CELL.name])


async def open_review(scene: Scene, tool: str, call_id: str = "call-1") -> None:
    await scene.tools[tool].invoke(caller(), review_input(tool, scene), call_id=call_id)


def keep(browser: Browser, call_id: str = "call-1") -> dict[str, Any]:
    """The page presses Keep and gets the server's verdict."""
    browser.send({"type": "keep", "callId": call_id})
    verdict = browser.received[-1]
    assert verdict["type"] == "keep-verdict" and verdict["callId"] == call_id
    return verdict


@REVIEWING
async def test_keep_is_allowed_for_an_open_review(scene: Scene, tool: str) -> None:
    await open_review(scene, tool)
    assert keep(scene.browser) == {"type": "keep-verdict", "callId": "call-1", "ok": True}


@REVIEWING
async def test_keep_is_refused_once_the_kill_switch_is_engaged(scene: Scene, tool: str) -> None:
    await open_review(scene, tool)
    scene.engage_kill_switch()
    assert keep(scene.browser)["code"] == "kill-switch"


@REVIEWING
async def test_keep_is_refused_when_the_feature_switch_is_off(scene: Scene, tool: str) -> None:
    await open_review(scene, tool)
    scene.enabled = False
    assert keep(scene.browser)["code"] == "feature-disabled"


@REVIEWING
async def test_keep_is_refused_once_the_kernel_session_ended(scene: Scene, tool: str) -> None:
    await open_review(scene, tool)
    scene.registrations.kernel_removed("k-a.ipynb")
    assert keep(scene.browser)["code"] == "no-active-session"


@REVIEWING
async def test_keep_after_an_abort_or_a_decision_is_aborted(scene: Scene, tool: str) -> None:
    await open_review(scene, tool)
    assert await scene.tools[tool].abort({"callId": "call-1"}) == {"aborted": True}
    assert keep(scene.browser)["code"] == "aborted"
    await open_review(scene, tool, "call-2")
    scene.browser.send({"type": "review", "callId": "call-2", "decision": "undo"})
    assert keep(scene.browser, "call-2")["code"] == "aborted"


@REVIEWING
async def test_keep_from_another_page_or_for_an_unknown_call_is_aborted(
    scene: Scene, tool: str
) -> None:
    other = scene.connect("page-b")
    scene.browser.report(focused=True)
    await open_review(scene, tool)
    assert keep(other)["code"] == "aborted"
    assert keep(scene.browser, "call-9")["code"] == "aborted"


@REVIEWING
async def test_a_closing_page_withdraws_its_open_reviews(scene: Scene, tool: str) -> None:
    await open_review(scene, tool)
    call = scene.tools[tool].calls.get("call-1")
    assert call is not None and call.review_open
    scene.browser.close()
    assert call.decision == "withdrawn"
    # Gone for good: the abort that follows finds nothing to withdraw.
    assert await scene.tools[tool].abort({"callId": "call-1"}) == {"aborted": False}


async def test_a_closing_page_fails_its_pending_request_and_dismisses_its_cards(
    scene: Scene,
) -> None:
    scene.browser.approve = None
    notebook = scene.browser.notebook
    assert notebook is not None
    data = {"artifactId": "nb-a", "cellId": "c1", "expectedSourceHash": notebook.cell("c1").hash}
    call = asyncio.ensure_future(scene.tools[RUN_CELL.name].invoke(caller(), data))
    while not scene.cards():
        await asyncio.sleep(0)
    scene.browser.close()
    with pytest.raises(Refusal) as err:
        await call
    assert err.value.code == "denied"
    assert scene.approvals.waiting == 0
    assert scene.requests() == []


def test_hello_is_welcomed_with_the_switches_and_budgets(scene: Scene) -> None:
    welcome = next(m for m in scene.browser.received if m["type"] == "welcome")
    assert welcome["pageId"] == "page-a" and welcome["toolsEnabled"] is True
    assert welcome["budgetBytes"] == scene.settings["context_budget_bytes"]
    scene.engage_kill_switch()
    fresh = scene.connect("page-b")
    assert next(m for m in fresh.received if m["type"] == "welcome")["toolsEnabled"] is False


@pytest.mark.parametrize(
    "text",
    ["not json", '{"no": "type"}', '{"type": "nonsense"}', '{"type": "state"}'],
    ids=["not-json", "no-type", "unknown-type", "malformed-state"],
)
def test_a_bad_message_is_answered_with_invalid_message_and_changes_nothing(
    scene: Scene, text: str
) -> None:
    state = scene.browser.session.state
    scene.browser.session.receive(text)
    assert scene.browser.received[-1]["code"] == "invalid-message"
    assert scene.browser.session.state == state
    assert scene.dispatcher.pages() == [scene.browser.session]
