"""The pure parts of conversations: the agent catalog, the capability policy, the bodies."""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_copilot.agents import bodies
from jupyter_copilot.agents.catalog import (
    DEMO_AGENT,
    AgentConfigError,
    FromEnv,
    available,
    build_catalog,
    parse_agent,
    resolve_env,
)
from jupyter_copilot.agents.policy import (
    agent_mode,
    client_capabilities,
    mcp_servers,
    mcp_url,
    prompt_blocks,
    tools_offered,
)
from jupyter_copilot.protocol.refusals import Refusal


def catalog(
    configured: dict[str, Any],
    on_path: set[str] = frozenset(),
    discover: bool = True,
    unguarded: bool = False,
):
    warnings: list[str] = []
    # Configured programs are installed (test_a_configured_agent_whose_program_is_missing_...).
    installed = set(on_path) | {"my-acp", "m", "a", "x", "y"}
    agents = build_catalog(
        configured,
        discover,
        lambda c: f"/bin/{c}" if c in installed else None,
        warnings.append,
        unguarded,
    )
    # The agents that can start; known agents that are not installed are listed after them
    # (test_known_agents_not_installed_are_listed_last_with_their_install_command).
    return [a.id for a in agents if a.unavailable is None], warnings


def test_the_demo_agent_is_offered_only_when_no_agent_is_configured() -> None:
    assert catalog({}) == ([DEMO_AGENT], [])
    assert catalog({"mine": {"command": ["my-acp"]}}) == (["mine"], [])


def test_known_agents_on_path_are_offered_after_the_configured_ones() -> None:
    ids, _ = catalog({"mine": {"command": "my-acp --flag"}}, {"gemini", "claude-agent-acp"})
    assert ids == ["mine", "claude-code", "gemini"]
    assert catalog({}, {"claude-code-acp"})[0] == ["claude-code", DEMO_AGENT]
    assert catalog({}, {"claude-code-acp"}, discover=False)[0] == [DEMO_AGENT]
    # A configured agent with a known id replaces the known one.
    ids, _ = catalog({"gemini": {"command": ["gemini", "--mine"]}}, {"gemini"})
    assert ids == ["gemini"]


def test_known_agents_not_installed_are_listed_last_with_their_install_command() -> None:
    agents = build_catalog({}, True, lambda c: "/bin/gemini" if c == "gemini" else None, print)
    assert [(a.id, a.unavailable is None) for a in agents] == [
        ("gemini", True),
        (DEMO_AGENT, True),
        ("claude-code", False),
    ]
    shown = agents[-1].to_json()
    install = "Not installed: npm install -g @agentclientprotocol/claude-agent-acp, then restart"
    assert shown["unavailable"].startswith(install)
    assert shown["description"] == shown["unavailable"]
    # An unguarded one is listed only where it would be offered, with the README's command.
    agents = build_catalog({}, True, lambda c: None, print, True)
    missing = {a.id: a.unavailable for a in agents if a.unavailable is not None}
    assert list(missing) == ["claude-code", "codex", "gemini", "goose"]
    assert "npm install -g @zed-industries/codex-acp" in str(missing["codex"])
    assert "npm install -g @google/gemini-cli" in str(missing["gemini"])
    # Without discovery nothing known is listed; the ids that can start come first for a
    # default (available()).
    assert [a.id for a in build_catalog({}, False, lambda c: None, print)] == [DEMO_AGENT]
    assert available(build_catalog({}, True, lambda c: None, print)) == [DEMO_AGENT]


def test_a_configured_agent_whose_program_is_missing_is_listed_in_its_place_but_cannot_start() -> (
    None
):
    configured = {
        "gone": {"command": ["/opt/agents/bin/gone-acp", "--acp"], "label": "Gone"},
        "here": {"command": ["here-acp"]},
    }
    agents = build_catalog(configured, False, lambda c: c if c == "here-acp" else None, print)
    assert [(a.id, a.unavailable is None) for a in agents] == [("gone", False), ("here", True)]
    shown = agents[0].to_json()
    assert shown["unavailable"] == (
        "Not installed: the program 'gone-acp' is not found; install it, then restart JupyterLab."
    )
    assert shown["description"] == shown["unavailable"] and "/opt" not in shown["unavailable"]
    assert available(agents) == ["here"]


