"""People's own keys for the administrator's model endpoints (``allow_personal_models``).

alice and bob share one server (the identities of ``tests/test_approvals_owner.py``). alice
stores her own key for the team model; her conversation's model agent reaches the scripted
OpenAI-compatible endpoint on 127.0.0.1 with it, bob's with the administrator's key. The key
is in no HTTP answer, no log record, no event and no stored conversation.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import logging
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from jupyter_copilot.agents.catalog import AgentSpec
from jupyter_copilot.agents.personalkeys import PersonalKeys, checked_key, takes_personal_key
from jupyter_copilot.protocol.refusals import Refusal
from tests.scriptedmodel import ScriptedModel
from tests.test_approvals_owner import NamedTokens
from tests.test_canary import read_events

#: alice's own key: it may reach the endpoint and her key file, nothing else.
ALICE_KEY = "sk-alice-personal-canary-5d2e8b"
#: The administrator's key for everyone (``api_key: {"fromEnv": ...}``).
TEAM_KEY = "sk-team-shared-key-0a9f"
ALICE = {"Authorization": "token alice-token"}
BOB = {"Authorization": "token bob-token"}


def model(provider: str = "openai-compatible") -> AgentSpec:
    """A model agent as ``models.py`` builds one."""
    return AgentSpec("m", "M", "", ("python",), {"COPILOT_MODEL_PROVIDER": provider}, kind="model")


# -- the pure parts --------------------------------------------------------------------------


def test_keys_are_kept_per_person_in_private_files(tmp_path: Path) -> None:
    keys = PersonalKeys(str(tmp_path / "keys"), logging.getLogger("test"))
    keys.set("alice", "team", ALICE_KEY)
    keys.set("bob", "team", "sk-bob")
    assert keys.key("alice", "team") == ALICE_KEY
    assert keys.key("bob", "team") == "sk-bob"
    assert keys.key("carol", "team") is None
    assert stat.S_IMODE(os.stat(tmp_path / "keys").st_mode) == 0o700
    files = sorted((tmp_path / "keys").iterdir())
    assert len(files) == 2
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        # Files are named by a hash: no person's name in the folder.
        assert "alice" not in path.name and "bob" not in path.name
    assert [ALICE_KEY in p.read_text() for p in files].count(True) == 1
    keys.set("alice", "team", "sk-alice-replaced")
    assert keys.key("alice", "team") == "sk-alice-replaced"
    listing = keys.listing("alice", [model()])
    assert listing == [{"id": "m", "label": "M", "keySet": False}]
    keys.remove("alice", "team")
    assert keys.key("alice", "team") is None
    assert len(list((tmp_path / "keys").iterdir())) == 1  # her file is gone


def test_keys_stay_in_memory_when_nothing_is_stored(tmp_path: Path) -> None:
    keys = PersonalKeys(None, logging.getLogger("test"))
    keys.set("alice", "m", ALICE_KEY)
    assert keys.listing("alice", [model()]) == [{"id": "m", "label": "M", "keySet": True}]
    assert keys.listing("bob", [model()]) == [{"id": "m", "label": "M", "keySet": False}]


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"key": ""},
        {"key": 3},
        {"key": "sk-with space"},
        {"key": "sk-a\r\nX-Other: 1"},
        {"key": "sk-extra-field", "x": 1},
    ],
)
def test_a_key_that_could_not_travel_in_a_header_is_refused_without_quoting_it(
    body: Any,
) -> None:
    with pytest.raises(Refusal) as refused:
        checked_key(body)
    assert refused.value.code == "invalid-input"
    key = body.get("key")
    if isinstance(key, str) and key:
        assert key not in refused.value.message


def test_only_models_that_take_a_key_and_can_start_take_a_personal_key() -> None:
    assert takes_personal_key(model()) is True
    assert takes_personal_key(model("anthropic")) is True
    assert takes_personal_key(model("ollama")) is False
    demo = AgentSpec("demo", "Demo", "", ("python",), kind="demo")
    assert takes_personal_key(demo) is False
    missing = AgentSpec(
        "m",
        "M",
        "",
        ("python",),
        {"COPILOT_MODEL_PROVIDER": "openai"},
        kind="model",
        unavailable="Not installed",
    )
    assert takes_personal_key(missing) is False


# -- through the server ------------------------------------------------------------------------


@pytest.fixture
def jp_server_config(jp_server_config: Any) -> Any:
    """This module's server knows alice and bob."""
    jp_server_config.ServerApp.identity_provider_class = NamedTokens
    return jp_server_config


