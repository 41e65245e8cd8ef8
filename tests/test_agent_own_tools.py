"""An agent's own file, shell and permission requests, held to the conversation's mode.

A real server and a real ACP agent subprocess (scripted) that asks us, over ACP, to read and
write files and to run commands, and sends its own permission requests and mode changes.
The JupyterLab page is scripted over the real bridge. See docs/security.md, "Agents' own
tools".
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from jupyter_copilot.agents.sandbox import AUTO, OFF, Sandbox
from tests.conversations import agent_log, api, create, end_of, reply_of, scripted_agents, send
from tests.pages import ScriptedPage, next_of, notebook_state

SECRET = "canary-own-tools-secret-73"


@pytest.fixture
def log(tmp_path: Path) -> Path:
    """Where the scripted agent records what it received."""
    return tmp_path / "agent.jsonl"


@pytest.fixture
def agent_env() -> dict[str, str]:
    """Extra environment of the scripted agent; a test may add to it."""
    return {}


@pytest.fixture
def copilot_config(log: Path, agent_env: dict[str, str]) -> dict[str, Any]:
    """Only the scripted agent, with the test's environment."""
    config = scripted_agents(log)
    config["agents"]["scripted"]["env"].update(agent_env)
    return config


@pytest.fixture
def files(jp_root_dir: Path, tmp_path: Path) -> dict[str, Path]:
    """A text file, a notebook, a secret outside the root and a link to it."""
    (jp_root_dir / "notes.txt").write_text("first line\nsecond line\n", encoding="utf-8")
    (jp_root_dir / "a.ipynb").write_text('{"cells": []}', encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET, encoding="utf-8")
    (jp_root_dir / "link.txt").symlink_to(outside / "secret.txt")
    return {"notes": jp_root_dir / "notes.txt", "secret": outside / "secret.txt"}


async def page_of(jp_ws_fetch: Any) -> ScriptedPage:
    """A connected, focused page that shows cards and file reviews."""
    page = await ScriptedPage.connect(jp_ws_fetch, "p-1")
    await page.send_state(notebook_state("a.ipynb"))
    return page


def refusal_of(log: Path, what: str) -> str | None:
    """The refusal code of the agent's last ``what`` request, ``None`` if it went through."""
    entry = agent_log(log, what)[-1]
    return entry["code"] if entry["refused"] else None


def write(path: Any, content: str) -> str:
    """The scripted agent's command to write ``content`` to ``path`` through us."""
    return f"write {path} {json.dumps(content)}"


def notices(events: list[dict[str, Any]]) -> list[str]:
    return [e["text"] for e in events if e["type"] == "notice"]


# -- reading files -----------------------------------------------------------------------------


async def test_a_file_read_needs_the_files_grant_and_stays_inside_the_root(
    jp_fetch: Any, jp_root_dir: Path, files: dict[str, Path], log: Path
) -> None:
    notes = str(files["notes"])
    without = await create(jp_fetch, contextRefs=["selected_cell"])
    events = await send(jp_fetch, without, f"read {notes}")
    assert refusal_of(log, "read") == "blocked"
    assert "files" in notices(events)[0]

    granted = await create(jp_fetch, contextRefs=["files"])
    await send(jp_fetch, granted, f"read {notes}")
    assert agent_log(log, "read")[-1]["answer"]["content"] == "first line\nsecond line\n"
    # ACP's line and limit are honoured by the agent's own requests; a relative path works.
    await send(jp_fetch, granted, "read notes.txt")
    assert refusal_of(log, "read") is None

    for path, code in (
        (str(files["secret"]), "outside-root"),
        (str(jp_root_dir / "link.txt"), "outside-root"),
        (str(jp_root_dir / ".." / "outside" / "secret.txt"), "outside-root"),
        (str(jp_root_dir / "a.ipynb"), "notebook-file"),
    ):
        events = await send(jp_fetch, granted, f"read {path}")
        assert refusal_of(log, "read") == code, path
        assert SECRET not in json.dumps(events)
    assert SECRET not in log.read_text()

    chat_only = await create(jp_fetch, chatOnly=True, contextRefs=["files"])
    await send(jp_fetch, chat_only, f"read {notes}")
    assert refusal_of(log, "read") == "blocked"


