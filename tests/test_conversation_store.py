"""Conversations that last: the SQLite store, a server restart, and agents brought back.

The server, the scripted ACP agent processes and SQLite are real. A restart is a real second
``jupyter server`` process on the same store (``tests/test_faults.py``'s ``ServerProcess``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import sqlite3
import sys
import threading
from pathlib import Path
from typing import Any

import httpx2
import pytest

from jupyter_copilot.agents.conversation import Turn
from jupyter_copilot.agents.store import ConversationStore
from tests.conversations import SCRIPTED_AGENT, agent_log, api, create, end_of, reply_of, send
from tests.eventually import eventually
from tests.test_conversations import alive
from tests.test_faults import ServerProcess, free_port, running

GARBAGE = b"this is not a SQLite database, it is damaged " * 100


def agent_settings(log: Path, sessions: Path | None) -> dict[str, Any]:
    """The scripted agent; with ``sessions`` it remembers and loads sessions."""
    env = {"SCRIPTED_AGENT_LOG": str(log)}
    if sessions is not None:
        env["SCRIPTED_AGENT_SESSIONS"] = str(sessions)
    return {
        "agents": {
            "scripted": {
                "label": "Scripted agent",
                "command": [sys.executable, str(SCRIPTED_AGENT)],
                "env": env,
            }
        },
        "discover_agents": False,
    }


def stored(path: Path) -> dict[str, Any]:
    """What a fresh reader of the store file finds, by conversation id."""
    store = ConversationStore(str(path), logging.getLogger("test-store"))
    try:
        return {s.data["id"]: s for s in store.load()}
    finally:
        store.close()


# -- a real restart --------------------------------------------------------------------------


async def post_message(server: ServerProcess, conversation_id: str, text: str) -> list[Any]:
    """Send a message to the subprocess server; the streamed events."""
    async with httpx2.AsyncClient(headers=server.headers, timeout=60) as http:
        response = await http.post(
            f"{server.url}copilot/api/conversations/{conversation_id}/messages",
            content=json.dumps({"text": text}),
        )
    assert response.status_code == 200, response.text
    return [json.loads(line) for line in response.text.splitlines()]


@pytest.mark.parametrize("loads", [True, False], ids=["loadSession", "no-loadSession"])
async def test_after_a_server_restart_the_transcript_is_back_and_the_agent_too(
    tmp_path: Path, loads: bool
) -> None:
    (tmp_path / "root").mkdir()
    log = tmp_path / "agent.jsonl"
    db = tmp_path / "store" / "conversations.db"
    settings = {
        **agent_settings(log, tmp_path / "sessions.json" if loads else None),
        "conversations_db_path": str(db),
    }
    server = ServerProcess(tmp_path, free_port(), "store-token", settings)
    async with running(server):
        status, body = await server.http(
            "POST", "copilot/api/conversations", {"chatOnly": True, "mode": "plan"}
        )
        assert status == 201
        conversation = body["conversation"]["id"]
        events = await post_message(server, conversation, "remember apples")
        assert reply_of(events) == "noted"
        slow = asyncio.ensure_future(post_message(server, conversation, "slow"))

        async def thinking() -> bool:
            # The agent's log shows the prompt before the server has its first words.
            _, body = await server.http("GET", f"copilot/api/conversations/{conversation}")
            turns = body["turns"]
            return len(turns) == 2 and turns[1]["reply"] == "thinking"

        await eventually(thinking, "the slow reply's first words")
        await server.stop()  # mid-turn: the server ends the turn as it stops
        await asyncio.wait_for(slow, 30)

        await server.start()
        status, body = await server.http("GET", "copilot/api/conversations")
        assert status == 200 and body["stored"] is True
        (listed,) = body["conversations"]
        assert (listed["id"], listed["title"], listed["mode"]) == (
            conversation,
            "remember apples",
            "plan",
        )
        assert [(t["user"]["text"], t["reply"], t["stopReason"]) for t in listed["turns"]] == [
            ("remember apples", "noted", "end_turn"),
            ("slow", "thinking", "cancelled"),
        ]
        assert "token" not in json.dumps(listed) and "jcc-" not in db.read_bytes().decode(
            "utf-8", "replace"
        )

        events = await post_message(server, conversation, "recall")
        first_session = agent_log(log, "new_session")
        if loads:
            # The agent got its session back: it remembers, and nothing replayed is shown.
            assert events[0]["restarted"] is False
            assert reply_of(events) == "apples"
            assert len(agent_log(log, "load_session")) == 1
            assert len(first_session) == 1
        else:
            assert events[0]["restarted"] is True
            assert reply_of(events) == "nothing"
            assert len(first_session) == 2
        _, body = await server.http("GET", f"copilot/api/conversations/{conversation}")
        assert [t["reply"] for t in body["turns"]] == ["noted", "thinking", reply_of(events)]


def test_a_turn_the_server_died_during_says_so_when_read_back() -> None:
    turn = Turn.restored(
        {
            "turnId": "t1",
            "user": {"text": "hi", "attachment": None},
            "reply": "par",
            "toolCalls": [],
            "notices": [],
            "stopReason": None,
            "error": None,
        }
    )
    assert turn.ended and turn.stop_reason == "error"
    assert turn.to_json()["error"] == "The server stopped during this reply."
    assert turn.to_json()["reply"] == "par"


# -- the server with its store ---------------------------------------------------------------


@pytest.fixture
def log(tmp_path: Path) -> Path:
    """Where the scripted agent records what it received."""
    return tmp_path / "agent.jsonl"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """The store's file."""
    return tmp_path / "store" / "conversations.db"


