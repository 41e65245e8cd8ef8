"""Which page answers a call, and what get-context serves (docs/protocol.md sections 4 and 4.1).

Built in-process from the scene (tests/unit/scene.py): the real dispatcher, page sessions
and notebook reader, with pages that speak the bridge.
"""

from __future__ import annotations

import pytest

from jupyter_copilot.page.context import source_hash
from jupyter_copilot.protocol.refusals import Refusal
from tests.unit.scene import Browser, Cell, Notebook, Scene, caller


def refused(call) -> tuple[int, str]:
    """The status and code a synchronous call refuses with."""
    with pytest.raises(Refusal) as err:
        call()
    return err.value.status, err.value.code


async def refused_async(awaitable) -> tuple[int, str]:
    """The status and code an awaited call refuses with."""
    with pytest.raises(Refusal) as err:
        await awaitable
    return err.value.status, err.value.code


def selected_source(entries: list[dict]) -> str:
    return entries[1]["value"]["source"]  # type: ignore[no-any-return]


# -- resolution ------------------------------------------------------------------------------


async def test_no_page_connected_refuses_with_no_active_page_and_serves_no_context(
    scene: Scene,
) -> None:
    scene.browser.close()
    assert refused(scene.dispatcher.resolve) == (404, "no-active-page")
    assert refused(scene.dispatcher.active_notebook) == (404, "no-active-page")
    assert await scene.reader.context(caller()) == []


async def test_a_single_page_answers_even_if_it_never_reported_focus(scene: Scene) -> None:
    assert scene.browser.session.focused_at is None
    assert scene.dispatcher.resolve() is scene.browser.session
    assert selected_source(await scene.reader.context(caller())) == "x = 1\n"


async def test_two_pages_that_never_had_focus_are_ambiguous_and_neither_is_asked(
    scene: Scene,
) -> None:
    other = scene.connect("page-b", Notebook("b.ipynb"))
    assert refused(scene.dispatcher.resolve) == (409, "ambiguous-active-notebook")
    assert await refused_async(scene.reader.context(caller())) == (
        409,
        "ambiguous-active-notebook",
    )
    assert scene.browser.requests == [] and other.requests == []


async def test_the_page_that_reported_focus_latest_answers(scene: Scene) -> None:
    scene.connect("page-b", Notebook("b.ipynb", cells=[Cell("c1", "b = 2\n")]))
    other = scene.browsers[-1]
    scene.browser.report(focused=True)
    assert selected_source(await scene.reader.context(caller())) == "x = 1\n"
    other.report(focused=True)
    # Losing focus later does not hand the call back: the latest focus wins.
    scene.browser.report(focused=False)
    assert scene.dispatcher.resolve() is other.session
    assert selected_source(await scene.reader.context(caller())) == "b = 2\n"
    scene.browser.report(focused=True)
    assert scene.dispatcher.resolve() is scene.browser.session


async def test_a_page_id_picks_its_page_and_an_unknown_one_is_no_active_page(
    scene: Scene,
) -> None:
    other = scene.connect("page-b", Notebook("b.ipynb"))
    scene.browser.report(focused=True)
    assert scene.dispatcher.resolve("page-b") is other.session
    assert refused(lambda: scene.dispatcher.resolve("page-z")) == (404, "no-active-page")
    assert await refused_async(scene.reader.context(caller(), "page-z")) == (
        404,
        "no-active-page",
    )


async def test_a_closed_page_is_never_picked_even_if_it_had_focus(scene: Scene) -> None:
    other = scene.connect("page-b", Notebook("b.ipynb"))
    other.report(focused=True)
    other.close()
    assert scene.dispatcher.pages() == [scene.browser.session]
    assert scene.dispatcher.resolve() is scene.browser.session
    assert refused(lambda: scene.dispatcher.resolve("page-b")) == (404, "no-active-page")


async def test_a_page_that_reconnects_replaces_its_stale_link(scene: Scene) -> None:
    stale = scene.browser
    fresh = scene.connect("page-a", Notebook())
    assert stale.session.closed
    assert scene.dispatcher.pages() == [fresh.session]
    # The stale link going away later does not forget the page's new one.
    stale.close()
    assert scene.dispatcher.resolve("page-a") is fresh.session


async def test_a_page_that_has_not_said_hello_is_not_connected(scene: Scene) -> None:
    scene.browser.close()
    silent = Browser(scene, "page-q", Notebook())
    silent.report(focused=True)
    assert silent.received[-1]["code"] == "invalid-message"
    assert refused(scene.dispatcher.resolve) == (404, "no-active-page")


async def test_a_tab_that_is_not_a_notebook_in_its_editing_view_is_not_authoring_view(
    scene: Scene,
) -> None:
    scene.notebook.view_type = "json"
    scene.browser.report()
    assert refused(scene.dispatcher.active_notebook) == (409, "not-authoring-view")
    scene.browser.notebook = None
    scene.browser.report()
    assert refused(scene.dispatcher.active_notebook) == (409, "not-authoring-view")
    assert await scene.reader.context(caller()) == []