async def test_a_missing_file_reads_empty_and_a_folder_is_not_a_file(
    jp_fetch: Any, jp_root_dir: Path, files: dict[str, Path], log: Path
) -> None:
    # Agents read a file before they create it (Gemini CLI does): with the grant, a missing
    # file reads as empty, which says no more than that it is not there. Without the grant
    # it is `blocked` like any other (tests/test_agent_file_links.py).
    conversation = await create(jp_fetch, contextRefs=["files"])
    await send(jp_fetch, conversation, f"read {jp_root_dir / 'nothing.txt'}")
    assert agent_log(log, "read")[-1]["answer"]["content"] == ""
    await send(jp_fetch, conversation, f"read {jp_root_dir}")
    assert refusal_of(log, "read") == "invalid-input"


# -- writing files -----------------------------------------------------------------------------


async def test_plan_and_chat_only_refuse_writes_and_nothing_is_written(
    jp_fetch: Any, jp_ws_fetch: Any, jp_root_dir: Path, files: dict[str, Path], log: Path
) -> None:
    page = await page_of(jp_ws_fetch)
    new = jp_root_dir / "new.txt"
    for settings in ({"mode": "plan"}, {"chatOnly": True, "mode": "autopilot"}):
        conversation = await create(jp_fetch, **settings)
        events = await send(jp_fetch, conversation, write(new, "x"))
        assert refusal_of(log, "write") == "plan-mode"
        assert notices(events)
        await send(jp_fetch, conversation, write(files["notes"], "x"))
        assert refusal_of(log, "write") == "plan-mode"
    assert not new.exists()
    assert files["notes"].read_text() == "first line\nsecond line\n"
    conversation = await create(jp_fetch, mode="autopilot")
    await send(jp_fetch, conversation, write(jp_root_dir / "a.ipynb", "{}"))
    assert refusal_of(log, "write") == "notebook-file"
    await send(jp_fetch, conversation, write(files["secret"], "x"))
    assert refusal_of(log, "write") == "outside-root"
    assert files["secret"].read_text() == SECRET
    page.close()


async def test_a_write_opens_a_file_review_and_only_keep_writes_it(
    jp_fetch: Any, jp_ws_fetch: Any, jp_root_dir: Path, files: dict[str, Path], log: Path
) -> None:
    page = await page_of(jp_ws_fetch)
    conversation = await create(jp_fetch, mode="autopilot")
    new = jp_root_dir / "new.txt"
    events = await send(jp_fetch, conversation, write(new, "hello\n"))
    # The agent's call returns once the review is open; nothing is on disk yet.
    assert refusal_of(log, "write") is None
    assert not new.exists()
    assert "Keep" in notices(events)[0]
    review = (await next_of(page, "file-review"))["review"]
    assert review["path"] == "new.txt"
    assert (review["original"], review["proposed"]) == (None, "hello\n")
    assert review["agentLabel"] == "Scripted agent"

    status, body = await api(
        jp_fetch, "file-reviews", review["reviewId"], method="POST", body={"decision": "keep"}
    )
    assert (status, body) == (200, {"decision": "keep"})
    assert new.read_text() == "hello\n"
    assert (await next_of(page, "file-review-ended"))["decision"] == "keep"
    # Decided once: a second Keep is refused and writes nothing more.
    status, body = await api(
        jp_fetch, "file-reviews", review["reviewId"], method="POST", body={"decision": "keep"}
    )
    assert (status, body["error"]["code"]) == (409, "aborted")

    # Undo writes nothing.
    await send(jp_fetch, conversation, write(files["notes"], "agent text\n"))
    review = (await next_of(page, "file-review"))["review"]
    assert review["original"] == "first line\nsecond line\n"
    status, body = await api(
        jp_fetch, "file-reviews", review["reviewId"], method="POST", body={"decision": "undo"}
    )
    assert (status, body) == (200, {"decision": "undo"})
    assert files["notes"].read_text() == "first line\nsecond line\n"
    page.close()


