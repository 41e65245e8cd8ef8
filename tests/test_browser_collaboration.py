"""The review under real-time collaboration: two people, one notebook, one shared document."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_notebook
from tests.eventually import eventually
from tests.lab import (
    Lab,
    collaboration_labextensions_dir,
    lab_page,
    lab_server_config,
)
from tests.pages import get_context
from tests.server import INVOKE, call_action
from tests.test_browser_review import (
    CELLS,
    NEW,
    OLD,
    decisions,
    model_source,
    open_notebook,
    proposal,
    review_of,
)

# Real JupyterLab in Chromium: `pytest -m "not browser"` leaves these out.
pytestmark = pytest.mark.browser


@pytest.fixture
def jp_server_config(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> dict[str, Any]:
    config = lab_server_config(tmp_path, tmp_path_factory.getbasetemp(), {})
    config["ServerApp"]["jpserver_extensions"]["jupyter_server_ydoc"] = True
    shared = collaboration_labextensions_dir(tmp_path_factory.getbasetemp())
    config["LabApp"]["extra_labextensions_path"].append(str(shared))
    config["SQLiteYStore"] = {"db_path": str(tmp_path / "ystore.db")}
    # Rooms opened from the server side build their store without the server's config.
    monkeypatch.chdir(tmp_path)
    return config


async def served_cell(lab: Lab, jp_fetch: Any, index: int, source: str) -> dict[str, Any]:
    """Click a cell in one person's page and read it as that page's agent would."""
    await lab.click_cell("a.ipynb", index)
    page_id = await lab.page_id()

    async def served() -> dict[str, Any] | None:
        entries = await get_context(jp_fetch, page_id)
        cells = [e for e in entries if e["name"] == "notebook_selected_cell"]
        if cells and cells[0]["value"].get("source") == source:
            return cells[0]["value"]  # type: ignore[no-any-return]
        return None

    return await eventually(served, "the served cell")  # type: ignore[no-any-return]


async def test_a_collaborators_typing_makes_keep_refuse_and_a_kept_edit_reaches_everyone(
    lab_server, jp_fetch, jp_root_dir
) -> None:
    make_notebook(jp_root_dir, "a.ipynb", CELLS)
    async with lab_page(lab_server) as alice, lab_page(lab_server) as bob:
        await open_notebook(alice, jp_fetch, "a.ipynb")
        await open_notebook(bob, jp_fetch, "a.ipynb")
        for person in (alice, bob):
            assert await person.page.evaluate(
                "() => window.jupyterapp.shell.currentWidget.context.model.collaborative"
            ), "the notebook did not open in collaborative mode"
        cell = await served_cell(alice, jp_fetch, 1, OLD)
        body = {"data": proposal(cell), "callId": "shared", "pageId": await alice.page_id()}
        status, answer = await call_action(jp_fetch, INVOKE, body)
        assert status == 200, answer
        review = review_of(alice, "shared")
        await review.wait_for(state="visible")
        # Bob never sees Alice's review, and types into the same cell.
        assert await bob.page.locator(".jp-Copilot-Review").count() == 0
        await bob.click_cell("a.ipynb", 1)
        await bob.page.keyboard.press("Control+End")
        await bob.page.keyboard.type("# bob was here")
        typed = OLD + "# bob was here"

        async def alice_sees_it() -> bool:
            return await model_source(alice, cell["cellId"]) == typed

        await eventually(alice_sees_it, "Bob's typing in Alice's notebook")
        await review.locator(".jp-Copilot-ReviewKeep").click()

        async def conflict() -> bool:
            return "conflict" in await decisions(alice, "shared")

        await eventually(conflict, "the conflict")
        assert await model_source(alice, cell["cellId"]) == typed
        assert await model_source(bob, cell["cellId"]) == typed

        # A fresh read and a kept proposal reach Bob through the shared document.
        fresh = await served_cell(alice, jp_fetch, 1, typed)
        body = {"data": proposal(fresh), "callId": "kept", "pageId": await alice.page_id()}
        assert (await call_action(jp_fetch, INVOKE, body))[0] == 200
        kept = review_of(alice, "kept")
        await kept.locator(".jp-Copilot-ReviewKeep").click()
        await kept.wait_for(state="detached")

        async def bob_sees_it() -> bool:
            return await model_source(bob, cell["cellId"]) == NEW

        await eventually(bob_sees_it, "the kept edit in Bob's notebook")
        assert await decisions(alice, "kept") == ["keep"]
