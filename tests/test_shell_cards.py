"""A shell card shows what will run, and what runs is what it showed (docs/security.md,
"Cards and diffs").

A real server and the real scripted ACP agent, which sends ``terminal/create`` with every
field ACP has (``command``, ``args``, ``env``, ``cwd``); the JupyterLab page is scripted over
the real bridge. The hostile requests are the ones seen in an attack: an ``env`` whose
``PATH`` points at the agent's own ``ls``, a command that hides text behind direction
controls, and a command too long to show.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from jupyter_copilot.agents.shell import MAX_COMMAND_CHARS
from tests.conversations import agent_log, api, create, scripted_agents, send
from tests.pages import ScriptedPage, next_of, notebook_state

#: What the agent's own ``ls`` would write if it ever ran.
PLANTED = "PLANTED_RAN.txt"


@pytest.fixture
def log(tmp_path: Path) -> Path:
    """Where the scripted agent records what it received."""
    return tmp_path / "agent.jsonl"


@pytest.fixture
def copilot_config(log: Path) -> dict[str, Any]:
    """Only the scripted agent."""
    return scripted_agents(log)


@pytest.fixture
def planted(tmp_path: Path, jp_root_dir: Path) -> Path:
    """A folder holding the agent's own ``ls`` and ``sh``, which would write into the root."""
    folder = tmp_path / "agent-bin"
    folder.mkdir()
    for name in ("ls", "sh", "echo"):
        program = folder / name
        program.write_text(f"#!/bin/sh\ntouch {jp_root_dir / PLANTED}\n", encoding="utf-8")
        program.chmod(0o755)
    return folder


async def page_of(jp_ws_fetch: Any) -> ScriptedPage:
    """A connected, focused page that shows cards."""
    page = await ScriptedPage.connect(jp_ws_fetch, "p-1")
    await page.send_state(notebook_state("a.ipynb"))
    return page


def terminal(**spec: Any) -> str:
    """The scripted agent's message for one ``terminal/create``."""
    return f"terminal {json.dumps(spec)}"


def refusal_of(log: Path) -> str | None:
    """The refusal code of the agent's last ``terminal/create``, ``None`` if it went on."""
    entry = agent_log(log, "terminal")[-1]
    return entry["code"] if entry["refused"] else None


async def decide(jp_fetch: Any, card: dict[str, Any], decision: str) -> None:
    status, body = await api(
        jp_fetch, "approvals", card["requestId"], method="POST", body={"decision": decision}
    )
    assert status == 200, body


async def no_card(page: ScriptedPage) -> None:
    with pytest.raises(asyncio.TimeoutError):
        await next_of(page, "approval", timeout=0.3)


def notices(events: list[dict[str, Any]]) -> list[str]:
    return [e["text"] for e in events if e["type"] == "notice"]


# -- what runs is what the card shows ----------------------------------------------------------


async def test_the_card_names_the_program_that_runs_and_the_agents_env_is_not_used(
    jp_fetch: Any, jp_ws_fetch: Any, jp_root_dir: Path, log: Path, planted: Path
) -> None:
    (jp_root_dir / "data").mkdir()
    (jp_root_dir / "data" / "rows.csv").write_text("a\n")
    page = await page_of(jp_ws_fetch)
    conversation = await create(jp_fetch, mode="interactive")
    env = {
        "PATH": str(planted),
        "LD_PRELOAD": str(planted / "evil.so"),
        "BASH_ENV": str(planted / "ls"),
        "CANARY_SET_BY_AGENT": "1",
    }
    message = terminal(command="ls", args=["-1"], env=env, cwd="data")
    turn = asyncio.ensure_future(send(jp_fetch, conversation, message, page_id="p-1"))
    card = (await next_of(page, "approval"))["request"]
    system_ls = shutil.which("ls")
    assert system_ls is not None and not system_ls.startswith(str(planted))
    assert card["kind"] == "shell"
    assert card["details"] == {
        "conversationId": conversation,
        "command": "ls -1",
        "program": os.path.normpath(system_ls),
        "folder": "data",
        "ignoredEnv": ["BASH_ENV", "CANARY_SET_BY_AGENT", "LD_PRELOAD", "PATH"],
    }
    await decide(jp_fetch, card, "allow")
    await asyncio.wait_for(turn, 30)
    done = agent_log(log, "terminal-done")[-1]
    assert done == {"kind": "terminal-done", "exitCode": 0, "output": "rows.csv\n"}
    assert not (jp_root_dir / PLANTED).exists()
    page.close()