async def test_keep_refuses_a_file_that_changed_since_the_proposal(
    jp_fetch: Any, jp_ws_fetch: Any, files: dict[str, Path], log: Path
) -> None:
    page = await page_of(jp_ws_fetch)
    conversation = await create(jp_fetch, mode="interactive")
    await send(jp_fetch, conversation, write(files["notes"], "agent\n"))
    review = (await next_of(page, "file-review"))["review"]
    files["notes"].write_text("the person typed this\n", encoding="utf-8")
    status, body = await api(
        jp_fetch, "file-reviews", review["reviewId"], method="POST", body={"decision": "keep"}
    )
    assert (status, body["error"]["code"]) == (409, "stale-source")
    assert files["notes"].read_text() == "the person typed this\n"
    assert (await next_of(page, "file-review-ended"))["decision"] == "conflict"

    # A file that did not exist must still not exist at Keep.
    new = files["notes"].parent / "late.txt"
    await send(jp_fetch, conversation, write(new, "agent\n"))
    review = (await next_of(page, "file-review"))["review"]
    new.write_text("made meanwhile\n", encoding="utf-8")
    status, body = await api(
        jp_fetch, "file-reviews", review["reviewId"], method="POST", body={"decision": "keep"}
    )
    assert body["error"]["code"] == "stale-source"
    assert new.read_text() == "made meanwhile\n"
    page.close()


async def test_keep_is_refused_under_the_kill_switch_and_archive_withdraws_the_review(
    jp_fetch: Any, jp_ws_fetch: Any, jp_config_dir: Path, files: dict[str, Path], log: Path
) -> None:
    page = await page_of(jp_ws_fetch)
    conversation = await create(jp_fetch, mode="autopilot")
    await send(jp_fetch, conversation, write(files["notes"], "agent\n"))
    review = (await next_of(page, "file-review"))["review"]
    switch = jp_config_dir / "jupyter_copilot_config.json"
    switch.write_text(json.dumps({"CopilotApp": {"tools_enabled": False}}))
    status, body = await api(
        jp_fetch, "file-reviews", review["reviewId"], method="POST", body={"decision": "keep"}
    )
    assert (status, body["error"]["code"]) == (503, "kill-switch")
    # Under the switch the agent's own tools are refused too.
    await send(jp_fetch, conversation, write(files["notes"], "again\n"))
    assert refusal_of(log, "write") == "kill-switch"
    switch.write_text(json.dumps({"CopilotApp": {"tools_enabled": True}}))
    await api(jp_fetch, "conversations", conversation, "archive", method="POST")
    assert (await next_of(page, "file-review-ended"))["decision"] == "withdrawn"
    status, body = await api(
        jp_fetch, "file-reviews", review["reviewId"], method="POST", body={"decision": "keep"}
    )
    assert body["error"]["code"] == "aborted"
    assert files["notes"].read_text() == "first line\nsecond line\n"
    for bad in ({"decision": "maybe"}, {"decision": "keep", "x": 1}, []):
        status, body = await api(
            jp_fetch, "file-reviews", review["reviewId"], method="POST", body=bad
        )
        assert (status, body["error"]["code"]) == (400, "invalid-input")
    page.close()


# -- shell commands ----------------------------------------------------------------------------


async def test_a_command_runs_only_after_the_person_allows_its_card(
    jp_fetch: Any, jp_ws_fetch: Any, jp_root_dir: Path, log: Path
) -> None:
    page = await page_of(jp_ws_fetch)
    marker = jp_root_dir / "ran.txt"
    command = f"echo ran > {marker.name}; echo printed"
    # Autopilot too: commands are never run automatically.
    conversation = await create(jp_fetch, mode="autopilot")
    turn = asyncio.ensure_future(send(jp_fetch, conversation, f"shell {command}", page_id="p-1"))
    card = (await next_of(page, "approval"))["request"]
    assert card["kind"] == "shell"
    assert card["details"] == {
        "conversationId": conversation,
        "command": command,
        "program": "/bin/sh",
        "folder": "",
        "ignoredEnv": [],
    }
    assert card["description"] == "Scripted agent wants to run a command"
    await asyncio.sleep(0.3)  # the point: nothing runs while the card waits
    assert not marker.exists()
    await api(jp_fetch, "approvals", card["requestId"], method="POST", body={"decision": "deny"})
    events = await asyncio.wait_for(turn, 30)
    assert refusal_of(log, "shell") == "denied"
    assert not marker.exists()
    assert any("did not allow" in n for n in notices(events))

    turn = asyncio.ensure_future(send(jp_fetch, conversation, f"shell {command}", page_id="p-1"))
    card = (await next_of(page, "approval"))["request"]
    await api(jp_fetch, "approvals", card["requestId"], method="POST", body={"decision": "allow"})
    events = await asyncio.wait_for(turn, 30)
    assert marker.read_text() == "ran\n"
    assert agent_log(log, "shell-done")[-1] == {
        "kind": "shell-done",
        "exitCode": 0,
        "output": "printed\n",
    }
    [tool] = [e for e in events if e["type"] == "tool" and e["status"] == "completed"]
    assert tool["title"] == f"$ {command}" and tool["output"] == "printed\n"
    page.close()


