"""An agent's request to run a cell in real JupyterLab: a run card, then the real kernel.

docs/protocol.md section 11.2: ``notebook_run_cell`` always shows a run card with the cell and
the short form of the hash the agent read; the cell runs, as Shift+Enter would, only after
the person allows it and only if it still holds exactly that source. The result carries
digests of the outputs, never raw HTML or base64.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from tests.conftest import make_notebook
from tests.eventually import eventually
from tests.lab import Lab, lab_page
from tests.server import RUN_INVOKE, call_action, registrations
from tests.test_browser_review import open_notebook, selected_cell

# Real JupyterLab in Chromium: `pytest -m "not browser"` leaves these out.
pytestmark = pytest.mark.browser

CELLS = [
    "x = 21",
    "print('doubled', x * 2)\nx",
    "from IPython.display import HTML, display\ndisplay(HTML('<b>bold-canary-3f1</b>'))\nx / 0",
]


def run_request(jp_fetch: Any, cell: dict[str, Any], call_id: str) -> Any:
    """The agent's call, waiting for the person: a task to await once the card is answered."""
    data = {
        "artifactId": cell["artifactId"],
        "cellId": cell["cellId"],
        "expectedSourceHash": cell["expectedSourceHash"],
    }
    return asyncio.ensure_future(
        call_action(jp_fetch, RUN_INVOKE, {"data": data, "callId": call_id})
    )


def card_of(lab: Lab) -> Any:
    return lab.page.locator(".jp-Copilot-Approval[data-kind='run']")


async def execution_count(lab: Lab, cell_id: str) -> int | None:
    """The cell's execution count in the page's live model."""
    return await lab.page.evaluate(  # type: ignore[no-any-return]
        """cellId => {
            const nb = window.jupyterapp.shell.currentWidget.content;
            for (const cell of nb.model.cells) {
                if (cell.id === cellId) { return cell.executionCount ?? null; }
            }
            return undefined;
        }""",
        cell_id,
    )


async def allow_and_answer(lab: Lab, call: Any) -> tuple[int, dict[str, Any]]:
    card = card_of(lab)
    await card.locator(".jp-Copilot-ApprovalAllow").click()
    answer = await asyncio.wait_for(call, 60)
    await card.wait_for(state="detached")
    return answer  # type: ignore[no-any-return]


async def test_allow_runs_the_cell_in_its_kernel_and_returns_digests_only(
    lab_server, jp_fetch, jp_root_dir
) -> None:
    make_notebook(jp_root_dir, "a.ipynb", CELLS)
    async with lab_page(lab_server) as lab:
        await open_notebook(lab, jp_fetch, "a.ipynb")
        first = await selected_cell(lab, jp_fetch, "a.ipynb", 0)
        call = run_request(jp_fetch, first, "run-0")
        card = card_of(lab)
        await card.wait_for(state="visible")
        # The card names the cell (a link to it) and that it runs what the agent read: never
        # the source, and no hash (hashes are for machines).
        assert await card.locator(".jp-Copilot-ApprovalTarget").inner_text() == (
            "Cell 1 of 3 in a.ipynb"
        )
        line = card.locator(".jp-Copilot-ApprovalSource")
        assert await line.inner_text() == "Runs the cell as the agent read it"
        assert "sha256" not in await card.inner_text()
        assert await line.get_attribute("data-stale") == "false"
        assert "x = 21" not in await card.inner_text()
        # Nothing ran before Allow.
        assert await execution_count(lab, first["cellId"]) is None
        await lab.click_cell("a.ipynb", 2)
        # The target is a link that brings the cell back into view as the active cell.
        await card.locator(".jp-Copilot-ApprovalTarget").click()
        await eventually(
            lambda: _active_index_is(lab, 0), "the card's link to make its cell active"
        )
        shot = await lab.screenshot("copilot-run-card.png")
        assert shot.stat().st_size > 10_000
        status, body = await allow_and_answer(lab, call)
        assert status == 200, body
        result = body["result"]
        assert result == {
            "success": True,
            "executionCount": result["executionCount"],
            "status": "ok",
            "outputs": [],
            "outputsOmitted": 0,
        }
        assert isinstance(result["executionCount"], int)
        # It ran in the notebook's own kernel, as Shift+Enter would: the count is in the cell.
        assert await execution_count(lab, first["cellId"]) == result["executionCount"]

        # The next cell uses the kernel's state: text output as text.
        second = await selected_cell(lab, jp_fetch, "a.ipynb", 1)
        call = run_request(jp_fetch, second, "run-1")
        await card.wait_for(state="visible")
        status, body = await allow_and_answer(lab, call)
        assert body["result"]["status"] == "ok"
        assert body["result"]["outputs"] == [
            {"outputType": "stream", "name": "stdout", "text": "doubled 42\n"},
            {
                "outputType": "execute_result",
                "executionCount": body["result"]["executionCount"],
                "data": {"text/plain": {"text": "21"}},
            },
        ]

        # HTML is a size only, and an exception is its name and value.
        third = await selected_cell(lab, jp_fetch, "a.ipynb", 2)
        call = run_request(jp_fetch, third, "run-2")
        await card.wait_for(state="visible")
        status, body = await allow_and_answer(lab, call)
        result = body["result"]
        assert result["status"] == "error"
        html, error = result["outputs"]
        assert html["outputType"] == "display_data"
        assert html["data"]["text/html"] == {"bytes": len("<b>bold-canary-3f1</b>")}
        assert error == {
            "outputType": "error",
            "ename": "ZeroDivisionError",
            "evalue": "division by zero",
        }
        assert "bold-canary" not in json.dumps(result)
        assert "Traceback" not in json.dumps(result)