def test_known_agents_run_their_current_command_and_the_old_name_still_works() -> None:
    def command(on_path: set[str]) -> tuple[str, ...]:
        agents = build_catalog(
            {"x": {"command": ["x"]}}, True, lambda c: c if c in on_path else None, print
        )
        [spec] = [a for a in agents[1:] if a.unavailable is None]
        return spec.command

    assert command({"claude-agent-acp", "claude-code-acp"}) == ("claude-agent-acp",)
    assert command({"claude-code-acp"}) == ("claude-code-acp",)
    assert command({"gemini"}) == ("gemini", "--acp")


def test_unguarded_known_agents_are_offered_only_when_the_admin_says_so() -> None:
    on_path = {"codex-acp", "goose", "gemini"}
    assert catalog({"m": {"command": "m"}}, on_path)[0] == ["m", "gemini"]
    assert catalog({"m": {"command": "m"}}, on_path, unguarded=True)[0] == [
        "m",
        "codex",
        "gemini",
        "goose",
    ]
    agents = build_catalog({}, True, lambda c: c if c in on_path else None, print, True)
    shown = {a.id: a.to_json() for a in agents}
    assert shown["codex"]["guarded"] is False and "not reviewed" in shown["codex"]["warning"]
    assert shown["gemini"] == {
        "id": "gemini",
        "label": "Gemini CLI",
        "description": "Google's Gemini CLI in ACP mode.",
        "guarded": True,
        "warning": None,
        "unavailable": None,
    }


def test_an_env_value_may_name_a_server_variable_instead_of_holding_a_key() -> None:
    spec = parse_agent(
        "a",
        {
            "command": ["a"],
            "env": {"KEY": {"fromEnv": "SERVER_KEY"}, "MODE": "x", "GONE": {"fromEnv": "UNSET"}},
        },
    )
    assert spec.env["KEY"] == FromEnv("SERVER_KEY")
    assert resolve_env(spec.env, {"SERVER_KEY": "secret"}) == {"KEY": "secret", "MODE": "x"}
    for bad in ({"K": {"fromEnv": ""}}, {"K": {"fromEnv": "A", "x": 1}}, {"K": 3}):
        with pytest.raises(AgentConfigError):
            parse_agent("a", {"command": ["a"], "env": bad})


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
    assert spec.to_json() == {
        "id": "a",
        "label": "A",
        "description": "One.",
        "guarded": True,
        "warning": None,
        "unavailable": None,
    }


def test_tools_are_attached_only_with_a_grant_and_not_chat_only() -> None:
    assert tools_offered(False, ["selected_cell"]) is True
    assert tools_offered(True, ["selected_cell"]) is False
    assert tools_offered(False, []) is False
    assert mcp_servers(False, "http://h/copilot/mcp", "jcc-t") == []
    [server] = mcp_servers(True, "http://h/copilot/mcp", "jcc-t")
    assert server.model_dump(by_alias=True, exclude_none=True) == {
        "type": "http",
        "name": "jupyter-copilot",
        "url": "http://h/copilot/mcp",
        "headers": [{"name": "Authorization", "value": "Bearer jcc-t"}],
    }


def test_we_announce_file_reads_writes_and_terminals_so_adapters_route_them_to_us() -> None:
    caps = client_capabilities()
    assert caps.fs is not None
    assert (caps.fs.read_text_file, caps.fs.write_text_file, caps.terminal) == (True, True, True)


@pytest.mark.parametrize(
    ("available", "read_only", "expected"),
    [
        (("auto", "default", "acceptEdits", "plan", "bypassPermissions"), False, "default"),
        (("auto", "default", "acceptEdits", "plan", "bypassPermissions"), True, "plan"),
        (("yolo", "autoEdit"), False, None),
        (("auto",), True, None),
        ((), False, None),
    ],
)
def test_the_agent_is_held_in_its_asking_mode_or_its_plan_mode_never_an_unsafe_one(
    available: tuple[str, ...], read_only: bool, expected: str | None
) -> None:
    assert agent_mode(available, "default", "plan", read_only) == expected
    # A profile can name an unsafe mode by mistake: it is still never chosen.
    assert agent_mode(("yolo",), "yolo", "yolo", read_only) is None


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
        "uri": "jupyter-copilot://cell/art/c1?expectedSourceHash=sha256:x",
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


def test_an_agent_id_of_the_wrong_type_is_bad_input_not_a_crash() -> None:
    # Found by tests/test_fuzz.py: a list was looked up in a set (500 instead of 400).
    for bad in ([], {}, 3, [["a"]]):
        with pytest.raises(Refusal) as e:
            bodies.settings({"agentId": bad}, ["a"])
        assert e.value.code == "invalid-input"


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