async def test_plan_chat_only_and_never_refuse_commands_without_a_card(
    jp_fetch: Any, jp_ws_fetch: Any, jp_root_dir: Path, copilot: Any, log: Path
) -> None:
    page = await page_of(jp_ws_fetch)
    marker = jp_root_dir / "ran.txt"
    for settings in ({"mode": "plan"}, {"chatOnly": True}):
        conversation = await create(jp_fetch, **settings)
        await send(jp_fetch, conversation, f"shell touch {marker}")
        assert refusal_of(log, "shell") == "not-permitted"
    copilot.agent_shell = "never"
    conversation = await create(jp_fetch, mode="autopilot")
    await send(jp_fetch, conversation, f"shell touch {marker}")
    assert refusal_of(log, "shell") == "not-permitted"
    assert not marker.exists()
    with pytest.raises(asyncio.TimeoutError):
        await next_of(page, "approval", timeout=0.5)
    page.close()


async def test_a_command_is_stopped_at_its_time_limit_with_its_process_group(
    jp_fetch: Any, jp_ws_fetch: Any, copilot: Any, log: Path
) -> None:
    copilot.agent_shell_timeout_seconds = 1.0
    page = await page_of(jp_ws_fetch)
    conversation = await create(jp_fetch, mode="interactive")
    turn = asyncio.ensure_future(
        send(jp_fetch, conversation, "shell echo start; sleep 60 & sleep 60", page_id="p-1")
    )
    card = (await next_of(page, "approval"))["request"]
    await api(jp_fetch, "approvals", card["requestId"], method="POST", body={"decision": "allow"})
    events = await asyncio.wait_for(turn, 20)
    done = agent_log(log, "shell-done")[-1]
    assert done["exitCode"] is None and done["output"] == "start\n"
    failed = [e for e in events if e["type"] == "tool" and e["status"] == "failed"]
    assert failed and "out of time" in failed[-1]["error"]
    page.close()


# -- the agent's own permission requests and modes ---------------------------------------------


@pytest.mark.parametrize(
    ("settings", "kind", "carded"),
    [
        ({"mode": "plan"}, "edit", False),
        ({"mode": "plan"}, "execute", False),
        ({"mode": "plan"}, "", False),
        ({"mode": "plan"}, "read", True),
        ({"chatOnly": True}, "read", False),
        ({"mode": "interactive"}, "edit", True),
        ({"mode": "autopilot"}, "execute", True),
    ],
)
async def test_the_agents_own_requests_follow_the_mode(
    jp_fetch: Any,
    jp_ws_fetch: Any,
    log: Path,
    settings: dict[str, Any],
    kind: str,
    carded: bool,
) -> None:
    page = await page_of(jp_ws_fetch)
    conversation = await create(jp_fetch, **settings)
    turn = asyncio.ensure_future(
        send(jp_fetch, conversation, f"permission-kind {kind}", page_id="p-1")
    )
    if carded:
        card = (await next_of(page, "approval"))["request"]
        assert card["kind"] == "permission"
        await api(
            jp_fetch, "approvals", card["requestId"], method="POST", body={"decision": "deny"}
        )
        events = await asyncio.wait_for(turn, 30)
        assert agent_log(log, "permission")[-1]["chose"] == "cancelled"
    else:
        events = await asyncio.wait_for(turn, 30)
        # Rejected at once with the agent's own "reject once" option; the panel says so.
        assert agent_log(log, "permission"), events
        assert agent_log(log, "permission")[-1]["chose"] == "not-now"
        assert any("refused the agent's own request" in n for n in notices(events))
        with pytest.raises(asyncio.TimeoutError):
            await next_of(page, "approval", timeout=0.3)
    page.close()


