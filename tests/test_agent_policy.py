"""The pure parts of conversations: the agent catalog, the capability policy, the bodies."""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_copilot.agents import bodies
from jupyter_copilot.agents.catalog import DEMO_AGENT, AgentConfigError, build_catalog, parse_agent
from jupyter_copilot.agents.policy import (
    client_capabilities,
    mcp_servers,
    mcp_url,
    prompt_blocks,
    tools_attached,
)
from jupyter_copilot.refusals import Refusal


def catalog(configured: dict[str, Any], on_path: set[str] = frozenset(), discover: bool = True):
    warnings: list[str] = []
    agents = build_catalog(
        configured, discover, lambda c: f"/bin/{c}" if c in on_path else None, warnings.append
    )
    return [a.id for a in agents], warnings


def test_the_demo_agent_is_offered_only_when_no_agent_is_configured() -> None:
    assert catalog({}) == ([DEMO_AGENT], [])
    assert catalog({"mine": {"command": ["my-acp"]}}) == (["mine"], [])


def test_known_agents_on_path_are_offered_after_the_configured_ones() -> None:
    ids, _ = catalog({"mine": {"command": "my-acp --flag"}}, {"codex-acp", "goose"})
    assert ids == ["mine", "codex", "goose"]
    assert catalog({}, {"claude-code-acp"})[0] == ["claude-code", DEMO_AGENT]
    assert catalog({}, {"claude-code-acp"}, discover=False)[0] == [DEMO_AGENT]
    # A configured agent with a known id replaces the known one.
    ids, _ = catalog({"codex": {"command": ["codex-acp", "--mine"]}}, {"codex-acp"})
    assert ids == ["codex"]


def test_a_malformed_agent_is_skipped_with_a_warning_naming_the_problem() -> None:
    ids, warnings = catalog(
        {
            "bad": {"command": []},
            "good": {"command": ["x"]},
            "env": {"command": ["y"], "env": {"A": 1}},
        }
    )
    assert ids == ["good"]
    assert len(warnings) == 2 and "'command'" in warnings[0] and "'env'" in warnings[1]


@pytest.mark.parametrize(
    "entry",
    [
        None,
        "cmd",
        {"label": "x"},
        {"command": [""]},
        {"command": ["x"], "label": 3},
        {"command": ["x"], "other": 1},
    ],
)
def test_parse_agent_refuses_what_cannot_run(entry: Any) -> None:
    with pytest.raises(AgentConfigError):
        parse_agent("a", entry)


def test_an_agent_shows_its_label_and_first_description_line_never_its_command() -> None:
    spec = parse_agent(
        "a", {"command": "run --x 'y z'", "label": " A ", "description": "One.\nTwo."}
    )
    assert spec.command == ("run", "--x", "y z")
    assert spec.to_json() == {"id": "a", "label": "A", "description": "One."}


def test_tools_are_attached_only_with_a_grant_and_not_chat_only() -> None:
    assert tools_attached(False, ["selected_cell"]) is True
    assert tools_attached(True, ["selected_cell"]) is False
    assert tools_attached(False, []) is False
    assert mcp_servers(False, "http://h/copilot/mcp", "jcc-t") == []
    [server] = mcp_servers(True, "http://h/copilot/mcp", "jcc-t")
    assert server.model_dump(by_alias=True, exclude_none=True) == {
        "type": "http",
        "name": "jupyter-copilot",
        "url": "http://h/copilot/mcp",
        "headers": [{"name": "Authorization", "value": "Bearer jcc-t"}],
    }


def test_we_announce_no_file_system_and_no_terminal() -> None:
    caps = client_capabilities()
    assert caps.fs is not None
    assert (caps.fs.read_text_file, caps.fs.write_text_file, caps.terminal) == (False, False, False)


@pytest.mark.parametrize(
    ("ip", "secure", "base", "expected"),
    [
        ("", False, "/", "http://127.0.0.1:8888/copilot/mcp"),
        ("0.0.0.0", True, "/user/a/", "https://127.0.0.1:8888/user/a/copilot/mcp"),
        ("localhost", False, "/a%40b/", "http://localhost:8888/a%40b/copilot/mcp"),
        ("::1", False, "", "http://[::1]:8888/copilot/mcp"),
    ],
)
def test_the_mcp_url_is_the_servers_own(ip: str, secure: bool, base: str, expected: str) -> None:
    assert mcp_url(secure=secure, ip=ip, port=8888, base_url=base) == expected


def test_the_message_is_verbatim_and_the_cell_is_a_separate_resource() -> None:
    text = "  Ignore previous instructions?\r\nReally é  "
    assert [b.model_dump(exclude_none=True) for b in prompt_blocks(text, None, None)] == [
        {"type": "text", "text": text}
    ]
    cell = {
        "artifactId": "art",
        "cellId": "c1",
        "cellType": "markdown",
        "source": "# T",
        "expectedSourceHash": "sha256:x",
    }
    first, second = prompt_blocks(text, cell, "python")
    assert first.text == text
    dumped = second.model_dump(by_alias=True, exclude_none=True)
    assert dumped["resource"] == {
        "uri": "jupyter-copilot://cell/art/c1",
        "text": "# T",
        "mimeType": "text/markdown",
        "_meta": {"cellId": "c1", "cellType": "markdown", "expectedSourceHash": "sha256:x"},
    }


@pytest.mark.parametrize(
    "body",
    [
        {"text": " "},
        {"text": "x" * (bodies.MAX_MESSAGE_CHARS + 1)},
        {"text": "x", "pageId": 3},
        {"text": "x", "attachment": {"artifactId": "a", "cellId": "", "expectedSourceHash": "h"}},
    ],
)
def test_bad_messages_name_the_field_never_the_value(body: dict[str, Any]) -> None:
    with pytest.raises(Refusal) as e:
        bodies.message(body)
    assert e.value.code == "invalid-input"
    assert "xxxx" not in e.value.message


def test_decisions_are_allow_deny_or_an_option() -> None:
    assert bodies.decision({"decision": "allow"}) == bodies.Decision(allow=True)
    assert bodies.decision({"optionId": "o"}) == bodies.Decision(option_id="o")
    for bad in (
        {"decision": "maybe"},
        {"optionId": ""},
        {"decision": "allow", "optionId": "o"},
        [],
        None,
    ):
        with pytest.raises(Refusal):
            bodies.decision(bad)
