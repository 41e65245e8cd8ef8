"""Zero lost keystrokes, zero unreviewed writes: the randomized proof of ``tests/editsafety.py``
over a fixed budget, in real JupyterLab, without and with real-time collaboration.

``EDIT_SAFETY_SEQUENCES`` and ``EDIT_SAFETY_STEPS`` set the budget (6 sequences of up to 25
steps per mode), ``EDIT_SAFETY_SEED`` replays a run. A failure prints the shrunk sequence of
steps and the seed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_notebook
from tests.editsafety import (
    COUNT_ENV,
    INITIAL,
    OTHER,
    PATH,
    Violation,
    World,
    budget,
    run_machine,
    run_seed,
)
from tests.eventually import eventually
from tests.lab import collaboration_labextensions_dir, lab_page, lab_server_config
from tests.mcpclient import mcp_client, mcp_url
from tests.server import registrations

# Real JupyterLab in Chromium: `pytest -m "not browser"` leaves these out.
pytestmark = pytest.mark.browser


@pytest.fixture
def copilot_config() -> dict[str, Any]:
    """The agent reads the whole notebook over MCP, as agents do before proposing."""
    return {"external_context_refs": ["selected_cell", "active_notebook", "cell_outputs"]}


@pytest.fixture
def jp_server_config(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    copilot_config: dict[str, Any],
) -> dict[str, Any]:
    """JupyterLab with jupyter-copilot; with ``collaboration``, real-time collaboration too."""
    config = lab_server_config(tmp_path, tmp_path_factory.getbasetemp(), copilot_config)
    if request.param == "collaboration":
        config["ServerApp"]["jpserver_extensions"]["jupyter_server_ydoc"] = True
        shared = collaboration_labextensions_dir(tmp_path_factory.getbasetemp())
        config["LabApp"]["extra_labextensions_path"].append(str(shared))
        config["SQLiteYStore"] = {"db_path": str(tmp_path / "ystore.db")}
        # Rooms opened from the server side build their store without the server's config.
        monkeypatch.chdir(tmp_path)
    return config  # type: ignore[no-any-return]


async def open_with_session(lab: Any, jp_fetch: Any, path: str) -> None:
    """Open a notebook and wait until its kernel session holds the edit tool."""
    await lab.open(path)

    async def registered() -> bool:
        return any(r["path"] == path for r in await registrations(jp_fetch))

    await eventually(registered, "the kernel session's registration", timeout=30)


@contextlib.asynccontextmanager
async def world_of(
    server: Any, jp_fetch: Any, root: Path, copilot: Any, collaborative: bool
) -> AsyncIterator[World]:
    """The person's page with both notebooks open, the collaborator's page, the agent."""
    make_notebook(root, PATH, INITIAL)
    make_notebook(root, OTHER, ["other = 1"])
    token = {"Authorization": f"token {server.identity_provider.token}"}
    async with contextlib.AsyncExitStack() as stack:
        alice = await stack.enter_async_context(lab_page(server))
        bob = await stack.enter_async_context(lab_page(server)) if collaborative else None
        agent = await stack.enter_async_context(
            mcp_client(mcp_url(server.port, server.base_url), token)
        )
        await alice.open(OTHER)
        await open_with_session(alice, jp_fetch, PATH)
        if bob is not None:
            await open_with_session(bob, jp_fetch, PATH)
        world = World(asyncio.get_running_loop(), copilot, jp_fetch, root, alice, agent, bob)
        try:
            yield world
        finally:
            world.stopped = True


# A real browser replays every step while Hypothesis shrinks a failure: minutes, not seconds;
# the benchmark's long runs set their own limit.
@pytest.mark.timeout(int(os.environ.get("EDIT_SAFETY_TIMEOUT", "1800")))
@pytest.mark.parametrize("jp_server_config", ["solo", "collaboration"], indirect=True)
async def test_no_keystroke_is_lost_and_nothing_is_written_without_keep(
    jp_server_config, lab_server, jp_fetch, jp_root_dir, copilot
) -> None:
    collaborative = "jupyter_server_ydoc" in jp_server_config["ServerApp"]["jpserver_extensions"]
    async with world_of(lab_server, jp_fetch, jp_root_dir, copilot, collaborative) as world:
        # The benchmark counts violations over a long run; a test raises the first, shrunk.
        world.count_violations = bool(os.environ.get(COUNT_ENV))
        world.figures.mode = "collaboration" if collaborative else "solo"
        sequences, steps = budget()
        seed = run_seed()
        print(f"edit safety ({world.figures.mode}): seed {seed}")
        try:
            figures = await asyncio.to_thread(run_machine, world, sequences, steps, seed)
        except BaseException:
            print(f"Replay with EDIT_SAFETY_SEED={seed}")
            raise
        print(f"edit safety: {figures.as_json()}")
        assert not figures.violations, figures.violations
        assert figures.sequences >= sequences


def planted(selector: str, act: str) -> str:
    """A bug planted in the page: ``act`` runs on each new node matching ``selector``
    (as ``node``) in the same task that added it, so that the step that showed the node
    sees its effect every time and a failing sequence replays exactly while it shrinks."""
    return f"""() => new MutationObserver(() => {{
        for (const node of document.querySelectorAll('{selector}:not([data-planted])')) {{
            node.dataset.planted = 'yes';
            const model = window.jupyterapp.shell.currentWidget.content.model;
            {act}
        }}
    }}).observe(document.body, {{childList: true, subtree: true}})"""


#: For the proof that the machine can fail: once a review shows, a space is written into its
#: cell, as a tool that writes before Keep would.
PLANTED_WRITE = planted(
    ".jp-Copilot-Review",
    """const cell = [...model.cells].find(c => c.id === node.dataset.cellId);
            cell.sharedModel.setSource(cell.sharedModel.getSource() + ' ');""",
)


#: How long Hypothesis shrinks the planted failure: every candidate is replayed in the
#: browser, so shrinking stops at a time limit; within it the sequence gets short enough to read.
#: On a quiet machine the failure is down to one step about 2 s into shrinking; the rest of
#: the time Hypothesis only tries smaller arguments, so the limit leaves room for a busy
#: machine without spending a minute of browser work on every run.
SHRINK_SECONDS = 15


@pytest.mark.timeout(900)
@pytest.mark.parametrize("jp_server_config", ["solo"], indirect=True)
async def test_a_write_before_keep_is_caught_and_shrunk_to_a_short_reproduction(
    jp_server_config, lab_server, jp_fetch, jp_root_dir, copilot
) -> None:
    async with world_of(lab_server, jp_fetch, jp_root_dir, copilot, False) as world:
        world.reloads = False
        world.inserts = world.runs = False
        await world.alice.page.evaluate(PLANTED_WRITE)
        with pytest.raises(Violation) as failure:
            await asyncio.to_thread(run_machine, world, 30, 12, 20261201, SHRINK_SECONDS)
    # Hypothesis replays the shrunk sequence last and notes its steps on the error.
    notes = "\n".join(getattr(failure.value, "__notes__", []))
    steps = [
        line
        for line in notes.splitlines()
        if line.startswith("state.")
        and not line.startswith(("state.teardown(", "state.notebook_server_and_page_agree("))
    ]
    # Shrinking replays every candidate in the browser, so it stops at a time limit: short
    # and readable, though not always minimal.
    assert any(line.startswith("state.propose(") for line in steps), notes
    assert len(steps) <= 8, notes
    assert "unkept proposal" in str(failure.value) or "the notebook holds" in str(failure.value)


#: Once a run card shows, the active cell runs, as a tool that runs code before the person
#: allows it would.
PLANTED_RUN = planted(
    '.jp-Copilot-Approval[data-kind="run"]',
    "window.jupyterapp.commands.execute('notebook:run-cell');",
)

#: Once a pending cell shows, a cell is already added to the notebook.
PLANTED_INSERT = planted(
    ".jp-Copilot-PendingCell",
    "model.sharedModel.insertCell(model.cells.length, {cell_type: 'code', source: 'P0Q'});",
)


@pytest.mark.timeout(900)
@pytest.mark.parametrize("jp_server_config", ["solo"], indirect=True)
@pytest.mark.parametrize(
    ("bug", "caught"),
    [(PLANTED_RUN, "execution counts"), (PLANTED_INSERT, "the notebook holds")],
    ids=["run-before-allow", "insert-before-keep"],
)
async def test_a_run_before_allow_or_an_insert_before_keep_is_caught(
    jp_server_config, lab_server, jp_fetch, jp_root_dir, copilot, bug, caught
) -> None:
    async with world_of(lab_server, jp_fetch, jp_root_dir, copilot, False) as world:
        world.reloads = False
        world.count_violations = True
        world.enough = caught
        await world.alice.page.evaluate(bug)
        figures = await asyncio.to_thread(run_machine, world, 8, 25, 20261203)
    assert figures.violations, figures.as_json()
    assert any(caught in v["error"] for v in figures.violations), figures.violations