async def test_an_agents_own_command_request_shows_the_whole_command_or_none(
    jp_fetch: Any, jp_ws_fetch: Any, log: Path
) -> None:
    page = await page_of(jp_ws_fetch)
    conversation = await create(jp_fetch, mode="interactive")
    command = "python -c 'print(1)' && " + "echo long-argument " * 20 + "&& rm -rf build"
    turn = asyncio.ensure_future(
        send(jp_fetch, conversation, f"permission-kind execute {command}", page_id="p-1")
    )
    card = (await next_of(page, "approval"))["request"]
    assert card["details"]["command"] == command and len(command) > 200
    await api(jp_fetch, "approvals", card["requestId"], method="POST", body={"decision": "deny"})
    await asyncio.wait_for(turn, 30)
    # Too long to show whole: refused, never shown cut.
    events = await send(
        jp_fetch, conversation, f"permission-kind execute {'x' * 5000}", page_id="p-1"
    )
    assert agent_log(log, "permission")[-1]["chose"] == "not-now"
    assert any("could not be shown in full" in n for n in notices(events))
    with pytest.raises(asyncio.TimeoutError):
        await next_of(page, "approval", timeout=0.3)
    page.close()


@pytest.mark.parametrize(
    ("settings", "request_", "chose"),
    [
        ({"mode": "plan"}, "other mcp__jupyter-copilot__notebook_read_selected_cell", "ok"),
        ({"mode": "interactive"}, "other notebook_edit_cell (jupyter-copilot MCP Server)", "ok"),
        ({"mode": "plan"}, "execute mcp__jupyter-copilot__context_snapshot", "not-now"),
        ({"chatOnly": True}, "other mcp__jupyter-copilot__context_snapshot", "not-now"),
    ],
)
async def test_a_request_for_our_own_tool_is_allowed_once_without_a_card(
    jp_fetch: Any,
    jp_ws_fetch: Any,
    log: Path,
    settings: dict[str, Any],
    request_: str,
    chose: str,
) -> None:
    # Our tool holds the call to the mode itself (its own card, the review): the agent's own
    # card would only ask twice. Never "allow always", never a changing kind, never Chat-only.
    page = await page_of(jp_ws_fetch)
    conversation = await create(jp_fetch, **settings)
    await send(jp_fetch, conversation, f"permission-kind {request_}", page_id="p-1")
    assert agent_log(log, "permission")[-1]["chose"] == chose
    with pytest.raises(asyncio.TimeoutError):
        await next_of(page, "approval", timeout=0.3)
    page.close()


@pytest.mark.parametrize(
    "agent_env", [{"SCRIPTED_AGENT_MODES": "auto:auto,default,acceptEdits,plan,bypassPermissions"}]
)
async def test_the_agent_is_held_in_its_asking_mode_and_put_back_when_it_leaves(
    jp_fetch: Any, log: Path, agent_env: dict[str, str]
) -> None:
    conversation = await create(jp_fetch, mode="autopilot")
    await send(jp_fetch, conversation, "reply hi")
    assert [e["modeId"] for e in agent_log(log, "set_mode")] == ["default"]
    events = await send(jp_fetch, conversation, "switch-mode bypassPermissions")
    assert [e["modeId"] for e in agent_log(log, "set_mode")] == ["default", "default"]
    assert any("put back" in n for n in notices(events))
    await api(jp_fetch, "conversations", conversation, method="PATCH", body={"mode": "plan"})
    await send(jp_fetch, conversation, "reply planned")
    assert [e["modeId"] for e in agent_log(log, "set_mode")][-1] == "plan"


