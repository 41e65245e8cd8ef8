"""Which page answers: pageId, focus, a single page, ambiguity; and get-context over REST."""

from __future__ import annotations

import json
import logging

import pytest
from tornado.httpclient import HTTPClientError

from jupyter_copilot.page.context import source_hash
from tests.conftest import make_notebook
from tests.eventually import eventually
from tests.pages import ScriptedPage, context_answer, get_context, notebook_state


async def refused(jp_fetch, page_id: str | None = None) -> tuple[int, str]:
    with pytest.raises(HTTPClientError) as err:
        await get_context(jp_fetch, page_id)
    return err.value.code, json.loads(err.value.response.body)["error"]["code"]


async def two_pages(jp_ws_fetch):
    a = await ScriptedPage.connect(jp_ws_fetch, "page-a", "lab/tree/a.ipynb")
    b = await ScriptedPage.connect(jp_ws_fetch, "page-b", "lab/tree/b.ipynb")
    a.respond = lambda request: context_answer("a.ipynb", "a = 1")
    b.respond = lambda request: context_answer("b.ipynb", "b = 2")
    return a, b


def served_source(entries) -> str:
    return entries[1]["value"]["source"]


async def test_a_single_page_answers_even_if_it_never_reported_focus(
    jp_ws_fetch, jp_fetch, jp_root_dir
) -> None:
    make_notebook(jp_root_dir, "a.ipynb", ["a = 1"])
    page = await ScriptedPage.connect(jp_ws_fetch, "only")
    page.respond = lambda request: context_answer("a.ipynb", "a = 1")
    assert served_source(await get_context(jp_fetch)) == "a = 1"
    page.close()


async def test_several_pages_none_focused_is_ambiguous(jp_ws_fetch, jp_fetch, jp_root_dir) -> None:
    a, b = await two_pages(jp_ws_fetch)
    assert await refused(jp_fetch) == (409, "ambiguous-active-notebook")
    assert a.requests == [] and b.requests == []
    a.close(), b.close()


async def test_the_most_recently_focused_page_answers(jp_ws_fetch, jp_fetch, jp_root_dir) -> None:
    for name in ("a.ipynb", "b.ipynb"):
        make_notebook(jp_root_dir, name, ["x"])
    a, b = await two_pages(jp_ws_fetch)
    await a.send_state(notebook_state("a.ipynb", focused=True))
    assert served_source(await get_context(jp_fetch)) == "a = 1"
    await b.send_state(notebook_state("b.ipynb", focused=True))
    await a.send_state(notebook_state("a.ipynb", focused=False))
    assert served_source(await get_context(jp_fetch)) == "b = 2"
    # Losing focus does not move the choice: the person last looked at b.
    await b.send_state(notebook_state("b.ipynb", focused=False))
    assert served_source(await get_context(jp_fetch)) == "b = 2"
    a.close(), b.close()


async def test_page_id_picks_the_page(jp_ws_fetch, jp_fetch, jp_root_dir) -> None:
    for name in ("a.ipynb", "b.ipynb"):
        make_notebook(jp_root_dir, name, ["x"])
    a, b = await two_pages(jp_ws_fetch)
    await a.send_state(notebook_state("a.ipynb", focused=True))
    assert served_source(await get_context(jp_fetch, "page-b")) == "b = 2"
    assert await refused(jp_fetch, "page-gone") == (404, "no-active-page")
    a.close(), b.close()


async def test_a_page_that_left_is_never_picked(
    jp_ws_fetch, jp_fetch, jp_root_dir, copilot
) -> None:
    make_notebook(jp_root_dir, "b.ipynb", ["x"])
    a, b = await two_pages(jp_ws_fetch)
    await a.send_state(notebook_state("a.ipynb", focused=True))
    a.close()
    await eventually(lambda: len(copilot.dispatcher.pages()) == 1, "page a to be gone", 5)
    assert [p.page_id for p in copilot.dispatcher.pages()] == ["page-b"]
    assert served_source(await get_context(jp_fetch)) == "b = 2"
    b.close()


async def test_context_carries_the_file_id_and_the_hash(
    jp_ws_fetch, jp_fetch, jp_root_dir, jp_serverapp
) -> None:
    make_notebook(jp_root_dir, "dir/a.ipynb", ["saved"])
    page = await ScriptedPage.connect(jp_ws_fetch)
    page.respond = lambda request: context_answer("dir/a.ipynb", "unsaved edit\r\n🐍")
    view, cell = await get_context(jp_fetch)
    file_id = jp_serverapp.web_app.settings["file_id_manager"].get_id("dir/a.ipynb")
    assert file_id and view["value"]["artifactId"] == file_id
    assert cell["value"]["artifactId"] == file_id
    assert cell["value"]["source"] == "unsaved edit\r\n🐍"
    assert cell["value"]["expectedSourceHash"] == source_hash("unsaved edit\r\n🐍")
    # The same notebook keeps its id on the next call.
    assert (await get_context(jp_fetch))[0]["value"]["artifactId"] == file_id
    page.close()


async def test_a_page_without_an_active_notebook_gives_no_context(jp_ws_fetch, jp_fetch) -> None:
    page = await ScriptedPage.connect(jp_ws_fetch)
    page.respond = lambda request: {"activeNotebook": None}
    assert await get_context(jp_fetch) == []
    page.close()


class TestSmallBudget:
    @pytest.fixture
    def copilot_config(self):
        return {"context_budget_bytes": 1024}

    async def test_a_cell_over_the_budget_is_omitted_whole(
        self, jp_ws_fetch, jp_fetch, jp_root_dir
    ) -> None:
        make_notebook(jp_root_dir, "a.ipynb", ["x"])
        page = await ScriptedPage.connect(jp_ws_fetch)
        assert page.welcome["budgetBytes"] == 1024
        page.respond = lambda request: context_answer("a.ipynb", "z" * 2000)
        view, cell = await get_context(jp_fetch)
        assert cell["omitted"] == {
            "reason": "over-budget",
            "sourceBytes": 2000,
            "budgetBytes": 1024,
        }
        assert "source" not in cell["value"] and "expectedSourceHash" not in cell["value"]
        page.close()


async def test_events_carry_no_content(jp_ws_fetch, jp_fetch, jp_root_dir, jp_serverapp) -> None:
    records: list[dict] = []

    class Capture(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(
                json.loads(record.getMessage()) if isinstance(record.msg, str) else dict(record.msg)
            )

    jp_serverapp.event_logger.register_handler(Capture())
    make_notebook(jp_root_dir, "secret-name.ipynb", ["x"])
    page = await ScriptedPage.connect(jp_ws_fetch, "client-chosen-id")
    page.respond = lambda request: context_answer("secret-name.ipynb", "TOP_SECRET = 42")
    await page.send_state(notebook_state("secret-name.ipynb"))
    await page.send_state(notebook_state("secret-name.ipynb"))
    await get_context(jp_fetch)
    served = [r for r in records if r["__schema__"].endswith("context/served/v1")]
    refresh = [r for r in records if r["__schema__"].endswith("context/refresh/v1")]
    assert len(served) == 1 and served[0]["entryCount"] == 2 and served[0]["bytes"] > 0
    assert served[0]["outcome"] == "served" and served[0]["omittedReason"] is None
    assert [r["accepted"] for r in refresh] == [True, False]
    assert refresh[-1]["deduplicated"] == 1
    text = json.dumps(records)
    for secret in ("TOP_SECRET", "secret-name", "client-chosen-id", "lab/tree"):
        assert secret not in text
    page.close()
