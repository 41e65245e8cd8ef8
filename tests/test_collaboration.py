"""With real-time collaboration the server checks the live shared document before the page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from traitlets.config import Config

from jupyter_copilot.page.context import source_hash
from tests.conftest import make_notebook
from tests.kernels import WORKER_PORT_KERNEL_MANAGER
from tests.pages import ScriptedPage, context_answer, notebook_state
from tests.server import INSERT_INVOKE, INVOKE, RUN_INVOKE, call_action, start_session

# The kernel sessions here only give the notebook its tool registrations; no test talks to the
# kernel, so they attach to one real kernel per test process (tests/kernels.py).
pytestmark = pytest.mark.shared_kernel

OLD = "x = 1\n"


@pytest.fixture
def jp_server_config(tmp_path: Path) -> Config:
    return Config(
        {
            "ServerApp": {
                "jpserver_extensions": {
                    "jupyter_copilot": True,
                    "jupyter_server_fileid": True,
                    "jupyter_server_ydoc": True,
                },
            },
            "BaseFileIdManager": {"db_path": str(tmp_path / "file_id.db")},
            "SQLiteYStore": {"db_path": str(tmp_path / "ystore.db")},
            "MappingKernelManager": {"kernel_manager_class": WORKER_PORT_KERNEL_MANAGER},
        }
    )


@pytest.fixture(autouse=True)
def _ystore_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A room that get_document(create=True) starts builds its store without the server's
    # config, so SQLiteYStore.db_path does not reach it: it writes to the working directory.
    monkeypatch.chdir(tmp_path)


async def live_notebook(serverapp: Any, path: str) -> Any:
    """The live shared YNotebook of ``path``, with its room open as a browser would."""
    ydoc = serverapp.web_app.settings["jupyter_server_ydoc"]
    return await ydoc.get_document(
        path=path, content_type="notebook", file_format="json", copy=False, create=True
    )


async def test_status_reports_collaboration(jp_fetch) -> None:
    status = json.loads((await jp_fetch("copilot", "api", "status")).body)
    assert status["rtc"] is True


@pytest.mark.parametrize(
    ("change", "code", "status"),
    [
        ("none", "", 0),
        ("source", "stale-source", 409),
        ("lock", "cell-locked", 403),
        ("delete", "cell-not-found", 404),
    ],
)
async def test_the_live_document_is_checked_before_the_page_is_asked(
    jp_fetch, jp_ws_fetch, jp_root_dir, jp_serverapp, copilot, change, code, status
) -> None:
    path = make_notebook(jp_root_dir, "a.ipynb", [OLD, "y = 2"])
    cell_id = json.loads(path.read_text())["cells"][0]["id"]
    await start_session(jp_fetch, "a.ipynb")
    ynb = await live_notebook(jp_serverapp, "a.ipynb")
    page = await ScriptedPage.connect(jp_ws_fetch, "p-1")
    page.respond = lambda request: {"diffReviewOpened": True}
    await page.send_state(notebook_state("a.ipynb"))
    with ynb.ydoc.transaction():
        ycell = ynb.ycells[0]
        if change == "source":
            ycell["source"] += "# typed by a collaborator\n"
        elif change == "lock":
            ycell["metadata"]["editable"] = False
            ycell["source"] += "# and stale\n"
        elif change == "delete":
            del ynb.ycells[0]
    data = {
        "artifactId": copilot.jupyter_server.artifact_id("a.ipynb"),
        "cellId": cell_id,
        "expectedSourceHash": source_hash(OLD),
        "newSource": "x = 2\n",
    }
    answer_status, body = await call_action(jp_fetch, INVOKE, {"data": data})
    invokes = [r for r in page.requests if r["action"] == INVOKE]
    if change == "none":
        # Unchanged document: the server's check passes and the page is asked.
        assert answer_status == 200 and len(invokes) == 1
    else:
        assert (answer_status, body["error"]["code"]) == (status, code)
        assert invokes == []
    page.close()


async def test_a_cell_whose_type_changed_since_it_was_served_is_cell_type_mismatch(
    jp_fetch, jp_ws_fetch, jp_root_dir, jp_serverapp, copilot
) -> None:
    path = make_notebook(jp_root_dir, "a.ipynb", [OLD])
    cell_id = json.loads(path.read_text())["cells"][0]["id"]
    await start_session(jp_fetch, "a.ipynb")
    ynb = await live_notebook(jp_serverapp, "a.ipynb")
    page = await ScriptedPage.connect(jp_ws_fetch, "p-1")
    served = context_answer("a.ipynb", OLD, selected=[cell_id])
    page.respond = lambda r: served if r["action"].endswith("get-context") else None
    await page.send_state(notebook_state("a.ipynb"))
    status, _ = await call_action(jp_fetch, "jupyter_copilot.notebook.get-context", {"data": {}})
    assert status == 200
    with ynb.ydoc.transaction():
        ynb.ycells[0]["cell_type"] = "markdown"
    data = {
        "artifactId": copilot.jupyter_server.artifact_id("a.ipynb"),
        "cellId": cell_id,
        "expectedSourceHash": source_hash(OLD),
        "newSource": "x = 2\n",
    }
    status, body = await call_action(jp_fetch, INVOKE, {"data": data})
    assert (status, body["error"]["code"]) == (409, "cell-type-mismatch")
    assert [r for r in page.requests if r["action"] == INVOKE] == []
    page.close()


@pytest.mark.parametrize("change", ["none", "delete-anchor", "lock-anchor"])
async def test_an_insert_after_a_cell_gone_from_the_live_document_is_cell_not_found(
    jp_fetch, jp_ws_fetch, jp_root_dir, jp_serverapp, copilot, change
) -> None:
    path = make_notebook(jp_root_dir, "a.ipynb", [OLD, "y = 2"])
    anchor = json.loads(path.read_text())["cells"][0]["id"]
    await start_session(jp_fetch, "a.ipynb")
    ynb = await live_notebook(jp_serverapp, "a.ipynb")
    page = await ScriptedPage.connect(jp_ws_fetch, "p-1")
    page.respond = lambda request: {"reviewOpened": True}
    await page.send_state(notebook_state("a.ipynb"))
    with ynb.ydoc.transaction():
        if change == "delete-anchor":
            del ynb.ycells[0]
        elif change == "lock-anchor":
            # A locked anchor only stops edits of that cell, not a new cell after it.
            ynb.ycells[0]["metadata"]["editable"] = False
    data = {
        "artifactId": copilot.jupyter_server.artifact_id("a.ipynb"),
        "afterCellId": anchor,
        "cellType": "code",
        "source": "z = 3\n",
    }
    status, body = await call_action(jp_fetch, INSERT_INVOKE, {"data": data})
    inserts = [r for r in page.requests if r["action"] == INSERT_INVOKE]
    if change == "delete-anchor":
        assert (status, body["error"]["code"]) == (404, "cell-not-found")
        assert inserts == []
    else:
        assert status == 200 and len(inserts) == 1
    # At the top there is no anchor to lose.
    status, _ = await call_action(jp_fetch, INSERT_INVOKE, {"data": {**data, "afterCellId": None}})
    assert status == 200
    page.close()


@pytest.mark.parametrize(
    ("change", "code", "status"),
    [
        ("mark-never-run", "cell-locked", 403),
        ("make-markdown", "cell-type-mismatch", 409),
        ("type-a-character", "stale-source", 409),
        ("delete-cell", "cell-not-found", 404),
    ],
)
async def test_a_run_of_a_cell_that_changed_in_the_live_document_is_refused_without_a_card(
    jp_fetch, jp_ws_fetch, jp_root_dir, jp_serverapp, copilot, change, code, status
) -> None:
    path = make_notebook(jp_root_dir, "a.ipynb", [OLD, "y = 2"])
    cell_id = json.loads(path.read_text())["cells"][0]["id"]
    await start_session(jp_fetch, "a.ipynb")
    ynb = await live_notebook(jp_serverapp, "a.ipynb")
    page = await ScriptedPage.connect(jp_ws_fetch, "p-1")
    await page.send_state(notebook_state("a.ipynb"))
    with ynb.ydoc.transaction():
        if change == "mark-never-run":
            ynb.ycells[0]["metadata"]["jupyter_copilot"] = {"agent_run": False}
        elif change == "make-markdown":
            ynb.ycells[0]["cell_type"] = "markdown"
        elif change == "type-a-character":
            ynb.ycells[0]["source"] += "#"
        else:
            del ynb.ycells[0]
    data = {
        "artifactId": copilot.jupyter_server.artifact_id("a.ipynb"),
        "cellId": cell_id,
        "expectedSourceHash": source_hash(OLD),
    }
    answer, body = await call_action(jp_fetch, RUN_INVOKE, {"data": data})
    assert (answer, body["error"]["code"]) == (status, code)
    # Refused before the person is asked: no card, no run request.
    await page.sync()
    assert [r for r in page.requests if r["action"] == RUN_INVOKE] == []
    page.close()