def team_config(url: str, db: Path, allow: bool) -> dict[str, Any]:
    """One team model with the administrator's key, and personal keys on or off."""
    return {
        "conversations_db_path": str(db),
        "allow_personal_models": allow,
        "models": {
            "team-model": {
                "label": "Team model",
                "provider": "openai-compatible",
                "base_url": url,
                "model": "scripted",
                "api_key": {"fromEnv": "TEST_TEAM_KEY"},
                "turn_seconds": 10,
            }
        },
        "discover_agents": False,
        "agents": {},
    }


class Answers:
    """Calls of ``copilot/api`` as one person; every answer's body is kept."""

    def __init__(self, jp_fetch: Any, headers: dict[str, str], seen: list[bytes]) -> None:
        self.jp_fetch = jp_fetch
        self.headers = headers
        self.seen = seen

    async def __call__(self, *path: str, method: str = "GET", body: Any = None) -> Any:
        response = await self.jp_fetch(
            "copilot",
            "api",
            *path,
            method=method,
            body=None if method in ("GET", "DELETE") else json.dumps(body or {}),
            headers=self.headers,
            raise_error=False,
            request_timeout=60,
        )
        self.seen.append(response.body)
        text = response.body.decode()
        if path[-1] == "messages":
            return response.code, [json.loads(line) for line in text.splitlines()]
        return response.code, json.loads(text or "{}")


class TestPersonalKeysOff:
    @pytest.fixture
    def copilot_config(self, scripted_model: ScriptedModel, tmp_path: Path) -> dict[str, Any]:
        return team_config(scripted_model.url, tmp_path / "c.db", allow=False)

    async def test_setting_a_key_is_refused_when_the_admin_does_not_allow_it(
        self, jp_fetch: Any, jp_data_dir: Path
    ) -> None:
        alice = Answers(jp_fetch, ALICE, [])
        assert await alice("personal-keys") == (200, {"allowed": False, "models": []})
        status, body = await alice(
            "personal-keys", "team-model", method="PUT", body={"key": ALICE_KEY}
        )
        assert status == 403
        assert body["error"] == {
            "code": "not-permitted",
            "message": "This server's administrator does not allow personal keys.",
        }
        status, body = await alice("personal-keys", "team-model", method="DELETE")
        assert (status, body["error"]["code"]) == (403, "not-permitted")
        assert not (jp_data_dir / "copilot" / "keys").exists()