@pytest.fixture
def copilot_config(
    request: pytest.FixtureRequest, log: Path, db: Path, tmp_path: Path
) -> dict[str, Any]:
    """The scripted agent (with sessions it can load) and the store at ``db``; with the
    parameter ``"unwritable"``, a store path under a regular file, which cannot be created."""
    path = db
    if getattr(request, "param", None) == "unwritable":
        blocker = tmp_path / "a-file"
        blocker.write_text("not a folder")
        path = blocker / "conversations.db"
    return {
        **agent_settings(log, tmp_path / "sessions.json"),
        "conversations_db_path": str(path),
    }


async def test_two_conversations_writing_at_once_are_both_stored_whole(
    jp_fetch: Any, db: Path
) -> None:
    one = await create(jp_fetch, chatOnly=True)
    two = await create(jp_fetch, chatOnly=True)
    for _ in range(3):
        replies = await asyncio.gather(
            send(jp_fetch, one, "stream 15"), send(jp_fetch, two, "reply two")
        )
        assert [end_of(events)["stopReason"] for events in replies] == ["end_turn"] * 2
    found = stored(db)
    assert [t["reply"] for t in found[one].turns] == ["".join(f"chunk-{i} " for i in range(15))] * 3
    assert [t["reply"] for t in found[two].turns] == ["two"] * 3
    assert found[one].owner == found[two].owner == "owner"


