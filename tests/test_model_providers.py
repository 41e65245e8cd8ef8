"""The built-in model agent with the Anthropic and Gemini providers, through the real server.

Each provider's scripted API (tests/scriptedanthropic.py, tests/scriptedgemini.py) answers
on 127.0.0.1; every request it gets is the model agent's main loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conversations import create, end_of, reply_of, send
from tests.scriptedanthropic import MODEL_NAME as CLAUDE
from tests.scriptedanthropic import ScriptedAnthropic
from tests.scriptedgemini import MODEL_NAME as GEMINI
from tests.scriptedgemini import ScriptedGemini

pytest.importorskip("pydantic_ai", reason="the models extra is not installed")

REPLY = "Hello from a scripted provider, in parts."


@pytest.fixture(params=["anthropic", "gemini"])
def provider(
    request: pytest.FixtureRequest, jp_asyncio_loop: asyncio.AbstractEventLoop
) -> Iterator[tuple[str, Any]]:
    """The provider under test and its scripted API, served on the test's event loop."""
    api: Any = (
        ScriptedAnthropic(classify=lambda body: True)
        if request.param == "anthropic"
        else ScriptedGemini(classify=lambda body: True)
    )

    async def start() -> None:
        api.start()

    jp_asyncio_loop.run_until_complete(start())
    yield request.param, api
    api.stop()


@pytest.fixture
def copilot_config(provider: tuple[str, Any], monkeypatch: pytest.MonkeyPatch) -> Any:
    """One model endpoint of the provider, with a key from the server's environment."""
    name, api = provider
    monkeypatch.setenv("TEST_PROVIDER_KEY", "provider-key-0c3d")
    return {
        "models": {
            "m": {
                "provider": name,
                "base_url": api.url,
                "model": CLAUDE if name == "anthropic" else GEMINI,
                "api_key": {"fromEnv": "TEST_PROVIDER_KEY"},
            }
        },
        "discover_agents": False,
        "agents": {},
    }


async def test_the_provider_streams_a_reply(
    http_server_client: Any, provider: tuple[str, Any], jp_fetch: Any
) -> None:
    _, api = provider
    api.script = [REPLY]
    conversation = await create(jp_fetch, agentId="m", chatOnly=True)
    events = await send(jp_fetch, conversation, "Say hello.")
    api.check()
    assert end_of(events) == {"type": "end", "stopReason": "end_turn", "error": None}, events
    assert reply_of(events) == REPLY
    assert len(api.requests) == 1
