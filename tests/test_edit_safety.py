"""Zero lost keystrokes, zero unreviewed writes: the randomized proof of ``tests/editsafety.py``
over a fixed budget, in real JupyterLab, without and with real-time collaboration.

``EDIT_SAFETY_SEQUENCES`` and ``EDIT_SAFETY_STEPS`` set the budget (15 sequences of up to 25
steps per mode), ``EDIT_SAFETY_SEED`` replays a run. A failure prints the shrunk sequence of
steps and the seed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_notebook
from tests.editsafety import COUNT_ENV, INITIAL, OTHER, PATH, World, budget, run_machine, run_seed
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


# A real browser replays every step while Hypothesis shrinks a failure: minutes, not seconds.
@pytest.mark.timeout(int(os.environ.get("EDIT_SAFETY_TIMEOUT", "1800")))
@pytest.mark.parametrize("jp_server_config", ["solo", "collaboration"], indirect=True)
async def test_no_keystroke_is_lost_and_nothing_is_written_without_keep(
    jp_server_config, lab_server, jp_fetch, jp_root_dir, copilot
) -> None:
    make_notebook(jp_root_dir, PATH, INITIAL)
    make_notebook(jp_root_dir, OTHER, ["other = 1"])
    collaborative = "jupyter_server_ydoc" in jp_server_config["ServerApp"]["jpserver_extensions"]
    token = {"Authorization": f"token {lab_server.identity_provider.token}"}
    async with contextlib.AsyncExitStack() as stack:
        alice = await stack.enter_async_context(lab_page(lab_server))
        bob = await stack.enter_async_context(lab_page(lab_server)) if collaborative else None
        agent = await stack.enter_async_context(
            mcp_client(mcp_url(lab_server.port, lab_server.base_url), token)
        )
        await alice.open(OTHER)
        await open_with_session(alice, jp_fetch, PATH)
        if bob is not None:
            await open_with_session(bob, jp_fetch, PATH)
        world = World(asyncio.get_running_loop(), copilot, jp_fetch, jp_root_dir, alice, agent, bob)
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
