"""Invalid settings fail closed (docs/admin.md, "Invalid settings").

A real server: for every configurable trait of `CopilotApp`, an invalid value leaves the server
running with agents and tools off (feature switch off, kill switch engaged from the
configuration), names the setting in ``copilot/api/status`` and in an ERROR log line, never
logs the value at INFO or above, and keeps the valid settings given with it. Config files
(JSON and Python), the server's config object and the command line are each tried.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from traitlets import List, TraitError, Unicode, validate
from traitlets.config import Config

from jupyter_copilot.server.app import CopilotApp
from tests.conversations import SCRIPTED_AGENT, api
from tests.server import INVOKE, call_action

#: The invalid value given to every setting, wrapped where the setting would take it as it is
#: (text takes any string, a list takes one string as a list of one): no log line at INFO or
#: above may hold it.
BAD = "copilot-bad-value-7d41"

#: Every setting an administrator can write.
SETTINGS = sorted(CopilotApp.class_traits(config=True))

#: Valid settings written next to the invalid one; each must still apply.
COMPANIONS: dict[str, Any] = {
    "allowed_modes": ["plan"],
    "approval_timeout_seconds": 42.0,
    "conversations_db_path": "",
}

#: A well-formed edit: only a switch can refuse it before the page is asked.
EDIT = {
    "artifactId": "a",
    "cellId": "c",
    "expectedSourceHash": "sha256:" + "0" * 64,
    "newSource": "x = 1\n",
}

#: The beginning of a log line of the server: its level letter, its time.
LINE = re.compile(r"^\[([DIWEC]) \d{4}-\d\d-\d\d ")


def bad_value(name: str) -> Any:
    """A value that ``name`` does not accept."""
    trait = CopilotApp.class_traits()[name]
    if isinstance(trait, Unicode):
        return [BAD]
    if isinstance(trait, List):
        return {"value": BAD}
    return BAD


def companions_without(name: str) -> dict[str, Any]:
    """The valid companions, less the setting under test."""
    return {k: v for k, v in COMPANIONS.items() if k != name}


def loud_log(err: str) -> list[str]:
    """The server's log records at INFO or above (each with its continuation lines)."""
    records: list[str] = []
    keep = False
    for line in err.splitlines():
        start = LINE.match(line)
        if start:
            keep = start.group(1) != "D"
            if keep:
                records.append(line)
        elif keep and records:
            records[-1] += "\n" + line
    return records


@pytest.fixture
def config_files() -> dict[str, str]:
    """Files to write into the user's config directory before the server starts."""
    return {}


@pytest.fixture
def jp_server_config(
    jp_server_config: Any, config_files: dict[str, str], jp_config_dir: Path, capfd: Any
) -> Any:
    """The shared server config, with `config_files` written; the log is captured (capfd)."""
    for name, text in config_files.items():
        (jp_config_dir / name).write_text(text, encoding="utf-8")
    return jp_server_config


async def assert_fails_closed(jp_fetch: Any, capfd: Any, names: list[str]) -> None:
    """Status names ``names``; nothing can start or call a tool; the log names, never shows."""
    _, status = await api(jp_fetch, "status")
    assert status["configErrors"] == names
    assert status["enabled"] is False
    assert status["toolsEnabled"] is False
    assert status["killSwitch"] == {"engaged": True, "source": "config"}

    code, body = await api(
        jp_fetch, "conversations", method="POST", body={"agentId": "scripted", "mode": "autopilot"}
    )
    assert (code, body["error"]["code"]) == (503, "feature-disabled")
    code, body = await call_action(jp_fetch, INVOKE, {"data": EDIT})
    assert (code, body["error"]["code"]) == (503, "kill-switch")
    manifest = json.loads((await jp_fetch("copilot", "api", "manifest")).body)
    assert manifest == {"pages": [], "tools": []}

    loud = loud_log(capfd.readouterr().err)
    errors = [r for r in loud if r.startswith("[E ") and "jupyter-copilot" in r]
    assert len(errors) == 1, loud
    for name in names:
        assert f"CopilotApp.{name}" in errors[0]
    assert not [r for r in loud if BAD in r]


# -- every setting, through the server's config object ---------------------------------------


def invalid_config(name: str) -> dict[str, Any]:
    """``CopilotApp`` settings with the scripted agent, the companions and ``name`` invalid."""
    return {**OFFER, **companions_without(name), name: bad_value(name)}


#: The scripted agent on offer (so that only the switches can refuse a conversation).
OFFER: dict[str, Any] = {
    "agents": {"scripted": {"label": "Scripted", "command": [sys.executable, str(SCRIPTED_AGENT)]}},
    "discover_agents": False,
}


@pytest.mark.parametrize("name", SETTINGS)
def test_the_invalid_value_of_each_setting_is_refused_by_its_trait(name: str) -> None:
    with pytest.raises(TraitError):
        setattr(CopilotApp(), name, bad_value(name))