async def test_the_command_gets_the_servers_trimmed_environment_and_nothing_of_the_agents(
    jp_fetch: Any, jp_ws_fetch: Any, log: Path, planted: Path
) -> None:
    page = await page_of(jp_ws_fetch)
    conversation = await create(jp_fetch, mode="interactive")
    env = {"PATH": str(planted), "CANARY_SET_BY_AGENT": "1", "PYTHONPATH": str(planted)}
    turn = asyncio.ensure_future(
        send(jp_fetch, conversation, terminal(command="env", args=[], env=env), page_id="p-1")
    )
    card = (await next_of(page, "approval"))["request"]
    # Without arguments, the command is a line for /bin/sh, named as the program.
    assert card["details"]["program"] == "/bin/sh"
    assert card["details"]["command"] == "env"
    await decide(jp_fetch, card, "allow")
    await asyncio.wait_for(turn, 30)
    output = agent_log(log, "terminal-done")[-1]["output"]
    names = {line.split("=", 1)[0] for line in output.splitlines() if "=" in line}
    assert "CANARY_SET_BY_AGENT" not in names and "PYTHONPATH" not in names
    assert f"PATH={os.environ['PATH']}" in output.splitlines()
    assert "JUPYTER_TOKEN" not in names
    page.close()


async def test_a_program_named_with_a_slash_is_found_in_the_commands_folder(
    jp_fetch: Any, jp_ws_fetch: Any, jp_root_dir: Path, log: Path
) -> None:
    tools = jp_root_dir / "tools"
    tools.mkdir()
    script = tools / "count.sh"
    script.write_text('#!/bin/sh\necho "counted $1"\n', encoding="utf-8")
    script.chmod(0o755)
    page = await page_of(jp_ws_fetch)
    conversation = await create(jp_fetch, mode="interactive")
    turn = asyncio.ensure_future(
        send(
            jp_fetch,
            conversation,
            terminal(command="./count.sh", args=["rows"], cwd="tools"),
            page_id="p-1",
        )
    )
    card = (await next_of(page, "approval"))["request"]
    assert card["details"]["program"] == str(Path(os.path.realpath(tools)) / "count.sh")
    assert card["details"]["command"] == "./count.sh rows"
    await decide(jp_fetch, card, "allow")
    await asyncio.wait_for(turn, 30)
    assert agent_log(log, "terminal-done")[-1]["output"] == "counted rows\n"
    page.close()


async def test_a_program_that_is_not_on_the_path_is_refused_without_a_card(
    jp_fetch: Any, jp_ws_fetch: Any, log: Path, planted: Path
) -> None:
    page = await page_of(jp_ws_fetch)
    conversation = await create(jp_fetch, mode="interactive")
    # Only the agent's PATH has it, and that PATH is not used.
    await send(
        jp_fetch,
        conversation,
        terminal(command="agent-only-tool", args=["x"], env={"PATH": str(planted)}),
    )
    assert refusal_of(log) == "invalid-input"
    assert "was found on the PATH" in agent_log(log, "terminal")[-1]["message"]
    await no_card(page)
    page.close()


# -- what cannot be shown as it runs is refused ------------------------------------------------