@pytest.mark.parametrize("agent_env", [{"SCRIPTED_AGENT_MODES": "auto:auto,default"}])
async def test_the_mode_an_agent_switched_itself_to_shows_its_hidden_characters_in_the_notice(
    jp_fetch: Any, log: Path, agent_env: dict[str, str]
) -> None:
    # The mode's name is the agent's: a direction control would reorder the notice's words.
    conversation = await create(jp_fetch, mode="autopilot")
    await send(jp_fetch, conversation, "reply hi")
    events = await send(jp_fetch, conversation, "switch-mode plan\u202eyolo\u200b")
    [notice] = [n for n in notices(events) if "put back" in n]
    assert "its 'plan\u27e8U+202E\u27e9yolo\u27e8U+200B\u27e9' mode" in notice
    assert "\u202e" not in notice and "\u200b" not in notice


@pytest.mark.parametrize("agent_env", [{"SCRIPTED_AGENT_MODES": "yolo:yolo,autoEdit"}])
async def test_an_agent_with_only_unsafe_modes_gets_no_prompt(
    jp_fetch: Any, log: Path, agent_env: dict[str, str]
) -> None:
    conversation = await create(jp_fetch, mode="interactive")
    events = await send(jp_fetch, conversation, "reply hi")
    assert end_of(events)["stopReason"] == "error"
    assert "asks before acting" in end_of(events)["error"]
    assert not agent_log(log, "prompt")


@pytest.mark.parametrize("agent_env", [{"SCRIPTED_AGENT_MODES": "researcher:researcher,writer"}])
async def test_an_agent_whose_modes_are_its_own_names_is_left_in_its_mode(
    jp_fetch: Any, log: Path, agent_env: dict[str, str]
) -> None:
    # fast-agent, for one, names its modes after its own agents: none of them acts for it.
    conversation = await create(jp_fetch, mode="interactive")
    events = await send(jp_fetch, conversation, "reply hi")
    assert reply_of(events) == "hi"
    assert agent_log(log, "set_mode") == []


# -- honest attachment -------------------------------------------------------------------------


