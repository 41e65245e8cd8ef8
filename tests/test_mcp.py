"""The MCP endpoint ``copilot/mcp`` with the real MCP client SDK over HTTP.

The server, its authentication, file IDs and kernel sessions are real; the JupyterLab page
is scripted over the real bridge WebSocket (``test_browser_mcp.py`` drives a real page).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import nbformat
import pytest

from jupyter_copilot.mcp.tools import READ_CELLS
from jupyter_copilot.page.context import source_hash
from tests.conftest import make_notebook
from tests.mcpclient import mcp_client, mcp_url, read_cells_answer, refusal_code, structured
from tests.pages import ScriptedPage, context_answer, notebook_state

READ_TOOLS = (
    "context_snapshot",
    "notebook_read_selected_cell",
    "notebook_read_cells",
    "skill_read",
)
ALL_REFS = ["selected_cell", "active_notebook", "cell_outputs"]


@pytest.fixture
def url(http_server_client: Any, jp_http_port: int, jp_base_url: str) -> str:
    """The endpoint of the running server (the fixture makes the server listen)."""
    return mcp_url(jp_http_port, jp_base_url)


def cells_of(path: Path) -> list[dict[str, Any]]:
    """The cells of a notebook file as a page reports them (no outputs)."""
    notebook = nbformat.read(path, as_version=4)
    return [{"cellId": c.id, "cellType": c.cell_type, "source": c.source} for c in notebook.cells]


async def open_page(
    jp_ws_fetch: Any, cells: list[dict[str, Any]], path: str = "a.ipynb"
) -> ScriptedPage:
    """A scripted page with ``path`` active and its first cell selected."""
    page = await ScriptedPage.connect(jp_ws_fetch, "p-1", f"lab/tree/{path}")
    await page.send_state(notebook_state(path, selected=[cells[0]["cellId"]]))

    def respond(request: dict[str, Any]) -> dict[str, Any] | None:
        if request["action"] == READ_CELLS:
            return read_cells_answer(cells, request, path)
        return context_answer(path, cells[0]["source"], selected=[cells[0]["cellId"]])

    page.respond = respond
    return page


# -- authentication and the tool list ------------------------------------------------------


@pytest.mark.parametrize("method", ["GET", "POST", "DELETE"])
@pytest.mark.parametrize("headers", [{}, {"Authorization": "token not-the-token"}])
async def test_the_endpoint_refuses_requests_without_the_jupyter_token(
    url: str, method: str, headers: dict[str, str]
) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    async with httpx2.AsyncClient(headers=headers, timeout=10) as http:
        response = await http.request(
            method,
            url,
            content=body if method == "POST" else None,
            headers={
                "content-type": "application/json",
                "accept": "application/json, text/event-stream",
            },
        )
    assert response.status_code == 403
    assert "tools" not in response.text


async def test_the_sdk_client_cannot_connect_without_the_token(url: str) -> None:
    with pytest.raises(BaseException) as info:  # noqa: PT011 (the SDK wraps it in a group)
        async with mcp_client(url, None, timeout=5):
            pass
    assert "403" in repr(info.value) or "Forbidden" in repr(info.value) or info.value


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_tools_are_listed_with_their_schemas_and_annotations(
    url: str, jp_auth_header: dict[str, str], copilot: Any, mode: str
) -> None:
    async with mcp_client(url, jp_auth_header, mode=mode) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert list(listed) == [
        "context_snapshot",
        "notebook_read_selected_cell",
        "notebook_read_cells",
        "notebook_list_variables",
        "notebook_describe_variable",
        "notebook_edit_cell",
        "notebook_insert_cell",
        "notebook_run_cell",
        "skill_read",
    ]
    for name in ("notebook_edit_cell", "notebook_insert_cell", "notebook_run_cell"):
        definition = copilot.registry.tool(name)
        assert listed[name].input_schema == definition["parameters"]
        assert listed[name].description == definition["description"]
        assert listed[name].annotations.read_only_hint is False
    # Only running code is marked destructive: proposals change nothing until Keep.
    assert listed["notebook_run_cell"].annotations.destructive_hint is True
    assert listed["notebook_edit_cell"].annotations.destructive_hint is False
    for name in READ_TOOLS:
        assert listed[name].annotations.read_only_hint is True
        assert listed[name].input_schema["additionalProperties"] is False
    assert listed["skill_read"].input_schema["required"] == ["skillId"]
    assert set(listed["notebook_read_cells"].input_schema["properties"]) == {
        "cursor",
        "includeOutputs",
    }
    assert set(listed["notebook_read_selected_cell"].input_schema["properties"]) == {
        "includeOutputs"
    }
    assert listed["context_snapshot"].input_schema["properties"] == {}


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("context_snapshot", {"extra": 1}),
        ("notebook_read_selected_cell", {"includeOutputs": "yes"}),
        ("notebook_read_cells", {"cursor": 7}),
        ("notebook_read_cells", {"cursor": ""}),
        ("skill_read", {}),
        ("skill_read", {"skillId": ["x"]}),
        ("notebook_edit_cell", {"artifactId": "a", "cellId": "c"}),
        (
            "notebook_edit_cell",
            {"artifactId": "a", "cellId": "c", "expectedSourceHash": "md5:x", "newSource": "y"},
        ),
    ],
)
async def test_input_that_breaks_a_tool_schema_is_invalid_input(
    url: str, jp_auth_header: dict[str, str], tool: str, arguments: dict[str, Any]
) -> None:
    async with mcp_client(url, jp_auth_header) as client:
        result = await client.call_tool(tool, arguments)
    assert refusal_code(result) == "invalid-input"
    # Messages name the rule, never echo what was sent.
    assert "md5:x" not in result.content[0].text


async def test_an_unknown_tool_is_unknown_action(url: str, jp_auth_header: dict[str, str]) -> None:
    async with mcp_client(url, jp_auth_header) as client:
        result = await client.call_tool("notebook_delete_cell", {})
    assert refusal_code(result) == "unknown-action"


async def test_instructions_are_only_the_skill_summary(
    url: str, jp_auth_header: dict[str, str], copilot: Any
) -> None:
    async with mcp_client(url, jp_auth_header, mode="legacy") as client:
        instructions = client.instructions
    assert instructions is not None
    lines = instructions.splitlines()
    assert lines[0] == "<available-skills>" and lines[-1] == "</available-skills>"
    skills = copilot.skills.visible("external")
    assert [line for line in lines if line.startswith("- ")] == [
        f"- {s.id}: {s.description}" for s in skills
    ]
    assert len(lines) == len(skills) + 3
    assert "skill_read" in lines[1]
    for skill in skills:
        assert skill.body.strip().splitlines()[0] not in instructions


# -- grants ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("refs", "tool", "arguments"),
    [
        ([], "notebook_read_selected_cell", {}),
        (["active_notebook", "cell_outputs"], "notebook_read_selected_cell", {}),
        (["selected_cell"], "notebook_read_selected_cell", {"includeOutputs": True}),
        ([], "notebook_read_cells", {}),
        (["selected_cell", "cell_outputs"], "notebook_read_cells", {}),
        (["active_notebook"], "notebook_read_cells", {"includeOutputs": True}),
    ],
)
async def test_a_read_without_its_grant_is_blocked_before_the_page_is_asked(
    url: str,
    jp_auth_header: dict[str, str],
    jp_ws_fetch: Any,
    jp_root_dir: Path,
    copilot: Any,
    refs: list[str],
    tool: str,
    arguments: dict[str, Any],
) -> None:
    cells = cells_of(make_notebook(jp_root_dir, "a.ipynb", ["secret = 1\n"]))
    page = await open_page(jp_ws_fetch, cells)
    copilot.external_context_refs = refs
    async with mcp_client(url, jp_auth_header) as client:
        result = await client.call_tool(tool, arguments)
    assert refusal_code(result) == "blocked"
    assert "secret" not in result.content[0].text
    assert page.requests == []
    page.close()


async def test_grants_are_looked_up_on_every_call(
    url: str, jp_auth_header: dict[str, str], jp_ws_fetch: Any, jp_root_dir: Path, copilot: Any
) -> None:
    cells = cells_of(make_notebook(jp_root_dir, "a.ipynb", ["x = 1\n"]))
    page = await open_page(jp_ws_fetch, cells)
    async with mcp_client(url, jp_auth_header) as client:
        first = await client.call_tool("notebook_read_selected_cell", {})
        copilot.external_context_refs = []
        second = await client.call_tool("notebook_read_selected_cell", {})
        snapshot = structured(await client.call_tool("context_snapshot", {}))
    assert structured(first)["cell"]["source"] == "x = 1\n"
    assert refusal_code(second) == "blocked"
    assert snapshot["contextRefs"] == []
    assert snapshot["selectedCell"]["readable"] is False
    page.close()


async def test_context_snapshot_says_what_could_be_read_without_any_source(
    url: str, jp_auth_header: dict[str, str], jp_ws_fetch: Any, jp_root_dir: Path, copilot: Any
) -> None:
    cells = cells_of(make_notebook(jp_root_dir, "a.ipynb", ["canary_source = 'zq'\n"]))
    page = await open_page(jp_ws_fetch, cells)
    async with mcp_client(url, jp_auth_header) as client:
        result = await client.call_tool("context_snapshot", {})
    snapshot = structured(result)
    assert snapshot == {
        "contextRefs": ["selected_cell"],
        "approvalMode": "interactive",
        "toolsEnabled": True,
        "notebook": {
            "artifactId": copilot.jupyter_server.artifact_id("a.ipynb"),
            "viewType": "notebook",
            "permissionMode": "edit",
            "selectedCellCount": 1,
            "kernelLanguage": "python",
        },
        "selectedCell": {
            "cellId": cells[0]["cellId"],
            "cellType": "code",
            "language": "python",
            "sourceBytes": len("canary_source = 'zq'\n"),
            "readable": True,
        },
    }
    assert "canary_source" not in result.content[0].text
    page.close()


async def test_the_selected_cell_is_served_whole_with_its_hash(
    url: str, jp_auth_header: dict[str, str], jp_ws_fetch: Any, jp_root_dir: Path, copilot: Any
) -> None:
    cells = cells_of(make_notebook(jp_root_dir, "a.ipynb", ["y = 'é'\r\n"]))
    page = await open_page(jp_ws_fetch, cells)
    async with mcp_client(url, jp_auth_header) as client:
        cell = structured(await client.call_tool("notebook_read_selected_cell", {}))["cell"]
    assert cell == {
        "artifactId": copilot.jupyter_server.artifact_id("a.ipynb"),
        "cellId": cells[0]["cellId"],
        "cellType": "code",
        "language": "python",
        "source": "y = 'é'\r\n",
        "expectedSourceHash": source_hash("y = 'é'\r\n"),
    }
    page.close()


# -- paging -----------------------------------------------------------------------------------


async def read_all(client: Any, **arguments: Any) -> list[dict[str, Any]]:
    """Every page of notebook_read_cells, following nextCursor."""
    pages = []
    cursor = None
    while True:
        args = dict(arguments)
        if cursor is not None:
            args["cursor"] = cursor
        result = await client.call_tool("notebook_read_cells", args)
        page = structured(result)
        pages.append((page, len(result.content[0].text.encode("utf-8"))))
        cursor = page["nextCursor"]
        if cursor is None:
            return [{**p, "_bytes": size} for p, size in pages]


async def test_a_2000_cell_notebook_reads_in_pages_that_fit_and_add_up_to_it(
    url: str, jp_auth_header: dict[str, str], jp_ws_fetch: Any, jp_root_dir: Path, copilot: Any
) -> None:
    sources = [f"value_{i} = {i} * 'é'\nprint(value_{i})\n" for i in range(2000)]
    sources[700] = "big = '" + "x" * 20000 + "'\n"
    path = make_notebook(jp_root_dir, "a.ipynb", sources)
    cells = cells_of(path)
    page = await open_page(jp_ws_fetch, cells)
    copilot.external_context_refs = ["active_notebook"]
    budget = copilot.context_budget_bytes
    async with mcp_client(url, jp_auth_header) as client:
        pages = await read_all(client)
    listed = [cell for p in pages for cell in p["cells"]]
    assert [c["index"] for c in listed] == list(range(2000))
    assert [c["cellId"] for c in listed] == [c["cellId"] for c in cells]
    for p in pages:
        assert p["_bytes"] <= budget
        assert p["cellCount"] == 2000 and p["budgetBytes"] == budget
    big = listed[700]
    assert "source" not in big
    assert big["omitted"] == {"reason": "over-budget", "sourceBytes": 20009, "budgetBytes": budget}
    whole = [c for c in listed if "omitted" not in c]
    assert len(whole) == 1999
    for cell in whole:
        assert cell["source"] == sources[cell["index"]]
        assert cell["expectedSourceHash"] == source_hash(sources[cell["index"]])
    assert len(pages) > 10
    page.close()


async def test_a_cursor_for_another_notebook_or_a_deleted_cell_is_refused(
    url: str, jp_auth_header: dict[str, str], jp_ws_fetch: Any, jp_root_dir: Path, copilot: Any
) -> None:
    cells = cells_of(make_notebook(jp_root_dir, "a.ipynb", ["a = 1\n", "b = 2\n"]))
    page = await open_page(jp_ws_fetch, cells)
    copilot.external_context_refs = ["active_notebook"]
    artifact = copilot.jupyter_server.artifact_id("a.ipynb")
    async with mcp_client(url, jp_auth_header) as client:
        other = await client.call_tool("notebook_read_cells", {"cursor": "other-id/x"})
        gone = await client.call_tool("notebook_read_cells", {"cursor": f"{artifact}/gone"})
        bad = await client.call_tool("notebook_read_cells", {"cursor": "no-slash"})
        ok = structured(
            await client.call_tool(
                "notebook_read_cells", {"cursor": f"{artifact}/{cells[1]['cellId']}"}
            )
        )
    assert refusal_code(other) == "artifact-mismatch"
    assert refusal_code(gone) == "cell-not-found"
    assert refusal_code(bad) == "invalid-input"
    assert [c["source"] for c in ok["cells"]] == ["b = 2\n"]
    assert ok["startIndex"] == 1 and ok["nextCursor"] is None
    page.close()


async def test_outputs_are_summaries_and_need_their_grant(
    url: str, jp_auth_header: dict[str, str], jp_ws_fetch: Any, jp_root_dir: Path, copilot: Any
) -> None:
    cells = cells_of(make_notebook(jp_root_dir, "a.ipynb", ["plot()\n"]))
    outputs = [
        {
            "outputType": "display_data",
            "data": {"image/png": {"bytes": 5120}, "text/plain": {"text": "<Figure>"}},
        },
        {
            "outputType": "display_data",
            "data": {
                "application/vnd.jupyter.widget-view+json": {
                    "modelId": "m1",
                    "widgetType": "IntSliderModel",
                }
            },
        },
    ]
    cells[0]["outputs"] = outputs
    page = await open_page(jp_ws_fetch, cells)
    copilot.external_context_refs = ALL_REFS
    async with mcp_client(url, jp_auth_header) as client:
        listed = structured(await client.call_tool("notebook_read_cells", {"includeOutputs": True}))
        selected = structured(
            await client.call_tool("notebook_read_selected_cell", {"includeOutputs": True})
        )
        plain = structured(await client.call_tool("notebook_read_cells", {}))
    assert listed["cells"][0]["outputs"] == outputs
    assert selected["cell"]["outputs"] == outputs
    assert "outputs" not in plain["cells"][0]
    page.close()


# -- switches ---------------------------------------------------------------------------------


async def test_the_kill_switch_stops_every_tool_but_the_snapshot(
    url: str,
    jp_auth_header: dict[str, str],
    jp_ws_fetch: Any,
    jp_root_dir: Path,
    jp_config_dir: Path,
    copilot: Any,
) -> None:
    cells = cells_of(make_notebook(jp_root_dir, "a.ipynb", ["x = 1\n"]))
    page = await open_page(jp_ws_fetch, cells)
    copilot.external_context_refs = ALL_REFS
    (jp_config_dir / "jupyter_copilot_config.json").write_text(
        json.dumps({"CopilotApp": {"tools_enabled": False}})
    )
    async with mcp_client(url, jp_auth_header) as client:
        codes = {
            name: refusal_code(await client.call_tool(name, args))
            for name, args in [
                ("notebook_read_selected_cell", {}),
                ("notebook_read_cells", {}),
                ("skill_read", {"skillId": "chat-only"}),
            ]
        }
        snapshot = structured(await client.call_tool("context_snapshot", {}))
    assert set(codes.values()) == {"kill-switch"}
    assert snapshot["toolsEnabled"] is False
    page.close()


@pytest.fixture
def copilot_config(request: Any) -> dict[str, Any]:
    """Per-test settings through indirect parametrization."""
    return getattr(request, "param", {})


@pytest.mark.parametrize("copilot_config", [{"enabled": False}], indirect=True)
async def test_with_the_feature_switch_off_the_endpoint_answers_503(
    url: str, jp_auth_header: dict[str, str]
) -> None:
    async with httpx2.AsyncClient(headers=jp_auth_header, timeout=10) as http:
        response = await http.post(url, content="{}", headers={"content-type": "application/json"})
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "feature-disabled"