@pytest.mark.parametrize(
    ("name", "copilot_config"), [(n, invalid_config(n)) for n in SETTINGS], ids=SETTINGS
)
async def test_an_invalid_setting_turns_agents_and_tools_off_and_is_named(
    name: str, jp_fetch: Any, copilot: Any, capfd: Any
) -> None:
    await assert_fails_closed(jp_fetch, capfd, [name])
    for companion, value in companions_without(name).items():
        assert getattr(copilot, companion) == value, companion
    assert copilot.conversations.stored() is False  # the store was never opened


@pytest.mark.parametrize("copilot_config", [{**OFFER, **COMPANIONS, "agent_sandbx": "off"}])
async def test_a_misspelt_setting_is_named_like_an_invalid_one(
    jp_fetch: Any, copilot: Any, capfd: Any
) -> None:
    await assert_fails_closed(jp_fetch, capfd, ["agent_sandbx"])
    assert copilot.allowed_modes == ["plan"]


@pytest.mark.parametrize("copilot_config", [{**OFFER, **COMPANIONS}])
async def test_a_valid_configuration_is_applied_and_leaves_agents_and_tools_on(
    jp_fetch: Any, copilot: Any, capfd: Any
) -> None:
    _, status = await api(jp_fetch, "status")
    assert status["configErrors"] == []
    assert (status["enabled"], status["toolsEnabled"]) == (True, True)
    code, body = await api(
        jp_fetch, "conversations", method="POST", body={"agentId": "scripted", "mode": "plan"}
    )
    assert code == 201, body
    assert copilot.approval_timeout_seconds == 42.0
    assert not [r for r in loud_log(capfd.readouterr().err) if r.startswith("[E ")]


# -- config files, as administrators write them, and the command line ------------------------


@pytest.mark.parametrize(
    "config_files",
    [
        {
            "jupyter_copilot_config.py": (
                f"c.CopilotApp.agent_sandbox = {BAD!r}\n"
                "c.CopilotApp.allowed_modes = ['plan']\n"
                "c.CopilotApp.skills_paths.append('/opt/skills')\n"
                "c.CopilotApp.conversations_db_path = ''\n"
            )
        }
    ],
)
async def test_an_invalid_setting_in_a_python_config_file_fails_closed(
    jp_fetch: Any, copilot: Any, capfd: Any
) -> None:
    # traitlets alone ends the server's process here (a TraitError while loading a file).
    await assert_fails_closed(jp_fetch, capfd, ["agent_sandbox"])
    assert copilot.allowed_modes == ["plan"]
    assert copilot.skills_paths == ["/opt/skills"]  # a lazy append is applied once
    assert copilot.conversations_db_path == ""


@pytest.mark.parametrize(
    "config_files",
    [
        {
            "jupyter_copilot_config.json": json.dumps(
                {"CopilotApp": {"allowed_modes": ["plan", BAD], "approval_timeout_seconds": 42}}
            ),
            "jupyter_server_config.py": f"c.CopilotApp.agent_idle_timeout_seconds = {BAD!r}\n",
        }
    ],
)
async def test_invalid_settings_in_json_and_server_config_files_are_named_in_the_order_read(
    jp_fetch: Any, copilot: Any, capfd: Any
) -> None:
    await assert_fails_closed(jp_fetch, capfd, ["allowed_modes", "agent_idle_timeout_seconds"])
    assert copilot.approval_timeout_seconds == 42.0


@pytest.mark.parametrize(
    "jp_argv", [[f"--CopilotApp.agent_sandbox={BAD}", "--CopilotApp.approval_timeout_seconds=42"]]
)
async def test_an_invalid_setting_on_the_command_line_fails_closed(
    jp_fetch: Any, copilot: Any, capfd: Any
) -> None:
    await assert_fails_closed(jp_fetch, capfd, ["agent_sandbox"])
    assert copilot.approval_timeout_seconds == 42.0


# -- a refusal the screen cannot foresee ------------------------------------------------------


class _CrossChecked(CopilotApp):
    """A subclass whose cross-validator refuses what the trait alone accepts."""

    @validate("approval_timeout_seconds")
    def _at_least_a_minute(self, proposal: Any) -> Any:
        if proposal.value < 60:
            raise TraitError(f"{proposal.value} is too short")
        return proposal.value


def test_a_config_a_cross_validator_refuses_applies_none_of_its_settings() -> None:
    app = _CrossChecked()
    app.update_config(
        Config({"CopilotApp": {"approval_timeout_seconds": 5.0, "allowed_modes": ["plan"]}})
    )
    assert app.config_errors == ["approval_timeout_seconds", "allowed_modes"]
    assert app.allowed_modes == ["plan", "interactive", "autopilot"]  # the default, applied
    assert app.approval_timeout_seconds == 300.0