@pytest.mark.parametrize(
    "spec",
    [
        # Reads as a comment after "X=#"; the shell runs touch.
        {"command": "X=#\u202e\u2066 touch BIDI_RAN.txt \u2069\u2066 echo hello"},
        {"command": "touch", "args": ["BIDI_RAN\u202e.txt"]},
        {"command": "touch\u2067", "args": ["BIDI_RAN.txt"]},
        {"command": "touch BIDI_RAN.txt \u200f"},
        {"command": "touch BIDI_RAN.txt \u061c"},
    ],
    ids=["shell-line", "argument", "program", "rlm", "arabic-letter-mark"],
)
async def test_a_command_holding_a_direction_control_is_refused_without_a_card(
    jp_fetch: Any, jp_ws_fetch: Any, jp_root_dir: Path, log: Path, spec: dict[str, Any]
) -> None:
    page = await page_of(jp_ws_fetch)
    conversation = await create(jp_fetch, mode="autopilot")
    events = await send(jp_fetch, conversation, terminal(**spec), page_id="p-1")
    assert refusal_of(log) == "invalid-input"
    assert any("change the direction of text" in n for n in notices(events))
    await no_card(page)
    assert not (jp_root_dir / "BIDI_RAN.txt").exists()
    assert not list(jp_root_dir.glob("BIDI_RAN*"))
    page.close()


async def test_a_zero_width_character_reaches_the_card_as_it_is_for_the_page_to_show(
    jp_fetch: Any, jp_ws_fetch: Any, log: Path
) -> None:
    page = await page_of(jp_ws_fetch)
    conversation = await create(jp_fetch, mode="interactive")
    line = "echo safe\u200b; echo\u2060 done"
    turn = asyncio.ensure_future(
        send(jp_fetch, conversation, terminal(command=line), page_id="p-1")
    )
    card = (await next_of(page, "approval"))["request"]
    assert card["details"]["command"] == line
    await decide(jp_fetch, card, "deny")
    events = await asyncio.wait_for(turn, 30)
    assert refusal_of(log) == "denied"
    assert any("did not allow" in n for n in notices(events))
    page.close()


async def test_the_transcripts_tool_card_shows_hidden_characters_as_escapes(
    jp_fetch: Any, jp_ws_fetch: Any, log: Path
) -> None:
    page = await page_of(jp_ws_fetch)
    conversation = await create(jp_fetch, mode="interactive")
    turn = asyncio.ensure_future(
        send(jp_fetch, conversation, terminal(command="echo a\u200bb"), page_id="p-1")
    )
    card = (await next_of(page, "approval"))["request"]
    await decide(jp_fetch, card, "allow")
    events = await asyncio.wait_for(turn, 30)
    titles = {e["title"] for e in events if e["type"] == "tool" and e.get("title")}
    assert titles == {"$ echo a\u27e8U+200B\u27e9b"}
    page.close()


async def test_a_routed_command_over_4000_characters_is_refused_without_a_card(
    jp_fetch: Any, jp_ws_fetch: Any, jp_root_dir: Path, log: Path
) -> None:
    page = await page_of(jp_ws_fetch)
    conversation = await create(jp_fetch, mode="interactive")
    # Exactly the cap is shown whole.
    line = "echo " + "x" * (MAX_COMMAND_CHARS - len("echo "))
    assert len(line) == MAX_COMMAND_CHARS == 4000
    turn = asyncio.ensure_future(
        send(jp_fetch, conversation, terminal(command=line), page_id="p-1")
    )
    card = (await next_of(page, "approval"))["request"]
    assert card["details"]["command"] == line
    await decide(jp_fetch, card, "deny")
    await asyncio.wait_for(turn, 30)
    # One more character, as a line or as arguments, is refused before any card.
    for spec in (
        {"command": line + "x"},
        {"command": "touch", "args": ["LONG_RAN.txt", "y" * MAX_COMMAND_CHARS]},
    ):
        events = await send(jp_fetch, conversation, terminal(**spec), page_id="p-1")
        assert refusal_of(log) == "over-budget"
        assert any("longer than 4000 characters" in n for n in notices(events))
        await no_card(page)
    assert not (jp_root_dir / "LONG_RAN.txt").exists()
    page.close()


async def test_the_agents_own_command_request_with_a_direction_control_is_rejected_at_once(
    jp_fetch: Any, jp_ws_fetch: Any, log: Path
) -> None:
    page = await page_of(jp_ws_fetch)
    conversation = await create(jp_fetch, mode="interactive")
    events = await send(
        jp_fetch,
        conversation,
        "permission-kind execute X=#\u202e touch BIDI_RAN.txt",
        page_id="p-1",
    )
    assert agent_log(log, "permission")[-1]["chose"] == "not-now"
    assert any("change the direction of text" in n for n in notices(events))
    await no_card(page)
    page.close()
