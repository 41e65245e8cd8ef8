"""``CopilotApp.models`` as an administrator writes it (docs/admin.md, "Models").

An invalid entry fails closed and is named, never shown; ``allowed_agents`` holds a model
agent like any other; a local Ollama is offered when ``models`` is empty. The scripted
endpoint (tests/scriptedmodel.py) answers like Ollama's API on a port of the test's own, so
no test asks the real Ollama port.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from jupyter_copilot.agents.catalog import AgentConfigError
from jupyter_copilot.agents.modelprobe import NOT_ANSWERING, ModelProbes
from jupyter_copilot.agents.models import parse_model
from tests.conversations import api
from tests.scriptedmodel import ScriptedModel
from tests.test_config_fails_closed import loud_log

#: A value an invalid entry holds; no log line, status or API answer may show it.
SECRET = "sk-never-shown-4b7e21"


def entry(**changes: Any) -> dict[str, Any]:
    """A valid entry, with ``changes``."""
    return {
        "provider": "openai-compatible",
        "base_url": "http://127.0.0.1:9/v1",
        "model": "m",
        **changes,
    }


@pytest.mark.parametrize(
    "bad",
    [
        entry(provider=SECRET),
        entry(base_url=f"ftp://{SECRET}/"),
        entry(base_url=f"http://user:{SECRET}@host/v1"),
        entry(api_key=SECRET),
        entry(api_key={"value": SECRET}),
        entry(model=""),
        entry(turn_seconds=-1),
        entry(**{SECRET: 1}),
        {"provider": "ollama", "model": "m"},
    ],
    ids=[
        "provider",
        "scheme",
        "userinfo",
        "literal-key",
        "key-shape",
        "model",
        "turn-seconds",
        "unknown-key",
        "no-base-url",
    ],
)
def test_an_invalid_entry_is_refused_naming_its_key_never_its_value(bad: Any) -> None:
    with pytest.raises(AgentConfigError) as refused:
        parse_model("team", bad)
    assert SECRET not in str(refused.value)
    assert "team" in str(refused.value)


class TestAnInvalidEntry:
    @pytest.fixture
    def copilot_config(self) -> dict[str, Any]:
        return {"models": {"team": entry(provider=SECRET)}, "discover_agents": False}

    @pytest.fixture
    def jp_server_config(self, jp_server_config: Any, capfd: Any) -> Any:
        """The server's log is captured from its start (capfd)."""
        return jp_server_config

    async def test_fails_closed_and_is_named_never_shown(
        self, jp_fetch: Any, capfd: pytest.CaptureFixture[str]
    ) -> None:
        _, status = await api(jp_fetch, "status")
        assert status["configErrors"] == ["models"]
        assert status["enabled"] is False and status["toolsEnabled"] is False
        code, body = await api(jp_fetch, "conversations", method="POST", body={"agentId": "team"})
        assert (code, body["error"]["code"]) == (503, "feature-disabled")
        loud = "\n".join(loud_log(capfd.readouterr().err))
        assert "CopilotApp.models" in loud and SECRET not in loud


class TestTheAllowlist:
    @pytest.fixture
    def copilot_config(self) -> dict[str, Any]:
        return {
            "models": {"team": entry(), "other": entry(model="o")},
            "allowed_agents": ["team"],
            "discover_agents": False,
            "discover_models": False,
        }

    async def test_holds_a_model_agent_like_any_other(self, jp_fetch: Any) -> None:
        _, body = await api(jp_fetch, "agents")
        assert [a["id"] for a in body["agents"]] == ["team"]
        code, refused = await api(
            jp_fetch, "conversations", method="POST", body={"agentId": "other"}
        )
        assert (code, refused["error"]["code"]) == (403, "not-permitted")


