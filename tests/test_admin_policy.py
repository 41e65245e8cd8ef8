"""The administrator's policy of side-panel conversations (docs/admin.md, "Policy").

A real server with real scripted ACP agents: what the policy does not allow ends
``not-permitted`` on creation, on change and on every message, and ``GET copilot/api/agents``
offers only what it allows.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conversations import SCRIPTED_AGENT, agent_log, api, create, reply_of, send


@pytest.fixture
def log(tmp_path: Path) -> Path:
    """Where the scripted agents record what they received."""
    return tmp_path / "agent.jsonl"


@pytest.fixture
def copilot_config(request: pytest.FixtureRequest, log: Path) -> dict[str, Any]:
    """Two scripted agents, and the policy the test is parametrized with."""
    agent = {
        "command": [sys.executable, str(SCRIPTED_AGENT)],
        "env": {"SCRIPTED_AGENT_LOG": str(log)},
    }
    return {
        "agents": {
            "scripted": {"label": "Scripted agent", **agent},
            "other": {"label": "Other agent", **agent},
        },
        "discover_agents": False,
        **getattr(request, "param", {}),
    }


def policy(**settings: Any) -> Any:
    """Parametrize the test's server with these ``CopilotApp`` policy settings."""
    return pytest.mark.parametrize("copilot_config", [settings], indirect=True)


async def refused(jp_fetch: Any, *path: str, method: str, body: Any) -> str:
    """The refusal code of a call that must be refused with 403."""
    status, answer = await api(jp_fetch, *path, method=method, body=body)
    assert status == 403, answer
    return str(answer["error"]["code"])


async def test_without_a_policy_everything_is_offered(jp_fetch: Any) -> None:
    _, body = await api(jp_fetch, "agents")
    assert [a["id"] for a in body["agents"]] == ["scripted", "other"]
    assert body["policy"] == {
        "allowedAgents": ["scripted", "other"],
        "allowedModes": ["plan", "interactive", "autopilot"],
        "allowedContextRefs": [
            "selected_cell",
            "active_notebook",
            "cell_outputs",
            "kernel_variables",
            "files",
        ],
        "restricted": False,
    }


@policy(allowed_agents=["other"])
async def test_an_agent_outside_allowed_agents_is_not_offered_and_not_permitted(
    jp_fetch: Any,
) -> None:
    _, body = await api(jp_fetch, "agents")
    assert [a["id"] for a in body["agents"]] == ["other"]
    assert body["defaultAgent"] == "other"
    assert body["policy"]["allowedAgents"] == ["other"] and body["policy"]["restricted"]
    body = {"agentId": "scripted"}
    assert await refused(jp_fetch, "conversations", method="POST", body=body) == "not-permitted"
    conversation = await create(jp_fetch, chatOnly=True)
    _, detail = await api(jp_fetch, "conversations", conversation)
    assert detail["conversation"]["agentId"] == "other"
    path = ("conversations", conversation)
    assert await refused(jp_fetch, *path, method="PATCH", body=body) == "not-permitted"
    # An agent that is not configured at all is bad input, not a policy matter.
    status, answer = await api(jp_fetch, "conversations", method="POST", body={"agentId": "x"})
    assert (status, answer["error"]["code"]) == (400, "invalid-input")


@policy(allowed_modes=["plan", "interactive"])
async def test_a_mode_outside_allowed_modes_is_not_offered_and_not_permitted(
    jp_fetch: Any,
) -> None:
    _, body = await api(jp_fetch, "agents")
    assert [m["id"] for m in body["modes"]] == ["plan", "interactive"]
    assert body["policy"]["allowedModes"] == ["plan", "interactive"]
    autopilot = {"mode": "autopilot"}
    code = await refused(jp_fetch, "conversations", method="POST", body=autopilot)
    assert code == "not-permitted"
    conversation = await create(jp_fetch, mode="plan")
    path = ("conversations", conversation)
    assert await refused(jp_fetch, *path, method="PATCH", body=autopilot) == "not-permitted"
    status, _ = await api(jp_fetch, *path, method="PATCH", body={"mode": "interactive"})
    assert status == 200


@policy(allowed_context_refs=["selected_cell"])
async def test_a_context_ref_outside_allowed_context_refs_is_not_offered_and_not_permitted(
    jp_fetch: Any,
) -> None:
    _, body = await api(jp_fetch, "agents")
    assert [r["id"] for r in body["contextRefs"]] == ["selected_cell"]
    assert body["policy"]["allowedContextRefs"] == ["selected_cell"]
    wide = {"contextRefs": ["selected_cell", "active_notebook"]}
    assert await refused(jp_fetch, "conversations", method="POST", body=wide) == "not-permitted"
    conversation = await create(jp_fetch, contextRefs=["selected_cell"])
    path = ("conversations", conversation)
    files = {"contextRefs": ["files"]}
    assert await refused(jp_fetch, *path, method="PATCH", body=files) == "not-permitted"