@pytest.mark.skipif(
    importlib.util.find_spec("pydantic_ai") is None, reason="the models extra is not installed"
)
class TestPersonalKeys:
    @pytest.fixture
    def copilot_config(
        self, scripted_model: ScriptedModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> dict[str, Any]:
        monkeypatch.setenv("TEST_TEAM_KEY", TEAM_KEY)
        return team_config(scripted_model.url, tmp_path / "c.db", allow=True)

    @pytest.fixture
    def listening(self, http_server_client: Any) -> None:
        """Make the server listen: the model agent's MCP client connects over real HTTP."""

    async def test_a_key_is_set_replaced_and_removed_and_never_shown(
        self, jp_fetch: Any, jp_data_dir: Path
    ) -> None:
        seen: list[bytes] = []
        alice, bob = Answers(jp_fetch, ALICE, seen), Answers(jp_fetch, BOB, seen)
        unset = {
            "allowed": True,
            "models": [{"id": "team-model", "label": "Team model", "keySet": False}],
        }
        assert await alice("personal-keys") == (200, unset)
        assert await alice(
            "personal-keys", "team-model", method="PUT", body={"key": "sk-first"}
        ) == (
            200,
            {"id": "team-model", "keySet": True},
        )
        assert await alice(
            "personal-keys", "team-model", method="PUT", body={"key": ALICE_KEY}
        ) == (200, {"id": "team-model", "keySet": True})
        status, body = await alice("personal-keys")
        assert body["models"][0]["keySet"] is True
        # bob sees that he has none; nothing of alice's.
        assert await bob("personal-keys") == (200, unset)
        # A model that takes no personal key, and a bad key, are refused by name only.
        status, body = await alice("personal-keys", "demo", method="PUT", body={"key": "k"})
        assert (status, body["error"]["code"]) == (400, "invalid-input")
        status, body = await alice(
            "personal-keys", "team-model", method="PUT", body={"key": "two words"}
        )
        assert (status, body["error"]["code"]) == (400, "invalid-input")
        [path] = (jp_data_dir / "copilot" / "keys").iterdir()
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert ALICE_KEY in path.read_text()
        assert all(ALICE_KEY.encode() not in body for body in seen)
        assert all(b"sk-first" not in body for body in seen)
        assert await alice("personal-keys", "team-model", method="DELETE") == (
            200,
            {"id": "team-model", "keySet": False},
        )
        assert await alice("personal-keys") == (200, unset)
        assert list((jp_data_dir / "copilot" / "keys").iterdir()) == []

    async def test_each_persons_agent_uses_their_own_key_and_it_leaks_nowhere(
        self,
        listening: None,
        scripted_model: ScriptedModel,
        jp_fetch: Any,
        jp_ws_fetch: Any,
        tmp_path: Path,
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        caplog.set_level(logging.INFO)
        events: list[dict[str, Any]] = []
        subscription = await jp_ws_fetch("api", "events", "subscribe")
        reader = asyncio.ensure_future(read_events(subscription, events))
        seen: list[bytes] = []
        alice, bob = Answers(jp_fetch, ALICE, seen), Answers(jp_fetch, BOB, seen)
        status, _ = await alice(
            "personal-keys", "team-model", method="PUT", body={"key": ALICE_KEY}
        )
        assert status == 200
        scripted_model.script = ["Hello alice.", "Hello bob."]
        replies = []
        for person in (alice, bob):
            status, body = await person(
                "conversations", method="POST", body={"agentId": "team-model", "chatOnly": True}
            )
            assert status == 201, body
            status, turn = await person(
                "conversations",
                body["conversation"]["id"],
                "messages",
                method="POST",
                body={"text": "Say hello"},
            )
            assert status == 200
            replies.append("".join(e["text"] for e in turn if e["type"] == "text"))
        scripted_model.check()
        assert replies == ["Hello alice.", "Hello bob."]
        # alice's agent reached the endpoint with her key; bob's with the team's, never hers.
        assert scripted_model.authorizations == [f"Bearer {ALICE_KEY}", f"Bearer {TEAM_KEY}"]
        # Everyone's answers, conversations listed, agents, keys: no key.
        for person in (alice, bob):
            await person("conversations")
            await person("agents")
            await person("personal-keys")
        assert seen and all(ALICE_KEY.encode() not in body for body in seen)
        await asyncio.sleep(0.2)
        reader.cancel()
        assert events, "no event was seen"
        assert ALICE_KEY not in json.dumps(events)
        records = [r for r in caplog.records if r.levelno >= logging.INFO]
        assert records and not [r for r in records if ALICE_KEY in r.getMessage()]
        stored = (tmp_path / "c.db").read_bytes()
        for extra in (tmp_path / "c.db-wal",):
            if extra.exists():
                stored += extra.read_bytes()
        assert b"Hello alice." in stored or b"Say hello" in stored
        assert ALICE_KEY.encode() not in stored

    async def test_a_key_is_not_used_once_the_admin_turns_personal_keys_off(
        self, listening: None, scripted_model: ScriptedModel, jp_fetch: Any, copilot: Any
    ) -> None:
        alice = Answers(jp_fetch, ALICE, [])
        await alice("personal-keys", "team-model", method="PUT", body={"key": ALICE_KEY})
        copilot.allow_personal_models = False
        scripted_model.script = ["Hello."]
        status, body = await alice(
            "conversations", method="POST", body={"agentId": "team-model", "chatOnly": True}
        )
        status, turn = await alice(
            "conversations",
            body["conversation"]["id"],
            "messages",
            method="POST",
            body={"text": "Say hello"},
        )
        scripted_model.check()
        assert scripted_model.authorizations == [f"Bearer {TEAM_KEY}"]
        assert await alice("personal-keys") == (200, {"allowed": False, "models": []})
