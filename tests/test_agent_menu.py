"""An honest Agent menu: known agents that are not installed are listed as such, with their
install command, and cannot be chosen; the demo agent stays the default.

The server starts with a PATH of the test's own, so that which known agents are "installed"
does not depend on the machine, and with unguarded agents allowed, so that what is listed
does not depend on whether the sandbox works here (without it the known agents whose own
tools read files are unguarded, and not offered at all otherwise).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from jupyter_copilot.agents.catalog import available
from tests.conversations import api, create

CLAUDE_INSTALL = (
    "Not installed: npm install -g @agentclientprotocol/claude-agent-acp, then restart JupyterLab."
)
CODEX_INSTALL = "Not installed: npm install -g @zed-industries/codex-acp, then restart JupyterLab."
GEMINI_INSTALL = "Not installed: npm install -g @google/gemini-cli, then restart JupyterLab."


@pytest.fixture
def path_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty folder as the server's whole PATH: no known agent is installed."""
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", str(folder))
    return folder


class TestNothingInstalled:
    @pytest.fixture
    def copilot_config(self, path_dir: Path) -> dict[str, Any]:
        return {"discover_models": False, "allow_unguarded_agents": True}

    async def test_known_agents_are_listed_as_not_installed_after_the_demo(
        self, jp_fetch: Any
    ) -> None:
        status, body = await api(jp_fetch, "agents")
        assert status == 200
        listed = {a["id"]: a for a in body["agents"]}
        assert list(listed) == ["demo", "claude-code", "codex", "gemini", "goose"]
        assert listed["demo"]["unavailable"] is None
        assert listed["claude-code"]["unavailable"] == CLAUDE_INSTALL
        assert listed["claude-code"]["description"] == CLAUDE_INSTALL
        assert listed["gemini"]["unavailable"] == GEMINI_INSTALL
        assert body["defaultAgent"] == "demo"
        # The policy still lists what the administrator allows, installed or not.
        assert body["policy"]["allowedAgents"] == list(listed)

    async def test_an_agent_that_is_not_installed_cannot_be_chosen(self, jp_fetch: Any) -> None:
        status, body = await api(
            jp_fetch, "conversations", method="POST", body={"agentId": "gemini"}
        )
        assert status == 400
        assert body["error"] == {
            "code": "invalid-input",
            "message": f"The agent 'Gemini CLI' cannot be used. {GEMINI_INSTALL}",
        }
        conversation = await create(jp_fetch)
        _, detail = await api(jp_fetch, "conversations", conversation)
        assert detail["conversation"]["agentId"] == "demo"
        status, body = await api(
            jp_fetch,
            "conversations",
            conversation,
            method="PATCH",
            body={"agentId": "claude-code"},
        )
        assert (status, body["error"]["code"]) == (400, "invalid-input")
        assert CLAUDE_INSTALL in body["error"]["message"]
        _, detail = await api(jp_fetch, "conversations", conversation)
        assert detail["conversation"]["agentId"] == "demo"


class TestOneInstalled:
    @pytest.fixture
    def copilot_config(self, path_dir: Path) -> dict[str, Any]:
        gemini = path_dir / "gemini"
        gemini.write_text("#!/bin/sh\nexit 1\n")
        gemini.chmod(0o755)
        # The admin names an agent that is not installed: the default falls back.
        return {
            "discover_models": False,
            "allow_unguarded_agents": True,
            "default_agent": "claude-code",
        }

    async def test_an_installed_agent_comes_first_and_a_missing_default_falls_back(
        self, jp_fetch: Any, copilot: Any, caplog: pytest.LogCaptureFixture
    ) -> None:
        _, body = await api(jp_fetch, "agents")
        assert [(a["id"], a["unavailable"]) for a in body["agents"]] == [
            ("gemini", None),
            ("demo", None),
            ("claude-code", CLAUDE_INSTALL),
            ("codex", CODEX_INSTALL),
            (
                "goose",
                "Not installed: see block.github.io/goose for its installer, then restart "
                "JupyterLab.",
            ),
        ]
        assert body["defaultAgent"] == "gemini"
        # What the server logs at start (``CopilotApp.initialize_settings``).
        catalog = copilot.conversations.catalog
        copilot.log.addHandler(caplog.handler)
        try:
            with caplog.at_level(logging.WARNING):
                copilot.admin_policy.warn_about_defaults(list(catalog), available(catalog.values()))
        finally:
            copilot.log.removeHandler(caplog.handler)
        warned = [r.getMessage() for r in caplog.records if "default_agent" in r.getMessage()]
        assert warned == [
            "jupyter-copilot: CopilotApp.default_agent 'claude-code' is not an allowed agent on "
            "offer that can start; new conversations use 'gemini'."
        ]


class TestOnlyMissingAgentsAllowed:
    @pytest.fixture
    def copilot_config(self, path_dir: Path) -> dict[str, Any]:
        return {
            "discover_models": False,
            "allow_unguarded_agents": True,
            "allowed_agents": ["claude-code"],
        }

    async def test_a_new_conversation_says_none_is_installed(self, jp_fetch: Any) -> None:
        _, body = await api(jp_fetch, "agents")
        assert [a["id"] for a in body["agents"]] == ["claude-code"]
        assert body["defaultAgent"] is None
        status, body = await api(jp_fetch, "conversations", method="POST", body={})
        assert status == 400
        assert body["error"] == {
            "code": "invalid-input",
            "message": "None of the agents this server allows is installed: the Agent menu "
            "says how to install them.",
        }


class TestAConfiguredAgentIsMissing:
    @pytest.fixture
    def copilot_config(self, path_dir: Path, tmp_path: Path) -> dict[str, Any]:
        # The admin's own entries: one program was never installed, the other was.
        here = path_dir / "here-acp"
        here.write_text("#!/bin/sh\nexit 1\n")
        here.chmod(0o755)
        return {
            "discover_models": False,
            "agents": {
                "gone": {"command": [str(tmp_path / "opt" / "gone-acp")], "label": "Gone"},
                "here": {"command": ["here-acp"], "label": "Here"},
            },
        }

    async def test_it_is_listed_in_its_place_as_not_installed_and_cannot_be_chosen(
        self, jp_fetch: Any
    ) -> None:
        missing = (
            "Not installed: the program 'gone-acp' is not found; install it, then restart "
            "JupyterLab."
        )
        _, body = await api(jp_fetch, "agents")
        assert [(a["id"], a["unavailable"]) for a in body["agents"]] == [
            ("gone", missing),
            ("here", None),
        ]
        assert body["defaultAgent"] == "here"
        status, body = await api(jp_fetch, "conversations", method="POST", body={"agentId": "gone"})
        assert (status, body["error"]) == (
            400,
            {"code": "invalid-input", "message": f"The agent 'Gone' cannot be used. {missing}"},
        )
