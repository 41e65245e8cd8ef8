"""Every JSON entry point answers bad or absurdly deep JSON as bad input: never a 500.

A 200,000-deep body makes ``json.loads`` raise ``RecursionError``; it must end as
``invalid-input`` on every REST endpoint, as an ``invalid-message`` error on the bridge
(which stays connected), and without a server error on the MCP endpoint.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from jupyter_copilot.protocol import jsontext
from tests.conversations import api, create, scripted_agents
from tests.pages import ScriptedPage, notebook_state

DEEP = "[" * 200_000 + "]" * 200_000
#: Parsable by json.loads, but deeper than any body of ours.
NESTED = json.dumps({"data": {"x": [[[[{"a": [[[[]]]]}]]]] * 1}}).replace(
    "[[]]", "[" * 200 + "]" * 200
)


@pytest.fixture
def copilot_config(tmp_path: Any) -> dict[str, Any]:
    """The scripted agent, so that conversations can be created."""
    return scripted_agents(tmp_path / "agent.jsonl")


def test_depth_is_measured_without_recursion() -> None:
    assert jsontext.depth(1) == 0
    assert jsontext.depth({"a": [1, {"b": []}]}) == 4
    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    assert jsontext.depth(deep) > jsontext.MAX_DEPTH
    for bad in (DEEP, NESTED, "{", b"\xff"):
        with pytest.raises(jsontext.BadJson):
            jsontext.parse(bad)


async def post_raw(jp_fetch: Any, body: str, *path: str, method: str = "POST") -> Any:
    return await jp_fetch("copilot", "api", *path, method=method, body=body, raise_error=False)


@pytest.mark.parametrize("body", [DEEP, NESTED])
async def test_rest_endpoints_answer_deep_json_with_invalid_input(jp_fetch: Any, body: str) -> None:
    conversation = await create(jp_fetch)
    targets = [
        ("POST", ("actions", "jupyter_copilot.notebook.get-context")),
        ("POST", ("actions", "jupyter_copilot.notebook.edit-cell.invoke")),
        ("POST", ("conversations",)),
        ("PATCH", ("conversations", conversation)),
        ("POST", ("conversations", conversation, "messages")),
        ("POST", ("approvals", "0" * 32)),
        ("POST", ("file-reviews", "0" * 32)),
    ]
    for method, path in targets:
        response = await post_raw(jp_fetch, body, *path, method=method)
        assert response.code == 400, (path, response.code)
        assert json.loads(response.body)["error"]["code"] == "invalid-input", path
    status, _ = await api(jp_fetch, "status")
    assert status == 200


async def test_the_bridge_answers_deep_json_and_stays_connected(jp_ws_fetch: Any) -> None:
    page = await ScriptedPage.connect(jp_ws_fetch, "p-deep")
    for body in (DEEP, NESTED):
        page.send(body)
        reply = await page.next_message()
        assert reply["type"] == "error" and reply["code"] == "invalid-message"
        assert "deeper" in reply["message"]
    await page.send_state(notebook_state("a.ipynb"))
    page.close()


async def test_the_mcp_endpoint_never_answers_deep_json_with_a_server_error(
    jp_fetch: Any,
) -> None:
    for body in (DEEP, NESTED):
        response = await jp_fetch(
            "copilot",
            "mcp",
            method="POST",
            body=body,
            headers={"Accept": "application/json, text/event-stream"},
            raise_error=False,
        )
        assert response.code < 500, response.code