async def test_tools_attached_is_true_only_once_the_agent_connected(
    jp_fetch: Any, log: Path, http_server_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("jupyter_copilot.agents.processes.CONNECT_GRACE_SECONDS", 0.3)
    conversation = await create(jp_fetch, contextRefs=["selected_cell"])
    events = await send(jp_fetch, conversation, "reply not connecting")
    assert events[0]["toolsAttached"] is False
    await asyncio.sleep(0.6)  # the point: the 0.3 s grace runs out without a connection
    # Not connected after the grace: the next turn says so, once.
    events = await send(jp_fetch, conversation, "reply still not")
    assert any("has not connected" in n for n in notices(events))
    _, body = await api(jp_fetch, "conversations", conversation)
    assert (body["conversation"]["toolsOffered"], body["conversation"]["toolsAttached"]) == (
        True,
        False,
    )
    assert body["turns"][1]["notices"]
    events = await send(jp_fetch, conversation, "mcp context_snapshot {}")
    assert not any("has not connected" in n for n in notices(events))
    _, body = await api(jp_fetch, "conversations", conversation)
    assert body["conversation"]["toolsAttached"] is True


async def test_an_agent_that_connects_at_once_gets_no_notice(
    jp_fetch: Any, log: Path, http_server_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("jupyter_copilot.agents.processes.CONNECT_GRACE_SECONDS", 0.3)
    conversation = await create(jp_fetch, contextRefs=["selected_cell"])
    await send(jp_fetch, conversation, "mcp context_snapshot {}")
    await asyncio.sleep(0.6)  # the point: the 0.3 s grace runs out after the connection
    events = await send(jp_fetch, conversation, "reply done")
    assert notices(events) == []


async def test_archiving_within_the_grace_ends_the_attachment_check_with_the_conversation(
    jp_fetch: Any, log: Path, copilot: Any
) -> None:
    conversation = await create(jp_fetch, contextRefs=["selected_cell"])
    await send(jp_fetch, conversation, "reply not connecting")
    [ended] = copilot.conversations.listed("owner")
    check = ended.attach_check
    assert check is not None and not check.done()  # the grace (10 s) is still running
    await api(jp_fetch, "conversations", conversation, "archive", method="POST")
    # The check ends with the conversation instead of waiting out its grace: nothing is left
    # pending on the server's loop when it stops.
    assert check.cancelled()


async def test_taking_every_grant_away_mid_conversation_turns_the_tools_off(
    jp_fetch: Any, log: Path, http_server_client: Any
) -> None:
    conversation = await create(jp_fetch, contextRefs=["selected_cell"], mode="autopilot")
    await send(jp_fetch, conversation, "mcp context_snapshot {}")
    assert agent_log(log, "tool")[-1]["isError"] is False
    await api(jp_fetch, "conversations", conversation, method="PATCH", body={"contextRefs": []})
    arguments = {
        "artifactId": "a",
        "cellId": "c",
        "expectedSourceHash": "sha256:" + "0" * 64,
        "newSource": "x = 1\n",
    }
    insert = {"artifactId": "a", "afterCellId": None, "cellType": "code", "source": "x = 1\n"}
    for tool, args in (
        ("context_snapshot", {}),
        ("notebook_edit_cell", arguments),
        ("notebook_insert_cell", insert),
    ):
        await send(jp_fetch, conversation, f"mcp {tool} {json.dumps(args)}")
        entry = agent_log(log, "tool")[-1]
        assert entry["isError"] and entry["result"]["error"]["code"] == "blocked", tool


# -- the sandbox -------------------------------------------------------------------------------


def sandboxed(copilot: Any, root: Path) -> None:
    """Turn the sandbox on for this test's agents (its scripted agent's record is then out
    of its reach: these tests read its replies)."""
    copilot.sandbox = copilot.conversations.host.sandbox = Sandbox.detect(AUTO, str(root))
    if not copilot.sandbox.active:
        pytest.skip(f"bubblewrap does not work here: {copilot.sandbox.reason}")


async def test_under_the_sandbox_an_unrouted_write_cannot_reach_the_servers_folder(
    jp_fetch: Any, jp_root_dir: Path, copilot: Any, log: Path
) -> None:
    sandboxed(copilot, jp_root_dir)
    _, status = await api(jp_fetch, "status")
    assert status["agentSandbox"] == copilot.sandbox.to_json() and status["agentSandbox"]["active"]
    target = jp_root_dir / "unrouted.txt"
    conversation = await create(jp_fetch, chatOnly=True)
    events = await send(jp_fetch, conversation, f"touch {target}")
    assert end_of(events)["stopReason"] == "error"
    assert not target.exists()


async def test_under_the_sandbox_unrouted_reads_see_only_what_was_granted(
    jp_fetch: Any, jp_root_dir: Path, copilot: Any, files: dict[str, Path], log: Path
) -> None:
    sandboxed(copilot, jp_root_dir)
    settings = jp_root_dir / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hostile": true}', encoding="utf-8")
    # Without the grant the server's folder is empty for the agent's own tools.
    conversation = await create(jp_fetch, contextRefs=["selected_cell"])
    events = await send(jp_fetch, conversation, f"peek {files['notes']}")
    assert reply_of(events) == "unreadable FileNotFoundError"
    # With it, files are readable (read-only), but a settings folder stays hidden.
    conversation = await create(jp_fetch, contextRefs=["files"])
    events = await send(jp_fetch, conversation, f"peek {files['notes']}")
    assert reply_of(events) == "saw first line\nsecond line\n"
    events = await send(jp_fetch, conversation, f"peek {settings}")
    assert reply_of(events) == "unreadable FileNotFoundError"
    # Notebooks are read through the notebook tools only: on disk they show empty.
    events = await send(jp_fetch, conversation, f"peek {jp_root_dir / 'a.ipynb'}")
    assert reply_of(events) in ("saw ", "unreadable PermissionError")
    events = await send(jp_fetch, conversation, f"touch {files['notes']}")
    assert files["notes"].read_text() == "first line\nsecond line\n"


async def test_without_the_sandbox_the_same_unrouted_write_lands(
    jp_fetch: Any, jp_root_dir: Path, copilot: Any, log: Path
) -> None:
    # The counterpart of the test above: it shows the sandbox is what stops the write.
    copilot.conversations.host.sandbox = Sandbox.detect(OFF, str(jp_root_dir))
    target = jp_root_dir / "unrouted.txt"
    conversation = await create(jp_fetch, chatOnly=True)
    events = await send(jp_fetch, conversation, f"touch {target}")
    assert reply_of(events) == "touched"
    assert target.exists()
