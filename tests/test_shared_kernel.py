"""The shared kernel of tests marked ``shared_kernel`` (tests/kernels.py) is real, is one per
test process, and its sessions register and unregister the tools as launched kernels do."""

from __future__ import annotations

import asyncio

import pytest

from tests import kernels
from tests.conftest import make_notebook
from tests.server import registrations, start_session

pytestmark = pytest.mark.shared_kernel


async def test_sessions_attach_to_the_one_real_kernel_of_the_process(
    jp_fetch, jp_root_dir, jp_serverapp
) -> None:
    make_notebook(jp_root_dir, "a.ipynb", ["x = 1"])
    make_notebook(jp_root_dir, "b.ipynb", ["y = 2"])
    first = await start_session(jp_fetch, "a.ipynb")
    second = await start_session(jp_fetch, "b.ipynb")
    # Each session has a kernel id of its own in the server, and both are registered.
    assert first["kernel"]["id"] != second["kernel"]["id"]
    listed = await registrations(jp_fetch)
    assert sorted(r["kernelId"] for r in listed) == sorted(
        [first["kernel"]["id"], second["kernel"]["id"]]
    )
    # Both are the shared kernel: no kernel was launched by the server.
    shared = kernels.shared_kernel()
    for session in (first, second):
        manager = jp_serverapp.kernel_manager.get_kernel(session["kernel"]["id"])
        assert isinstance(manager, kernels.AttachedKernelManager)
        assert not manager.has_kernel
        assert manager.get_connection_info()["shell_port"] == shared.info["shell_port"]
    # ...and it is a real IPython kernel that answers.
    assert await kernels.kernel_implementation(shared.info) == "ipython"


async def test_deleting_a_session_unregisters_it_and_leaves_the_shared_kernel_running(
    jp_fetch, jp_root_dir, jp_serverapp
) -> None:
    make_notebook(jp_root_dir, "a.ipynb", ["x = 1"])
    session = await start_session(jp_fetch, "a.ipynb")
    shared = kernels.shared_kernel()
    starts = kernels.starts
    assert len(await registrations(jp_fetch)) == 1
    await jp_fetch("api", "sessions", session["id"], method="DELETE")
    assert await registrations(jp_fetch) == []
    assert session["kernel"]["id"] not in jp_serverapp.kernel_manager
    await asyncio.sleep(0.5)
    assert shared.process.poll() is None
    assert kernels.shared_kernel() is shared
    assert kernels.starts == starts
