"""REST endpoints: status, manifest, actions, switches and authentication."""

from __future__ import annotations

import json

import pytest
from jupyter_server.auth.decorator import ws_authenticated
from tornado import web
from tornado.httpclient import HTTPClientError

from jupyter_copilot.server.routes import handler_routes

ANONYMOUS = {"Authorization": ""}
GET_CONTEXT = ("copilot", "api", "actions", "jupyter_copilot.notebook.get-context")


async def post(jp_fetch, *parts, body, **kwargs):
    return await jp_fetch(*parts, method="POST", body=json.dumps(body), **kwargs)


async def refusal(call) -> tuple[int, dict]:
    with pytest.raises(HTTPClientError) as err:
        await call
    return err.value.code, json.loads(err.value.response.body)


async def test_status_reports_switches_and_pages(jp_fetch) -> None:
    response = await jp_fetch("copilot", "api", "status")
    status = json.loads(response.body)
    assert status == {
        "version": "0.1.0",
        "enabled": True,
        "toolsEnabled": True,
        "killSwitch": {"engaged": False, "source": None},
        "pages": 0,
        "rtc": False,
        "agentSandbox": {
            "mode": "auto",
            "active": status["agentSandbox"]["active"],
            "text": status["agentSandbox"]["text"],
            "checks": status["agentSandbox"]["checks"],
        },
        "configErrors": [],
    }
    assert isinstance(status["agentSandbox"]["active"], bool)


async def test_manifest_lists_the_page_and_the_tool(jp_fetch) -> None:
    manifest = json.loads((await jp_fetch("copilot", "api", "manifest")).body)
    assert [p["name"] for p in manifest["pages"]] == ["jupyter_copilot.notebook-editor"]
    assert [t["name"] for t in manifest["tools"]] == [
        "notebook_edit_cell",
        "notebook_insert_cell",
        "notebook_run_cell",
    ]
    assert manifest["pages"][0]["getContext"] == {
        "action": "jupyter_copilot.notebook.get-context",
        "extensionName": "jupyter_copilot",
        "iframeType": "page",
    }


async def test_get_context_without_any_page_is_empty(jp_fetch) -> None:
    response = await post(jp_fetch, *GET_CONTEXT, body={"data": {}})
    assert json.loads(response.body) == {"result": {"customContext": []}}


async def test_unknown_action_is_404_with_a_code(jp_fetch) -> None:
    code, body = await refusal(post(jp_fetch, "copilot", "api", "actions", "nope", body={}))
    assert code == 404
    assert body["error"]["code"] == "unknown-action"


@pytest.mark.parametrize(
    "raw",
    ["not json", "[]", '{"data": []}', '{"data": {}, "pageId": 5}', '{"data": {"x": 1}}'],
)
async def test_malformed_action_bodies_are_400_not_500(jp_fetch, raw: str) -> None:
    with pytest.raises(HTTPClientError) as err:
        await jp_fetch(*GET_CONTEXT, method="POST", body=raw)
    assert err.value.code == 400
    assert json.loads(err.value.response.body)["error"]["code"] == "invalid-input"


async def test_unknown_page_id_is_no_active_page(jp_fetch) -> None:
    code, body = await refusal(post(jp_fetch, *GET_CONTEXT, body={"data": {}, "pageId": "zz"}))
    assert (code, body["error"]["code"]) == (404, "no-active-page")


@pytest.mark.parametrize(
    ("method", "parts", "body"),
    [
        ("GET", ("copilot", "api", "status"), None),
        ("GET", ("copilot", "api", "manifest"), None),
        ("GET", ("copilot", "api", "tools"), None),
        ("POST", GET_CONTEXT, "{}"),
        ("POST", ("copilot", "api", "actions", "jupyter_copilot.notebook.edit-cell.invoke"), "{}"),
        ("POST", ("copilot", "api", "actions", "jupyter_copilot.notebook.edit-cell.abort"), "{}"),
    ],
)
async def test_anonymous_requests_are_refused_with_403(jp_fetch, method, parts, body) -> None:
    with pytest.raises(HTTPClientError) as err:
        await jp_fetch(*parts, method=method, body=body, headers=ANONYMOUS)
    assert err.value.code == 403


async def test_anonymous_bridge_websocket_is_refused_with_403(jp_ws_fetch) -> None:
    with pytest.raises(HTTPClientError) as err:
        await jp_ws_fetch("copilot", "api", "bridge", headers=ANONYMOUS)
    assert err.value.code == 403


# The code of the wrappers that tornado's and jupyter_server's authentication decorators make.
AUTHENTICATION_WRAPPERS = {
    web.authenticated(lambda self: None).__code__,
    ws_authenticated(lambda self: None).__code__,
}


def test_every_handler_verb_requires_authentication(copilot) -> None:
    verbs = ("get", "post", "put", "patch", "delete", "head", "options")
    checked = 0
    for _pattern, handler, _kwargs in handler_routes(copilot):
        for verb in verbs:
            method = handler.__dict__.get(verb)
            if method is None:
                continue
            checked += 1
            # functools.wraps copies the name, not the code object: the outermost wrapper's
            # code is the one every function wrapped by that decorator shares.
            made_by = method.__code__
            assert made_by in AUTHENTICATION_WRAPPERS, (
                f"{handler.__name__}.{verb} is not wrapped by an authentication decorator"
            )
            assert getattr(handler, "auth_resource", None) == "copilot"
    # 9 before conversations; agents 1, personal keys 3 (GET, PUT, DELETE), conversations 2,
    # one conversation 3 (GET, PATCH, DELETE), messages, variables, cancel, archive, file
    # reviews, export and resume 1 each.
    assert checked == 25


def test_handlers_get_their_collaborators_not_the_app(copilot) -> None:
    for _pattern, handler, kwargs in handler_routes(copilot):
        for name, value in kwargs.items():
            assert value is not copilot, f"{handler.__name__} gets the app as {name}"
            assert getattr(value, "__self__", None) is not copilot, (
                f"{handler.__name__} gets a method of the app as {name}"
            )


class TestFeatureSwitchOff:
    @pytest.fixture
    def copilot_config(self):
        return {"enabled": False}

    async def test_manifest_is_empty_and_status_still_answers(self, jp_fetch) -> None:
        manifest = json.loads((await jp_fetch("copilot", "api", "manifest")).body)
        assert manifest == {"pages": [], "tools": []}
        status = json.loads((await jp_fetch("copilot", "api", "status")).body)
        assert status["enabled"] is False

    async def test_actions_end_with_feature_disabled(self, jp_fetch) -> None:
        code, body = await refusal(post(jp_fetch, *GET_CONTEXT, body={"data": {}}))
        assert (code, body["error"]["code"]) == (503, "feature-disabled")

    async def test_pages_cannot_connect(self, jp_ws_fetch) -> None:
        with pytest.raises(HTTPClientError) as err:
            await jp_ws_fetch("copilot", "api", "bridge")
        assert err.value.code == 503


class TestKillSwitchFromConfig:
    @pytest.fixture
    def copilot_config(self):
        return {"tools_enabled": False}

    async def test_status_names_the_config_as_source(self, jp_fetch) -> None:
        status = json.loads((await jp_fetch("copilot", "api", "status")).body)
        assert status["toolsEnabled"] is False
        assert status["killSwitch"] == {"engaged": True, "source": "config"}

    async def test_get_context_is_not_gated_by_the_kill_switch(self, jp_fetch) -> None:
        response = await post(jp_fetch, *GET_CONTEXT, body={"data": {}})
        assert json.loads(response.body) == {"result": {"customContext": []}}