@policy(
    allowed_modes=["plan", "interactive"],
    allowed_context_refs=["selected_cell", "active_notebook"],
    default_agent="other",
    default_mode="autopilot",
    default_context_refs=["active_notebook", "files"],
)
async def test_defaults_outside_the_policy_fall_back_with_a_warning(
    jp_fetch: Any, copilot: Any, caplog: pytest.LogCaptureFixture
) -> None:
    _, body = await api(jp_fetch, "agents")
    assert body["defaultAgent"] == "other"
    assert body["defaults"] == {"contextRefs": ["active_notebook"], "mode": "plan"}
    conversation = await create(jp_fetch)
    _, detail = await api(jp_fetch, "conversations", conversation)
    settings = detail["conversation"]
    assert (settings["agentId"], settings["mode"], settings["contextRefs"]) == (
        "other",
        "plan",
        ["active_notebook"],
    )
    copilot.log.addHandler(caplog.handler)
    try:
        with caplog.at_level(logging.WARNING):
            copilot.admin_policy.warn_about_defaults(list(copilot.conversations.catalog))
    finally:
        copilot.log.removeHandler(caplog.handler)
    warnings = " ".join(r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING)
    assert "default_mode 'autopilot'" in warnings and "use 'plan'" in warnings
    assert "default_context_refs" in warnings and "files" in warnings


@policy(default_agent="nope")
async def test_a_default_agent_not_on_offer_falls_back_to_the_first(jp_fetch: Any) -> None:
    _, body = await api(jp_fetch, "agents")
    assert body["defaultAgent"] == "scripted"


async def test_tightening_the_policy_in_a_live_config_file_refuses_the_next_message(
    jp_fetch: Any, jp_config_dir: Path, log: Path, copilot: Any
) -> None:
    conversation = await create(
        jp_fetch, mode="autopilot", contextRefs=["selected_cell"], chatOnly=True
    )
    assert reply_of(await send(jp_fetch, conversation, "Reply with the word one")) == "one"
    prompts = len(agent_log(log, "prompt"))
    config = jp_config_dir / "jupyter_copilot_config.json"
    config.write_text(json.dumps({"CopilotApp": {"allowed_modes": ["plan", "interactive"]}}))
    path = ("conversations", conversation, "messages")
    message = {"text": "Reply with the word two"}
    assert await refused(jp_fetch, *path, method="POST", body=message) == "not-permitted"
    _, body = await api(jp_fetch, "agents")
    assert [m["id"] for m in body["modes"]] == ["plan", "interactive"]
    # The person switches to an allowed mode and goes on.
    status, _ = await api(
        jp_fetch, "conversations", conversation, method="PATCH", body={"mode": "interactive"}
    )
    assert status == 200
    assert reply_of(await send(jp_fetch, conversation, "Reply with the word two")) == "two"
    # Tightening the context references refuses the next message as well, and the agent's
    # next tool call (in a turn that was already running) gets only what is still allowed.
    tighter = {"allowed_context_refs": ["active_notebook"], "allowed_modes": ["plan"]}
    config.write_text(json.dumps({"CopilotApp": tighter}))
    assert await refused(jp_fetch, *path, method="POST", body=message) == "not-permitted"
    caller = copilot.conversations.caller(
        copilot.conversations.get("owner", conversation), lambda: None
    )
    assert (caller.context_refs, caller.approval_mode) == (frozenset(), "plan")
    # ... and an agent outside the allowed ones too.
    config.write_text(json.dumps({"CopilotApp": {"allowed_agents": ["other"]}}))
    assert await refused(jp_fetch, *path, method="POST", body=message) == "not-permitted"
    assert len(agent_log(log, "prompt")) == prompts + 1
    # A JSON file cannot widen the policy beyond itself, and a broken value allows nothing.
    config.write_text(json.dumps({"CopilotApp": {"allowed_modes": "all"}}))
    _, body = await api(jp_fetch, "agents")
    assert body["modes"] == [] and body["defaults"]["mode"] is None
    code = await refused(jp_fetch, "conversations", method="POST", body={})
    assert code == "not-permitted"
    config.unlink()
    _, body = await api(jp_fetch, "agents")
    assert len(body["modes"]) == 3