async def test_deny_runs_nothing(lab_server, jp_fetch, jp_root_dir) -> None:
    make_notebook(jp_root_dir, "a.ipynb", CELLS)
    async with lab_page(lab_server) as lab:
        await open_notebook(lab, jp_fetch, "a.ipynb")
        cell = await selected_cell(lab, jp_fetch, "a.ipynb", 0)
        call = run_request(jp_fetch, cell, "deny")
        card = card_of(lab)
        await card.locator(".jp-Copilot-ApprovalDeny").click()
        status, body = await asyncio.wait_for(call, 30)
        assert (status, body["error"]["code"]) == (403, "denied")
        await card.wait_for(state="detached")
        assert await execution_count(lab, cell["cellId"]) is None


async def test_a_cell_changed_after_the_agent_read_it_does_not_run(
    lab_server, jp_fetch, jp_root_dir
) -> None:
    make_notebook(jp_root_dir, "a.ipynb", CELLS)
    async with lab_page(lab_server) as lab:
        await open_notebook(lab, jp_fetch, "a.ipynb")
        cell = await selected_cell(lab, jp_fetch, "a.ipynb", 0)
        # The person changes the cell after the agent read it, before the agent asks.
        await lab.page.keyboard.press("End")
        await lab.page.keyboard.type("0")
        call = run_request(jp_fetch, cell, "stale")
        card = card_of(lab)
        line = card.locator(".jp-Copilot-ApprovalSource")
        await line.wait_for(state="visible")
        # The card says so before the person decides.
        assert await line.get_attribute("data-stale") == "true"
        assert "changed since the agent read it" in await line.inner_text()
        status, body = await allow_and_answer(lab, call)
        assert (status, body["error"]["code"]) == (409, "stale-source")
        assert await execution_count(lab, cell["cellId"]) is None


async def test_typing_between_the_card_and_allow_stops_the_run(
    lab_server, jp_fetch, jp_root_dir
) -> None:
    make_notebook(jp_root_dir, "a.ipynb", CELLS)
    async with lab_page(lab_server) as lab:
        await open_notebook(lab, jp_fetch, "a.ipynb")
        cell = await selected_cell(lab, jp_fetch, "a.ipynb", 0)
        call = run_request(jp_fetch, cell, "typed")
        card = card_of(lab)
        line = card.locator(".jp-Copilot-ApprovalSource")
        await line.wait_for(state="visible")
        assert await line.get_attribute("data-stale") == "false"
        # The person types into the cell while the card waits: the card follows at once.
        await lab.click_cell("a.ipynb", 0)
        await lab.page.keyboard.press("End")
        await lab.page.keyboard.type("0")
        await eventually(
            lambda: _attribute_is(line, "data-stale", "true"), "the card to see the change"
        )
        status, body = await allow_and_answer(lab, call)
        assert (status, body["error"]["code"]) == (409, "stale-source")
        assert await execution_count(lab, cell["cellId"]) is None
        # What the person typed is still there, untouched.
        source = await lab.page.evaluate(
            "() => window.jupyterapp.shell.currentWidget.content.model.cells.get(0)"
            ".sharedModel.getSource()"
        )
        assert source == "x = 210"


async def test_a_cell_marked_never_to_be_run_by_an_agent_does_not_run(
    lab_server, jp_fetch, jp_root_dir
) -> None:
    make_notebook(jp_root_dir, "a.ipynb", CELLS)
    async with lab_page(lab_server) as lab:
        await open_notebook(lab, jp_fetch, "a.ipynb")
        cell = await selected_cell(lab, jp_fetch, "a.ipynb", 0)
        await lab.page.evaluate(
            """() => window.jupyterapp.shell.currentWidget.content.model.cells.get(0)
                .sharedModel.setMetadata('jupyter_copilot', {agent_run: false})"""
        )
        call = run_request(jp_fetch, cell, "locked")
        line = card_of(lab).locator(".jp-Copilot-ApprovalSource")
        await line.wait_for(state="visible")
        assert "never to be run by an agent" in await line.inner_text()
        status, body = await allow_and_answer(lab, call)
        assert (status, body["error"]["code"]) == (403, "cell-locked")
        assert await execution_count(lab, cell["cellId"]) is None