async def test_the_active_notebook_follows_the_page_s_latest_state(scene: Scene) -> None:
    page, active = scene.dispatcher.active_notebook()
    assert (page, active["path"]) == (scene.browser.session, "a.ipynb")
    scene.browser.notebook = Notebook("b.ipynb")
    scene.browser.report()
    assert scene.dispatcher.active_notebook()[1]["path"] == "b.ipynb"
    assert scene.dispatcher.active_language() == "python"


def test_a_repeated_state_is_counted_as_deduplicated_and_changes_nothing(scene: Scene) -> None:
    counts = scene.browser.session.counts
    before = (counts.received, counts.deduplicated)
    scene.browser.report()
    assert (counts.received, counts.deduplicated) == (before[0] + 1, before[1] + 1)


# -- what get-context serves -----------------------------------------------------------------


async def test_context_carries_the_file_id_the_pill_source_and_its_hash(scene: Scene) -> None:
    view, selected = await scene.reader.context(caller())
    assert view["value"] == {
        "artifactId": "nb-a",
        "viewType": "notebook",
        "permissionMode": "edit",
        "selectedCellCount": 1,
        "kernelLanguage": "python",
    }
    value = selected["value"]
    assert (value["artifactId"], value["cellId"], value["cellType"]) == ("nb-a", "c1", "code")
    assert value["source"] == "x = 1\n"
    assert value["expectedSourceHash"] == source_hash("x = 1\n")
    assert selected["reference"]["label"] == "Selected python cell"
    # The context is read at call time, from the page's live model.
    scene.notebook.cell("c1").source = "x = 2\n"
    value = (await scene.reader.context(caller()))[1]["value"]
    assert value["expectedSourceHash"] == source_hash("x = 2\n")


@pytest.mark.parametrize(
    ("page_writable", "may_write", "mode"),
    [(True, True, "edit"), (False, True, "read-only"), (True, False, "read-only")],
)
async def test_permission_mode_is_edit_only_when_the_page_and_the_authorizer_allow_it(
    scene: Scene, page_writable: bool, may_write: bool, mode: str
) -> None:
    scene.notebook.writable = page_writable
    entries = await scene.reader.context(caller(may_write=may_write))
    assert entries[0]["value"]["permissionMode"] == mode


async def test_no_pill_unless_exactly_one_cell_is_selected(scene: Scene) -> None:
    scene.notebook.selected = ["c1", "c3"]
    entries = await scene.reader.context(caller())
    assert [e["name"] for e in entries] == ["notebook_view_state"]
    assert entries[0]["value"]["selectedCellCount"] == 2


async def test_a_notebook_the_file_id_index_does_not_know_gets_no_context(scene: Scene) -> None:
    del scene.file_ids["a.ipynb"]
    assert await scene.reader.context(caller()) == []


async def test_a_pill_over_the_budget_is_sent_without_source_and_hash(scene: Scene) -> None:
    scene.settings["context_budget_bytes"] = 600
    scene.notebook.cell("c1").source = "y" * 700
    selected = (await scene.reader.context(caller()))[1]
    assert "source" not in selected["value"] and "expectedSourceHash" not in selected["value"]
    assert selected["omitted"] == {"reason": "over-budget", "sourceBytes": 700, "budgetBytes": 600}


async def test_a_served_pill_remembers_its_cell_type_for_the_edit(scene: Scene) -> None:
    await scene.reader.context(caller())
    assert scene.served.type_of("nb-a", "c1", scene.notebook.cell("c1").hash) == "code"


# -- a page that does not answer -------------------------------------------------------------


async def test_a_page_that_does_not_answer_in_time_is_timeout(scene: Scene) -> None:
    scene.settings["page_timeout_seconds"] = 0.01
    scene.browser.respond = lambda request: None
    assert await refused_async(scene.reader.context(caller())) == (504, "timeout")
    assert scene.browser.session.pending_count == 0


async def test_a_page_that_closes_while_asked_fails_the_request_with_timeout(
    scene: Scene,
) -> None:
    scene.browser.respond = lambda request: scene.browser.close()
    assert await refused_async(scene.reader.context(caller())) == (504, "timeout")


async def test_a_page_answering_with_a_code_not_its_own_is_page_error(scene: Scene) -> None:
    browser = scene.browser

    def answer(request: dict) -> None:
        error = {"code": "kill-switch", "message": "not the page's to say"}
        browser.send(
            {"type": "result", "requestId": request["requestId"], "ok": False, "error": error}
        )

    browser.respond = answer
    assert await refused_async(scene.reader.context(caller())) == (502, "page-error")
