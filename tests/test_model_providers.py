"""The built-in model agent with each provider, through the real server.

Each provider's scripted API (tests/scriptedanthropic.py, tests/scriptedgemini.py,
tests/scriptedmodel.py for OpenAI-compatible endpoints) answers on 127.0.0.1; every request
it gets is the model agent's main loop.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import scriptedanthropic, scriptedgemini, scriptedmodel
from tests.conversations import api as copilot_api
from tests.conversations import create, end_of, reply_of, send
from tests.scriptedanthropic import MODEL_NAME as CLAUDE
from tests.scriptedanthropic import ScriptedAnthropic
from tests.scriptedgemini import MODEL_NAME as GEMINI
from tests.scriptedgemini import ScriptedGemini
from tests.scriptedmodel import ScriptedModel
from tests.test_model_agent import EDIT, NEW, OLD, READ, check_review_opened_unapplied, open_page

pytest.importorskip("pydantic_ai", reason="the models extra is not installed")

REPLY = "Hello from a scripted provider, in parts."


#: The key the server's environment holds for the endpoint.
KEY = "provider-key-0c3d"

#: Each provider's name for the scripted API's model.
MODELS = {"anthropic": CLAUDE, "gemini": GEMINI, "openai-compatible": scriptedmodel.MODEL_NAME}


@pytest.fixture(params=list(MODELS))
def provider(
    request: pytest.FixtureRequest, jp_asyncio_loop: asyncio.AbstractEventLoop
) -> Iterator[tuple[str, Any]]:
    """The provider under test and its scripted API, served on the test's event loop."""
    api: Any = {
        "anthropic": lambda: ScriptedAnthropic(classify=lambda body: True),
        "gemini": lambda: ScriptedGemini(classify=lambda body: True),
        "openai-compatible": ScriptedModel,
    }[request.param]()

    async def start() -> None:
        api.start()

    jp_asyncio_loop.run_until_complete(start())
    yield request.param, api
    api.stop()


@pytest.fixture
def copilot_config(provider: tuple[str, Any], monkeypatch: pytest.MonkeyPatch) -> Any:
    """One model endpoint of the provider, with a key from the server's environment."""
    name, api = provider
    monkeypatch.setenv("TEST_PROVIDER_KEY", KEY)
    return {
        "models": {
            "m": {
                "provider": name,
                "base_url": api.url,
                "model": MODELS[name],
                "api_key": {"fromEnv": "TEST_PROVIDER_KEY"},
            }
        },
        "discover_agents": False,
        "agents": {},
    }


def tool_call(provider: str, name: str, arguments: dict[str, Any]) -> Any:
    """A scripted reply of ``provider``'s API that calls the tool ``name``."""
    if provider == "anthropic":
        return scriptedanthropic.ToolUse(name, arguments)
    if provider == "gemini":
        return scriptedgemini.FunctionCall(name, arguments)
    return scriptedmodel.ToolCall(name, arguments)


def last_result(provider: str, request: Any) -> dict[str, Any]:
    """What the last tool call returned, as the model reads it in ``request`` (a step's
    argument: the request body, or the OpenAI-compatible request's messages)."""
    if provider == "anthropic":
        text = scriptedanthropic.last_tool_result(request)
    elif provider == "gemini":
        text = scriptedgemini.last_function_response(request)
    else:
        text = scriptedmodel.last_tool_result(request)
    return json.loads(text)  # type: ignore[no-any-return]


def offered_tools(provider: str, request: dict[str, Any]) -> set[str]:
    """The tools one request of ``provider`` offers the model."""
    module: Any = {"anthropic": scriptedanthropic, "gemini": scriptedgemini}.get(
        provider, scriptedmodel
    )
    return set(module.tool_names(request))


async def test_a_tool_call_reads_the_cell_and_opens_a_review_and_changes_nothing(
    http_server_client: Any,
    provider: tuple[str, Any],
    jp_fetch: Any,
    jp_ws_fetch: Any,
    jp_root_dir: Path,
    copilot: Any,
) -> None:
    name, api = provider
    page = await open_page(jp_fetch, jp_ws_fetch, jp_root_dir)
    before = (jp_root_dir / "a.ipynb").read_bytes()
    read_back: list[dict[str, Any]] = []

    def edit_the_cell_read(request: Any) -> Any:
        cell = last_result(name, request)["cell"]
        read_back.append(cell)
        return tool_call(name, EDIT, scriptedmodel.edit_args(cell, NEW))

    def report(request: Any) -> str:
        return f"Review opened: {last_result(name, request)['diffReviewOpened']}."

    api.script = [tool_call(name, READ, {}), edit_the_cell_read, report]
    conversation = await create(
        jp_fetch, agentId="m", mode="autopilot", chatOnly=False, contextRefs=["selected_cell"]
    )
    events = await send(jp_fetch, conversation, "Make x equal 2.", page_id="p-1")
    api.check()
    assert end_of(events) == {"type": "end", "stopReason": "end_turn", "error": None}, events
    assert reply_of(events) == "Review opened: True."
    assert len(api.requests) == 3
    # The reply's tokens are its three requests' (10 in and 5 out each); the context used
    # is the last request's.
    [usage] = [e for e in events if e["type"] == "usage"]
    assert usage == usage_event(30, 15, 30, 15)
    assert {READ, EDIT} <= offered_tools(name, api.requests[0])
    # The model read the selected cell as the page holds it.
    [cell] = read_back
    assert (cell["cellId"], cell["source"]) == ("c1", OLD)
    await check_review_opened_unapplied(
        page, copilot, jp_fetch, jp_root_dir / "a.ipynb", before, conversation
    )
    page.close()