async def page_without_kernel(lab: Lab, jp_fetch: Any, path: str) -> None:
    """The page's own kernel is shut down and the notebook's session is made again on the
    server alone: the run tool stays registered while the page holds no kernel, so the
    page must start one before it can run the cell."""
    await lab.page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")
    for session in json.loads((await jp_fetch("api", "sessions")).body):
        if session["path"] == path:
            await jp_fetch("api", "sessions", session["id"], method="DELETE")

    async def unregistered() -> bool:
        return not any(r["path"] == path for r in await registrations(jp_fetch))

    await eventually(unregistered, "the notebook's sessions to end", timeout=30)
    body = {"path": path, "name": path, "type": "notebook", "kernel": {"name": "python3"}}
    await jp_fetch("api", "sessions", method="POST", body=json.dumps(body))

    async def registered() -> bool:
        return any(r["path"] == path for r in await registrations(jp_fetch))

    await eventually(registered, "the server's session", timeout=30)
    assert await lab.page.evaluate(
        "() => !window.jupyterapp.shell.currentWidget.sessionContext.session"
    )


async def hold_kernel_start(lab: Lab) -> tuple[asyncio.Event, asyncio.Event]:
    """Hold the page's start of a kernel session: the first event is set once the page asked
    for one, and the request goes on once the test sets the second."""
    asked, go_on = asyncio.Event(), asyncio.Event()

    async def hold(route: Any) -> None:
        if route.request.method == "POST":
            asked.set()
            await asyncio.wait_for(go_on.wait(), 60)
        await route.continue_()

    await lab.page.route("**/api/sessions*", hold)
    return asked, go_on


async def test_a_cell_changed_while_its_kernel_starts_does_not_run(
    lab_server, jp_fetch, jp_root_dir
) -> None:
    # The page checks the source only once the kernel is there, and runs exactly what it
    # checked in the same synchronous step (docs/protocol.md section 11.2).
    make_notebook(jp_root_dir, "a.ipynb", CELLS)
    side_effect = jp_root_dir / "ran-after-the-check.txt"
    async with lab_page(lab_server) as lab:
        await open_notebook(lab, jp_fetch, "a.ipynb")
        cell = await selected_cell(lab, jp_fetch, "a.ipynb", 0)
        await page_without_kernel(lab, jp_fetch, "a.ipynb")
        asked, go_on = await hold_kernel_start(lab)
        call = run_request(jp_fetch, cell, "cold-stale")
        await card_of(lab).locator(".jp-Copilot-ApprovalAllow").click()
        # Allowed, checked once, and the page is starting the kernel: now the cell changes.
        await asyncio.wait_for(asked.wait(), 30)
        await lab.page.evaluate(
            """source => window.jupyterapp.shell.currentWidget.content.model.cells.get(0)
                .sharedModel.setSource(source)""",
            f"open({side_effect.name!r}, 'w').write('ran')",
        )
        go_on.set()
        status, body = await asyncio.wait_for(call, 60)
        assert (status, body.get("error", {}).get("code")) == (409, "stale-source"), body
        # The kernel did start, and nothing ran in it.
        await eventually(
            lambda: lab.page.evaluate(
                "() => !!window.jupyterapp.shell.currentWidget.sessionContext.session?.kernel"
            ),
            "the page's kernel",
        )
        assert await execution_count(lab, cell["cellId"]) is None
        await asyncio.sleep(1)
        assert not side_effect.exists()

        # Left alone, a run allowed while no kernel runs starts the kernel and runs.
        await lab.page.unroute("**/api/sessions*")
        second = await selected_cell(lab, jp_fetch, "a.ipynb", 1)
        await page_without_kernel(lab, jp_fetch, "a.ipynb")
        call = run_request(jp_fetch, second, "cold-ok")
        await card_of(lab).wait_for(state="visible")
        status, body = await allow_and_answer(lab, call)
        assert status == 200, body
        assert body["result"]["status"] == "error"  # x is not defined in the new kernel
        assert isinstance(body["result"]["executionCount"], int)
        assert await execution_count(lab, second["cellId"]) == body["result"]["executionCount"]
        assert not side_effect.exists()


async def _active_index_is(lab: Lab, index: int) -> bool:
    active = await lab.page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.content.activeCellIndex"
    )
    return bool(active == index)


async def _attribute_is(locator: Any, name: str, value: str) -> bool:
    return bool(await locator.get_attribute(name) == value)