def test_two_writers_of_one_store_file_lose_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.db")
    log = logging.getLogger("test-store")
    stores = [ConversationStore(path, log), ConversationStore(path, log)]

    def write(index: int) -> None:
        for n in range(100):
            data = {"id": f"c{index}", "title": str(n)}
            stores[index].save(f"user:{index}", data, [(n, {"reply": str(n)})])

    threads = [threading.Thread(target=write, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(store.available for store in stores)
    found = stored(tmp_path / "shared.db")
    for index in range(2):
        assert found[f"c{index}"].owner == f"user:{index}"
        assert [t["reply"] for t in found[f"c{index}"].turns] == [str(n) for n in range(100)]
    for store in stores:
        store.close()


def test_the_store_file_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "new-folder" / "c.db"
    store = ConversationStore(str(path), logging.getLogger("test-store"))
    store.save("owner", {"id": "c1"}, [(0, {"reply": "private"})])
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700
    store.close()


def test_one_persons_rows_are_never_anothers(tmp_path: Path) -> None:
    path = str(tmp_path / "people.db")
    store = ConversationStore(path, logging.getLogger("test-store"))
    store.save("user:alice", {"id": "c1", "title": "alice's"}, [(0, {"reply": "a"})])
    # Bob cannot overwrite or delete Alice's conversation, even knowing its id.
    store.save("user:bob", {"id": "c1", "title": "bob's"}, [(0, {"reply": "b"}), (1, {})])
    store.delete("user:bob", "c1")
    (only,) = store.load()
    assert (only.owner, only.data["title"], only.turns) == (
        "user:alice",
        "alice's",
        [{"reply": "a"}],
    )
    store.close()


async def test_archive_and_delete_reach_the_store(jp_fetch: Any, db: Path) -> None:
    kept = await create(jp_fetch, chatOnly=True)
    gone = await create(jp_fetch, chatOnly=True)
    await send(jp_fetch, kept, "reply one")
    await send(jp_fetch, gone, "reply two")
    status, _ = await api(jp_fetch, "conversations", kept, "archive", method="POST")
    assert status == 200
    response = await jp_fetch("copilot", "api", "conversations", gone, method="DELETE")
    assert (response.code, json.loads(response.body)) == (200, {"deleted": True})
    status, body = await api(jp_fetch, "conversations", gone)
    assert (status, body["error"]["code"]) == (404, "unknown-conversation")
    found = stored(db)
    assert set(found) == {kept} and found[kept].data["archived"] is True
    _, body = await api(jp_fetch, "conversations")
    assert [(c["id"], c["archived"], len(c["turns"])) for c in body["conversations"]] == [
        (kept, True, 1)
    ]


async def test_an_agent_stopped_for_idleness_is_brought_back_with_its_session(
    jp_fetch: Any, copilot: Any, log: Path
) -> None:
    copilot.agent_idle_timeout_seconds = 0.5
    conversation = await create(jp_fetch, chatOnly=True)
    assert reply_of(await send(jp_fetch, conversation, "remember pears")) == "noted"
    pid = copilot.conversations.get("owner", conversation).process.pid
    await eventually(lambda: not alive(pid), "the idle agent to stop", 10)
    events = await send(jp_fetch, conversation, "recall")
    assert events[0]["restarted"] is False and reply_of(events) == "pears"
    assert not [e for e in events if e["type"] == "notice"]
    session = agent_log(log, "new_session")
    assert len(session) == 1 and len(agent_log(log, "load_session")) == 1


async def test_a_message_while_the_idle_agent_is_being_stopped_waits_and_loads_its_session(
    jp_fetch: Any, copilot: Any, log: Path
) -> None:
    conversation = await create(jp_fetch, chatOnly=True)
    assert reply_of(await send(jp_fetch, conversation, "remember pears")) == "noted"
    process = copilot.conversations.get("owner", conversation).process
    # The idle stop has begun (its connection closing, the process not yet reaped) when the
    # next message comes: the turn must not go to the process being stopped.
    stopping = asyncio.ensure_future(process.stop())
    await asyncio.sleep(0)
    assert process.ending and not stopping.done()
    events = await send(jp_fetch, conversation, "recall")
    assert events[0]["restarted"] is False and reply_of(events) == "pears"
    assert copilot.conversations.get("owner", conversation).process is not process
    assert len(agent_log(log, "load_session")) == 1
    await stopping


async def test_an_agent_that_cannot_load_its_session_starts_fresh_and_says_so(
    jp_fetch: Any, copilot: Any, log: Path
) -> None:
    copilot.agent_idle_timeout_seconds = 0.5
    conversation = await create(jp_fetch, chatOnly=True)
    # Nothing remembered: the agent refuses to load a session it does not know.
    assert reply_of(await send(jp_fetch, conversation, "Reply with the word one")) == "one"
    pid = copilot.conversations.get("owner", conversation).process.pid
    await eventually(lambda: not alive(pid), "the idle agent to stop", 10)
    events = await send(jp_fetch, conversation, "Reply with the word two")
    notices = [e["text"] for e in events if e["type"] == "notice"]
    assert notices == [
        "Scripted agent could not bring back its earlier session: it starts fresh and no "
        "longer remembers the earlier messages."
    ]
    assert reply_of(events) == "two" and len(agent_log(log, "new_session")) == 2


# -- a damaged or unwritable store -----------------------------------------------------------


@pytest.fixture
def damaged(db: Path) -> Path:
    """A store file that is not a SQLite database."""
    db.parent.mkdir(parents=True)
    db.write_bytes(GARBAGE)
    return db


async def test_a_damaged_store_is_moved_aside_and_replaced_without_a_crash(
    damaged: Path, jp_fetch: Any, copilot: Any
) -> None:
    (aside,) = damaged.parent.glob("conversations.db.corrupt-*")
    assert aside.read_bytes() == GARBAGE
    _, body = await api(jp_fetch, "conversations")
    assert body == {"conversations": [], "stored": True}
    conversation = await create(jp_fetch, chatOnly=True)
    assert reply_of(await send(jp_fetch, conversation, "reply kept")) == "kept"
    assert [t["reply"] for t in stored(damaged)[conversation].turns] == ["kept"]


def test_a_damaged_store_is_reported_without_its_path(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "secret-folder" / "conversations.db"
    path.parent.mkdir()
    path.write_bytes(GARBAGE)
    with caplog.at_level(logging.DEBUG, logger="test-store"):
        store = ConversationStore(str(path), logging.getLogger("test-store"))
    assert store.available
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "damaged" in warnings[0] and "moved aside" in warnings[0]
    assert "secret-folder" not in warnings[0]
    store.close()


@pytest.mark.parametrize("copilot_config", ["unwritable"], indirect=True)
async def test_an_unwritable_store_leaves_the_panel_working_in_memory(
    jp_fetch: Any, copilot: Any
) -> None:
    assert not copilot.conversations.stored()
    _, body = await api(jp_fetch, "conversations")
    assert body["stored"] is False
    conversation = await create(jp_fetch, chatOnly=True)
    assert reply_of(await send(jp_fetch, conversation, "reply still here")) == "still here"
    _, body = await api(jp_fetch, "conversations", conversation)
    assert [t["reply"] for t in body["turns"]] == ["still here"]


def test_an_unwritable_store_is_reported_once_without_its_path(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "secret-file"
    blocker.write_text("not a folder")
    with caplog.at_level(logging.DEBUG, logger="test-store"):
        store = ConversationStore(str(blocker / "c.db"), logging.getLogger("test-store"))
        store.save("owner", {"id": "c1"}, [(0, {"reply": "x"})])
    assert not store.available and store.load() == []
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "kept in memory" in warnings[0]
    assert "secret-file" not in warnings[0]


def test_a_store_file_written_over_while_open_falls_back_to_memory(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    store = ConversationStore(str(path), logging.getLogger("test-store"))
    store.save("owner", {"id": "c1"})
    with sqlite3.connect(path) as other:
        other.execute("DROP TABLE turns")
    store.save("owner", {"id": "c1"}, [(0, {"reply": "x"})])
    assert not store.available


async def test_an_agent_that_no_longer_loads_sessions_says_it_starts_fresh(
    jp_fetch: Any, copilot: Any, log: Path
) -> None:
    copilot.agent_idle_timeout_seconds = 0.5
    conversation_id = await create(jp_fetch, chatOnly=True)
    assert reply_of(await send(jp_fetch, conversation_id, "remember figs")) == "noted"
    conversation = copilot.conversations.get("owner", conversation_id)
    process = conversation.process
    await eventually(lambda: process.exited, "the idle agent to stop", 10)
    # The agent is now run without session support (as after an upgrade that dropped it).
    conversation.agent = dataclasses.replace(
        conversation.agent, env={"SCRIPTED_AGENT_LOG": str(log)}
    )
    events = await send(jp_fetch, conversation_id, "recall")
    assert reply_of(events) == "nothing"
    assert [e["text"] for e in events if e["type"] == "notice"] == [
        "Scripted agent could not bring back its earlier session: it starts fresh and no "
        "longer remembers the earlier messages."
    ]
    assert conversation.loads_sessions is False and agent_log(log, "load_session") == []