def usage_event(inputs: int, outputs: int, total_in: int, total_out: int) -> dict[str, Any]:
    """A reply's usage event; the context used is the last request's (10 in, 5 out)."""
    return {
        "type": "usage",
        "inputTokens": inputs,
        "outputTokens": outputs,
        "conversationInputTokens": total_in,
        "conversationOutputTokens": total_out,
        "contextUsed": 15,
        "contextSize": 32768,
    }


# One conversation per provider for what needs no tool: each agent start is seconds of the
# suite, and every turn's figures are checked on their own.
async def test_the_provider_streams_replies_and_each_reports_its_tokens_and_the_totals(
    http_server_client: Any, provider: tuple[str, Any], jp_fetch: Any
) -> None:
    # Every scripted API counts 10 tokens in and 5 out for every request.
    _, api = provider
    api.script = [REPLY, "Two."]
    conversation = await create(jp_fetch, agentId="m", chatOnly=True)
    first = await send(jp_fetch, conversation, "Say hello.")
    api.check()
    assert end_of(first) == {"type": "end", "stopReason": "end_turn", "error": None}, first
    assert reply_of(first) == REPLY
    assert len(api.requests) == 1
    second = await send(jp_fetch, conversation, "Second?")
    api.check()
    assert reply_of(second) == "Two."
    assert len(api.requests) == 2
    [usage] = [e for e in first if e["type"] == "usage"]
    assert usage == usage_event(10, 5, 10, 5)
    [usage] = [e for e in second if e["type"] == "usage"]
    assert (usage["inputTokens"], usage["outputTokens"]) == (10, 5)
    assert (usage["conversationInputTokens"], usage["conversationOutputTokens"]) == (20, 10)
    _, body = await copilot_api(jp_fetch, "conversations", conversation)
    assert [t["usage"]["outputTokens"] for t in body["turns"]] == [5, 5]
    assert body["turns"][1]["usage"]["conversationInputTokens"] == 20


#: For each HTTP status, the error type the Anthropic API names in its body, the status
#: the Gemini API names in its body, and the OpenAI-compatible error code.
ERROR_NAMES = {
    401: ("authentication_error", "UNAUTHENTICATED", "invalid_api_key"),
    404: ("not_found_error", "NOT_FOUND", "model_not_found"),
    429: ("rate_limit_error", "RESOURCE_EXHAUSTED", "rate_limit_exceeded"),
}


def failure(provider: str, status: int, message: str) -> Any:
    """A scripted answer of ``provider``'s API: ``status`` with its own error body."""
    anthropic, gemini, openai = ERROR_NAMES[status]
    if provider == "anthropic":
        return scriptedanthropic.Failure(status, anthropic, message)
    if provider == "gemini":
        return scriptedgemini.Failure(status, gemini, message)
    return scriptedmodel.Failure(status, message, openai)


#: Each endpoint error and the words the person reads for it.
ENDPOINT_ERRORS = [
    (401, "refused the key (HTTP 401)"),
    (404, "has no model named '{model}' (HTTP 404)"),
    (429, "is rate-limiting requests (HTTP 429)"),
]


# One conversation per provider: a turn that ended in an error leaves the next one working.
async def test_each_endpoint_error_is_the_turns_error_in_plain_words(
    http_server_client: Any, provider: tuple[str, Any], jp_fetch: Any
) -> None:
    name, api = provider

    def requests_of(status: int) -> int:
        """The Anthropic and OpenAI SDKs retry a 429 once (Gemini's does not); nothing else."""
        return 2 if status == 429 and name != "gemini" else 1

    # The endpoint's own message can echo the key: the person never reads it.
    messages = {status: f"Scripted {status} for the key {KEY}" for status, _ in ENDPOINT_ERRORS}
    api.script = [
        failure(name, status, messages[status])
        for status, _ in ENDPOINT_ERRORS
        for _ in range(requests_of(status))
    ]
    conversation = await create(jp_fetch, agentId="m", chatOnly=True)
    for status, words in ENDPOINT_ERRORS:
        before = len(api.requests)
        events = await send(jp_fetch, conversation, "Hello?")
        api.check()
        end = end_of(events)
        assert end["type"] == "end" and end["stopReason"] == "error", (status, events)
        assert words.format(model=MODELS[name]) in end["error"]
        assert end["error"].startswith(f"The model endpoint at 127.0.0.1:{api.port} ")
        assert messages[status] not in json.dumps(events) and KEY not in json.dumps(events)
        assert reply_of(events) == ""
        assert len(api.requests) - before == requests_of(status), status


async def test_an_endpoint_that_does_not_answer_is_unreachable_in_plain_words(
    http_server_client: Any, provider: tuple[str, Any], jp_fetch: Any
) -> None:
    _, api = provider
    # Before the agent starts: its HTTP client would keep using a connection already open.
    api.stop()  # nothing listens on the configured 127.0.0.1 port any more
    conversation = await create(jp_fetch, agentId="m", chatOnly=True)
    events = await send(jp_fetch, conversation, "Hello?")
    end = end_of(events)
    assert end == {
        "type": "end",
        "stopReason": "error",
        "error": f"The model endpoint at 127.0.0.1:{api.port} cannot be reached: is it running?",
    }, events
