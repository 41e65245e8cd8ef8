"""Tool registrations follow the real sessions API: create, delete, kernel shutdown, rename."""

from __future__ import annotations

import json

from tests.conftest import make_notebook
from tests.server import registrations, start_session


async def test_a_session_registers_the_tool_once_and_deleting_it_removes_it(
    jp_fetch, jp_root_dir, copilot
) -> None:
    make_notebook(jp_root_dir, "a.ipynb", ["x = 1"])
    assert await registrations(jp_fetch) == []
    session = await start_session(jp_fetch, "a.ipynb")
    listed = await registrations(jp_fetch)
    artifact_id = copilot.jupyter_server.artifact_id("a.ipynb")
    assert artifact_id
    assert listed == [
        {
            "tool": "notebook_edit_cell",
            "sessionId": session["id"],
            "kernelId": session["kernel"]["id"],
            "artifactId": artifact_id,
            "path": "a.ipynb",
        }
    ]
    await jp_fetch("api", "sessions", session["id"], method="DELETE")
    assert await registrations(jp_fetch) == []


async def test_one_registration_per_session_and_none_for_consoles(jp_fetch, jp_root_dir) -> None:
    make_notebook(jp_root_dir, "a.ipynb", ["x = 1"])
    make_notebook(jp_root_dir, "b.ipynb", ["y = 2"])
    first = await start_session(jp_fetch, "a.ipynb")
    second = await start_session(jp_fetch, "b.ipynb")
    await start_session(jp_fetch, "console-1", kind="console")
    listed = await registrations(jp_fetch)
    assert sorted(r["sessionId"] for r in listed) == sorted([first["id"], second["id"]])
    assert len({r["artifactId"] for r in listed}) == 2


async def test_kernel_shutdown_removes_the_registration(jp_fetch, jp_root_dir) -> None:
    make_notebook(jp_root_dir, "a.ipynb", ["x = 1"])
    session = await start_session(jp_fetch, "a.ipynb")
    assert len(await registrations(jp_fetch)) == 1
    await jp_fetch("api", "kernels", session["kernel"]["id"], method="DELETE")
    assert await registrations(jp_fetch) == []


async def test_a_renamed_notebook_keeps_its_artifact_id_and_gets_the_new_path(
    jp_fetch, jp_root_dir
) -> None:
    make_notebook(jp_root_dir, "a.ipynb", ["x = 1"])
    session = await start_session(jp_fetch, "a.ipynb")
    [before] = await registrations(jp_fetch)
    (jp_root_dir / "sub").mkdir()
    await jp_fetch(
        "api", "contents", "a.ipynb", method="PATCH", body=json.dumps({"path": "sub/b.ipynb"})
    )
    [after] = await registrations(jp_fetch)
    assert after["path"] == "sub/b.ipynb"
    assert after["artifactId"] == before["artifactId"]
    # JupyterLab then moves the session too; the registration stays one and the same.
    await jp_fetch(
        "api", "sessions", session["id"], method="PATCH", body=json.dumps({"path": "sub/b.ipynb"})
    )
    assert await registrations(jp_fetch) == [after]


async def test_renaming_the_folder_moves_the_registration(jp_fetch, jp_root_dir) -> None:
    make_notebook(jp_root_dir, "d/a.ipynb", ["x = 1"])
    await start_session(jp_fetch, "d/a.ipynb")
    [before] = await registrations(jp_fetch)
    await jp_fetch("api", "contents", "d", method="PATCH", body=json.dumps({"path": "e"}))
    [after] = await registrations(jp_fetch)
    assert (after["path"], after["artifactId"]) == ("e/a.ipynb", before["artifactId"])


async def test_tools_are_empty_while_the_feature_is_off(jp_fetch, jp_root_dir, copilot) -> None:
    make_notebook(jp_root_dir, "a.ipynb", ["x = 1"])
    await start_session(jp_fetch, "a.ipynb")
    copilot.enabled = False
    tools = json.loads((await jp_fetch("copilot", "api", "tools")).body)
    assert tools == {"tools": [], "registrations": []}
    copilot.enabled = True
    assert len(await registrations(jp_fetch)) == 1
