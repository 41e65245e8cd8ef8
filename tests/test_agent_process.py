"""A hostile agent process cannot hang the server or make it signal a stranger.

Real server, real agent subprocesses (the scripted test agent): an agent that leaves a
helper outside its process group holding its stdout, a stop that is cancelled half-way, and
stops repeated after the agent was reaped.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from jupyter_copilot.agents.conversation import Turn
from jupyter_copilot.agents.sandbox import OFF, Sandbox
from tests.conversations import agent_log, api, create, reply_of, scripted_agents, send
from tests.eventually import eventually
from tests.pages import ScriptedPage, next_of, notebook_state


@pytest.fixture
def log(tmp_path: Path) -> Path:
    """Where the scripted agent records what it received."""
    return tmp_path / "agent.jsonl"


@pytest.fixture
def copilot_config(log: Path) -> dict[str, Any]:
    """Only the scripted agent."""
    return scripted_agents(log)


def processes_running(*argv: str) -> list[int]:
    """The ids of live processes with exactly this command line, in any PID namespace.

    The agent's own idea of a pid is its PID namespace's under the sandbox: never signal
    that number here.
    """
    wanted = "\0".join(argv) + "\0"
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if (entry / "cmdline").read_text() == wanted:
                    found.append(int(entry.name))
    return found


def held_here(link: str) -> bool:
    """Whether this process (the server's) has a file descriptor open on ``link``, as
    ``/proc`` names a pipe (``pipe:[inode]``): both ends of a pipe have the same name."""
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            if os.readlink(f"/proc/self/fd/{fd}") == link:
                return True
    return False


@pytest.fixture
def escaped(log: Path) -> Any:
    """Kills the helpers the agent left behind, whatever the test did."""
    yield
    for entry in agent_log(log, "escaped"):
        for pid in processes_running("sleep", entry["marker"]):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


async def test_a_helper_holding_the_agents_stdout_cannot_hang_archive_or_shutdown(
    jp_fetch: Any, copilot: Any, log: Path, escaped: None
) -> None:
    conversation = await create(jp_fetch, chatOnly=True)
    await send(jp_fetch, conversation, "escape")
    [process] = [c.process for c in copilot.conversations.listed("owner")]
    stdout = os.readlink(f"/proc/{process.proc.pid}/fd/1")
    assert held_here(stdout)
    started = time.monotonic()
    status, _ = await asyncio.wait_for(
        api(jp_fetch, "conversations", conversation, "archive", method="POST"), 20
    )
    assert status == 200
    # SIGTERM is ignored: 3 s of grace, then SIGKILL, then the pipes are closed.
    assert time.monotonic() - started < 12
    assert process.exited and process.proc.returncode is not None
    # The server lets go of its end of the agent's stdout, which the helper may still hold:
    # else its file descriptor stays open as long as the helper lives (Python 3.10 reports
    # the agent's exit before its pipes close).
    await eventually(lambda: not held_here(stdout), "the server to close the agent's stdout", 5)
    # Under the sandbox the helper ends with the agent's PID namespace. The kernel tears
    # the namespace down after its first process dies, so the helper may outlive the
    # agent by a moment, never by seconds.
    if copilot.sandbox.active:
        [entry] = agent_log(log, "escaped")
        deadline = time.monotonic() + 5
        while processes_running("sleep", entry["marker"]) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert processes_running("sleep", entry["marker"]) == []
    # A second stop, and the server's own, return at once.
    started = time.monotonic()
    await asyncio.wait_for(process.stop(), 2)
    await asyncio.wait_for(copilot.stop_extension(), 10)
    assert time.monotonic() - started < 10


async def test_a_cancelled_stop_does_not_poison_the_next_one(
    jp_fetch: Any, copilot: Any, log: Path, escaped: None
) -> None:
    conversation = await create(jp_fetch, chatOnly=True)
    await send(jp_fetch, conversation, "escape")
    [process] = [c.process for c in copilot.conversations.listed("owner")]
    first = asyncio.ensure_future(process.stop())
    # The point: the caller goes away while the stop waits out the agent's SIGTERM grace.
    await asyncio.sleep(0.5)
    first.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await first
    # The stop goes on without the caller; a later stop waits for it and ends normally.
    await asyncio.wait_for(process.stop(), 15)
    assert process.exited


async def test_no_signal_reaches_a_process_group_after_the_agent_was_reaped(
    jp_fetch: Any, copilot: Any, log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conversation = await create(jp_fetch, chatOnly=True)
    await send(jp_fetch, conversation, "reply hi")
    [process] = [c.process for c in copilot.conversations.listed("owner")]
    await process.stop()
    assert process.exited
    # The agent's id may now be anyone's: later stops (archive, server stop) signal nothing.
    signalled: list[tuple[int, int]] = []
    monkeypatch.setattr(os, "killpg", lambda pid, sig: signalled.append((pid, sig)))
    await api(jp_fetch, "conversations", conversation, "archive", method="POST")
    await process.stop()
    await copilot.stop_extension()
    assert signalled == []


class TestTheDemoAgentIgnoresTheNotebookFolder:
    @pytest.fixture
    def copilot_config(self) -> dict[str, Any]:
        """No agent configured: the shipped demo agent is offered."""
        return {"discover_agents": False}

    async def test_an_acp_module_in_the_folder_is_never_imported(
        self, jp_fetch: Any, jp_root_dir: Path, copilot: Any
    ) -> None:
        # Without the sandbox, which would hide the folder anyway.
        copilot.conversations.host.sandbox = Sandbox.detect(OFF, str(jp_root_dir))
        marker = jp_root_dir / "imported.txt"
        for name in ("acp.py", "mcp.py", "jupyter_copilot.py", "sitecustomize.py"):
            (jp_root_dir / name).write_text(
                f"open({str(marker)!r}, 'a').write({name!r})\n", encoding="utf-8"
            )
        conversation = await create(jp_fetch)
        events = await send(jp_fetch, conversation, "Reply with the word isolated")
        assert reply_of(events) == "isolated"
        assert not marker.exists()


# -- caps ---------------------------------------------------------------------------------------


async def test_a_reply_over_its_byte_cap_is_stopped_with_a_clear_message(
    jp_fetch: Any, copilot: Any, log: Path
) -> None:
    copilot.agent_reply_max_bytes = 1024
    conversation = await create(jp_fetch, chatOnly=True)
    # The agent is started first, so that the time below is the stream's alone (its 400
    # chunks would take 20 s; the cap is reached after about 6 s), whatever the load.
    await send(jp_fetch, conversation, "Reply with the word warm")
    started = time.monotonic()
    events = await send(jp_fetch, conversation, "stream 400")
    end = events[-1]
    assert end["stopReason"] == "error" and "longer than 1024 bytes" in end["error"]
    assert len(reply_of(events).encode()) <= 1024
    assert time.monotonic() - started < 15
    # The conversation goes on.
    events = await send(jp_fetch, conversation, "Reply with the word again")
    assert reply_of(events) == "again"


def rss_bytes() -> int:
    """This process's resident memory: the server under test runs in it."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


async def test_a_line_over_the_cap_stops_the_agent_and_costs_at_most_the_cap(
    jp_fetch: Any, copilot: Any, log: Path
) -> None:
    copilot.agent_line_max_bytes = 1024 * 1024
    conversation = await create(jp_fetch, chatOnly=True)
    await send(jp_fetch, conversation, "Reply with the word warm")
    before = rss_bytes()
    started = time.monotonic()
    # 200 MiB without a newline: before the cap the server held all of it.
    events = await send(jp_fetch, conversation, "long-line 200")
    end = events[-1]
    assert end["stopReason"] == "error"
    assert "longer than 1048576 bytes; it was stopped" in end["error"]
    assert time.monotonic() - started < 15
    assert rss_bytes() - before < 64 * 1024 * 1024
    assert processes_running(*scripted_agents(log)["agents"]["scripted"]["command"]) == []
    # The next message starts the agent again.
    events = await send(jp_fetch, conversation, "Reply with the word again")
    assert reply_of(events) == "again"


async def test_a_turn_over_its_event_cap_is_stopped(jp_fetch: Any, copilot: Any, log: Path) -> None:
    copilot.agent_turn_max_events = 100
    conversation = await create(jp_fetch, chatOnly=True)
    events = await send(jp_fetch, conversation, "stream 300")
    assert "more than 100 updates" in events[-1]["error"]
    assert len(events) <= 102


async def test_a_turn_over_its_time_limit_ends_as_an_error(
    jp_fetch: Any, copilot: Any, log: Path
) -> None:
    copilot.agent_turn_timeout_seconds = 1.0
    conversation = await create(jp_fetch, chatOnly=True)
    started = time.monotonic()
    events = await send(jp_fetch, conversation, "slow")
    assert events[-1]["stopReason"] == "error" and "longer than 1 seconds" in events[-1]["error"]
    # The agent was told to cancel (a notification: it may still be on its way).
    await eventually(lambda: agent_log(log, "cancel"), "the agent to log the cancel", 5)
    assert agent_log(log, "cancel")
    assert time.monotonic() - started < 10


async def test_pending_cards_are_capped_and_end_with_their_turn(
    jp_fetch: Any, jp_ws_fetch: Any, copilot: Any, log: Path
) -> None:
    copilot.agent_max_pending_cards = 5
    page = await ScriptedPage.connect(jp_ws_fetch, "p-1")
    await page.send_state(notebook_state("a.ipynb"))
    conversation = await create(jp_fetch)
    turn = asyncio.ensure_future(send(jp_fetch, conversation, "permission-flood 8", page_id="p-1"))
    cards = [await next_of(page, "approval") for _ in range(5)]
    with pytest.raises(asyncio.TimeoutError):
        await next_of(page, "approval", timeout=0.5)
    assert copilot.approvals.waiting == 5
    # Stop ends the turn, and its cards with it: none can be allowed afterwards.
    await api(jp_fetch, "conversations", conversation, "cancel", method="POST")
    await asyncio.wait_for(turn, 15)
    assert copilot.approvals.waiting == 0
    status, body = await api(
        jp_fetch,
        "approvals",
        cards[0]["request"]["requestId"],
        method="POST",
        body={"decision": "allow"},
    )
    assert body["error"]["code"] == "aborted"
    page.close()


async def test_an_archived_conversation_keeps_its_transcript_but_not_its_stream(
    jp_fetch: Any, copilot: Any, log: Path
) -> None:
    conversation = await create(jp_fetch, chatOnly=True)
    events = await send(jp_fetch, conversation, "stream 300")
    _, before = await api(jp_fetch, "conversations", conversation)
    held = next(c for c in copilot.conversations._by_id.values() if c.id == conversation)
    assert len(held.turns[0].events) == len(events) > 300
    status, _ = await api(jp_fetch, "conversations", conversation, "archive", method="POST")
    assert status == 200
    _, after = await api(jp_fetch, "conversations", conversation)
    assert after["turns"] == before["turns"]
    assert len(held.turns[0].events) == 2 and len(held.turns[0].reply) == 1


async def test_archiving_a_running_turn_cancels_its_prompt_with_it(
    jp_fetch: Any, copilot: Any
) -> None:
    """Archiving cancels the running turn and stops its agent. The turn's pending prompt call
    is cancelled with the turn, never left to fail later with an error nobody reads (asyncio
    reports such a task as "Task exception was never retrieved" once it is collected)."""
    loop = asyncio.get_running_loop()
    reported: list[dict[str, Any]] = []
    before = loop.get_exception_handler()
    loop.set_exception_handler(lambda _, context: reported.append(context))
    try:
        conversation = await create(jp_fetch, chatOnly=True)
        turn = asyncio.ensure_future(send(jp_fetch, conversation, "slow"))
        held = next(c for c in copilot.conversations._by_id.values() if c.id == conversation)
        await eventually(
            lambda: (
                held.running is not None
                and any(e.get("text") == "thinking" for e in held.running.events)
            ),
            "the agent's first words",
        )
        # The archive answers once the turn is cancelled and the agent stopped.
        status, _ = await api(jp_fetch, "conversations", conversation, "archive", method="POST")
        assert status == 200
        with contextlib.suppress(Exception):
            await asyncio.wait_for(turn, 10)
        for _ in range(5):  # let the agent's closed pipes reach every waiting call
            await asyncio.sleep(0.1)
        gc.collect()
        await asyncio.sleep(0)
    finally:
        loop.set_exception_handler(before)
    assert [c["message"] for c in reported] == []


async def test_archiving_past_the_cap_forgets_the_oldest_archived(
    jp_fetch: Any, copilot: Any, log: Path
) -> None:
    copilot.agent_max_archived_conversations = 2
    ids = []
    for word in ("one", "two", "three"):
        conversation = await create(jp_fetch, chatOnly=True)
        await send(jp_fetch, conversation, f"Reply with the word {word}")
        await api(jp_fetch, "conversations", conversation, "archive", method="POST")
        ids.append(conversation)
    status, body = await api(jp_fetch, "conversations", ids[0])
    assert (status, body["error"]["code"]) == (404, "unknown-conversation")
    _, listed = await api(jp_fetch, "conversations")
    assert [c["id"] for c in listed["conversations"]] == [ids[2], ids[1]]


async def test_a_turn_is_compacted_only_after_its_last_reader_finished() -> None:
    turn = Turn("hi", None)
    for word in ("a", "b", "c"):
        turn.emit({"type": "text", "text": word})
    turn.end("end_turn")
    reader = turn.stream()
    assert (await reader.__anext__())["text"] == "a"
    turn.release()
    assert len(turn.events) == 4
    assert [e.get("text") async for e in reader] == ["b", "c", None]
    assert turn.events == [
        {"type": "text", "text": "abc"},
        {"type": "end", "stopReason": "end_turn", "error": None},
    ]
    assert [e["type"] async for e in turn.stream()] == ["text", "end"]
