"""``notebook_run_cell``'s own checks, card and result (docs/protocol.md section 11.2).

The order it shares with edit and insert is in test_check_order.py.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from jupyter_copilot.protocol.callers import AUTOPILOT, INTERACTIVE
from jupyter_copilot.protocol.refusals import Refusal
from jupyter_copilot.tools.run_tool import run_result
from tests.unit.scene import RUN_CELL, Scene, caller


def run_input(scene: Scene, cell_id: str = "c1") -> dict[str, Any]:
    notebook = scene.browser.notebook
    assert notebook is not None
    return {
        "artifactId": "nb-a",
        "cellId": cell_id,
        "expectedSourceHash": notebook.cell(cell_id).hash,
    }


async def run(scene: Scene, data: dict[str, Any], mode: str = AUTOPILOT, **kw: Any) -> Any:
    return await scene.tools[RUN_CELL.name].invoke(caller(mode), data, **kw)


async def refused(scene: Scene, data: dict[str, Any]) -> str:
    with pytest.raises(Refusal) as err:
        await run(scene, data)
    assert scene.requests() == []
    return err.value.code


@pytest.mark.parametrize("mode", [AUTOPILOT, INTERACTIVE])
async def test_every_run_asks_with_a_run_card_that_carries_no_source(
    scene: Scene, mode: str
) -> None:
    data = run_input(scene)
    result = await run(scene, data, mode)
    assert result == {
        "success": True,
        "executionCount": 1,
        "status": "ok",
        "outputs": [],
        "outputsOmitted": 0,
    }
    (card,) = scene.cards()
    request = card["request"]
    assert (request["toolName"], request["kind"]) == (RUN_CELL.name, "run")
    assert request["details"] == data
    kinds = scene.browser.kinds()
    assert kinds.index("approval") < kinds.index("request")


async def test_a_denied_card_ends_denied_and_nothing_runs(scene: Scene) -> None:
    scene.browser.approve = False
    assert await refused(scene, run_input(scene)) == "denied"
    assert len(scene.cards()) == 1


async def test_every_check_runs_again_once_the_person_allows(scene: Scene) -> None:
    notebook = scene.collaborate()
    scene.browser.approve = None
    call = asyncio.ensure_future(run(scene, run_input(scene)))
    while not scene.cards():
        await asyncio.sleep(0)
    # The cell changes while the card waits; then the person allows.
    notebook.cell("c1").source = "import os\n"
    scene.approvals.decide(scene.cards()[0]["request"]["requestId"], "owner", allow=True)
    with pytest.raises(Refusal) as err:
        await call
    assert err.value.code == "stale-source"
    assert scene.requests() == []


async def test_the_kill_switch_engaged_while_the_card_waits_stops_the_run(scene: Scene) -> None:
    scene.browser.approve = None
    call = asyncio.ensure_future(run(scene, run_input(scene)))
    while not scene.cards():
        await asyncio.sleep(0)
    scene.engage_kill_switch()
    scene.approvals.decide(scene.cards()[0]["request"]["requestId"], "owner", allow=True)
    with pytest.raises(Refusal) as err:
        await call
    assert err.value.code == "kill-switch"
    assert scene.requests() == []


async def test_a_server_that_never_runs_cells_refuses_before_any_card(scene: Scene) -> None:
    scene.run_policy = "never"
    assert await refused(scene, run_input(scene)) == "not-permitted"
    assert scene.cards() == []


async def test_only_code_cells_not_marked_against_runs_are_run(scene: Scene) -> None:
    notebook = scene.collaborate()
    assert await refused(scene, run_input(scene, "c2")) == "cell-type-mismatch"
    notebook.cell("c3").metadata["jupyter_copilot"] = {"agent_run": False}
    assert await refused(scene, run_input(scene, "c3")) == "cell-locked"
    assert scene.cards() == []


async def test_an_edit_lock_does_not_stop_a_run(scene: Scene) -> None:
    notebook = scene.collaborate()
    notebook.cell("c1").metadata["editable"] = False
    assert (await run(scene, run_input(scene)))["success"] is True


async def test_a_repeated_call_id_never_runs_the_cell_twice(scene: Scene) -> None:
    data = run_input(scene)
    first = await run(scene, data, call_id="call-1")
    assert await run(scene, data, call_id="call-1") == first
    assert len(scene.requests()) == 1 and len(scene.cards()) == 1


async def test_a_page_answer_of_another_shape_is_page_error(scene: Scene) -> None:
    scene.browser.run_answer = {"executionCount": 1, "status": "done", "outputs": []}
    with pytest.raises(Refusal) as err:
        await run(scene, run_input(scene))
    assert err.value.code == "page-error"


def test_outputs_are_kept_in_order_while_they_fit_and_the_rest_are_counted() -> None:
    outputs = [{"outputType": "stream", "name": "stdout", "text": "x" * 40} for _ in range(5)]
    answer = {"executionCount": 3, "status": "ok", "outputs": outputs}
    whole = run_result(answer, 10_000)
    assert (len(whole["outputs"]), whole["outputsOmitted"]) == (5, 0)
    some = run_result(answer, 300)
    kept = len(some["outputs"])
    assert 0 < kept < 5 and some["outputsOmitted"] == 5 - kept
    assert some["outputs"] == outputs[:kept]


async def test_an_abort_while_the_card_waits_ends_the_card_and_nothing_runs(
    scene: Scene,
) -> None:
    scene.browser.approve = None
    call = asyncio.ensure_future(run(scene, run_input(scene), call_id="call-1"))
    while not scene.cards():
        await asyncio.sleep(0)
    assert await scene.tools[RUN_CELL.name].abort({"callId": "call-1"}) == {"aborted": True}
    with pytest.raises(Refusal) as err:
        await call
    assert err.value.code == "aborted"
    ended = [m for m in scene.browser.received if m["type"] == "approval-ended"]
    assert [m["outcome"] for m in ended] == ["aborted"]
    assert [r for r in scene.requests() if r["action"] == RUN_CELL.invoke_action] == []