class _Tags(BaseHTTPRequestHandler):
    """``GET /api/tags`` as Ollama answers it, from a thread: the server asks it while it
    starts, on the event loop the test's other servers share."""

    def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
        body = json.dumps({"models": [{"name": "qwen2.5-coder:7b", "size": 1}]}).encode()
        self.send_response(200 if self.path == "/api/tags" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        """Quiet."""


@pytest.fixture
def ollama() -> Iterator[str]:
    """A local server that lists models like Ollama, on a free port; its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Tags)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


class TestALocalOllama:
    @pytest.fixture
    def copilot_config(self, ollama: str) -> dict[str, Any]:
        return {"discover_agents": False, "discover_models": True, "ollama_url": ollama}

    async def test_is_offered_when_no_model_is_configured(
        self, jp_fetch: Any, copilot: Any, ollama: str
    ) -> None:
        _, body = await api(jp_fetch, "agents")
        offered = {a["id"]: a for a in body["agents"]}
        assert list(offered) == ["ollama-qwen2.5-coder:7b", "demo"]
        assert offered["ollama-qwen2.5-coder:7b"]["label"] == "qwen2.5-coder:7b (Ollama)"
        spec = copilot.conversations.catalog["ollama-qwen2.5-coder:7b"]
        assert spec.env["COPILOT_MODEL_BASE_URL"] == f"{ollama}/v1"


class TestAConfiguredModel:
    @pytest.fixture
    def copilot_config(self, ollama: str) -> dict[str, Any]:
        return {
            "models": {"team": entry()},
            "discover_agents": False,
            "discover_models": True,
            "ollama_url": ollama,
        }

    async def test_means_no_ollama_is_offered(self, jp_fetch: Any) -> None:
        _, body = await api(jp_fetch, "agents")
        assert [a["id"] for a in body["agents"]] == ["team", "demo"]


class TestNoOllama:
    @pytest.fixture
    def copilot_config(self, scripted_model: ScriptedModel) -> dict[str, Any]:
        scripted_model.stop()  # a free port: nothing answers there
        return {
            "discover_agents": False,
            "discover_models": True,
            "ollama_url": f"http://127.0.0.1:{scripted_model.port}",
        }

    async def test_offers_only_the_demo(self, jp_fetch: Any) -> None:
        _, body = await api(jp_fetch, "agents")
        assert [a["id"] for a in body["agents"]] == ["demo"]


def test_an_unavailable_model_agent_says_why_in_the_agent_menu() -> None:
    spec = parse_model("team", entry(), "Not installed: pip install x")
    shown = spec.to_json()
    assert shown["unavailable"] == "Not installed: pip install x"
    assert shown["description"] == "Not installed: pip install x"
    assert json.dumps(shown).count("127.0.0.1") == 0


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts connections and never answers: an endpoint that hangs."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    yield listener.getsockname()[1]
    listener.close()


class TestAnEndpointThatDoesNotAnswer:
    @pytest.fixture
    def copilot_config(self, ollama: str, silent_port: int) -> dict[str, Any]:
        return {
            "models": {
                "up": entry(base_url=f"{ollama}/v1", description="Answers."),
                "refused": entry(description="Nothing listens."),
                "hangs": entry(base_url=f"http://127.0.0.1:{silent_port}/v1"),
            },
            "discover_agents": False,
            "discover_models": False,
        }

    async def test_says_so_in_the_agent_menu_before_the_person_types(
        self, jp_fetch: Any, copilot: Any
    ) -> None:
        if copilot.conversations.catalog["up"].unavailable is not None:
            pytest.skip("model agents need Python 3.11+ and the models extra; none is probed")
        _, body = await api(jp_fetch, "agents")
        said = {a["id"]: a["description"] for a in body["agents"]}
        assert said == {
            "up": "Answers.",
            "refused": NOT_ANSWERING,
            "hangs": NOT_ANSWERING,
            "demo": said["demo"],
        }
        # Nothing of the endpoints reaches the menu.
        assert "127.0.0.1" not in json.dumps(body["agents"])


def test_probes_ask_each_stale_endpoint_once_and_only_model_endpoints() -> None:
    asked: list[str] = []
    now = [100.0]

    async def fetch(url: str, timeout: float) -> bool:
        asked.append(url)
        return "up" in url

    probes = ModelProbes(fetch, clock=lambda: now[0], fresh=30.0)
    up = parse_model("up", entry(base_url="http://up.internal/v1"))
    down = parse_model("down", entry(base_url="http://down.internal/v1"))
    same = parse_model("same", entry(base_url="http://down.internal/v1", model="other"))
    hosted = parse_model("hosted", {"provider": "anthropic", "model": "claude"})
    others = [s for s in (up, down, same, hosted) if ModelProbes.endpoint(s) is None]
    assert others == [hosted]  # a provider's own API is not asked
    asyncio.run(probes.refresh([up, down, same, hosted]))
    assert sorted(asked) == ["http://down.internal/v1", "http://up.internal/v1"]
    assert [probes.reason(s) for s in (up, down, same, hosted)] == [
        None,
        NOT_ANSWERING,
        NOT_ANSWERING,
        None,
    ]
    now[0] += 10
    asyncio.run(probes.refresh([up, down]))
    assert len(asked) == 2  # still fresh
    now[0] += 25
    asyncio.run(probes.refresh([up, down]))
    assert len(asked) == 4  # asked again once stale
