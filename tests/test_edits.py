"""The proposal tools' pure parts: size, live-document checks, call memory and routing."""

from __future__ import annotations

import asyncio

import pytest

from jupyter_copilot.page.context import source_hash
from jupyter_copilot.protocol.refusals import Refusal
from jupyter_copilot.tools import edits
from jupyter_copilot.tools.edits import ProposalCalls, check_live_cell, check_new_source
from jupyter_copilot.tools.insert_tool import insert_result
from jupyter_copilot.tools.proposals import ProposalDesk


def code_of(call, *args) -> str | None:
    try:
        call(*args)
    except Refusal as refusal:
        return refusal.code
    return None


def test_new_source_is_measured_in_utf8_bytes() -> None:
    assert check_new_source("é" * 8, 16) == 16
    assert code_of(check_new_source, "é" * 9, 16) == "over-budget"
    assert code_of(check_new_source, "", 16) == "invalid-input"
    assert code_of(check_new_source, "\ud800", 16) == "invalid-input"


def test_live_cell_checks_run_in_the_contract_order() -> None:
    old = "x = 1\n"
    stale_locked = {"cell_type": "markdown", "source": "y", "metadata": {"editable": False}}
    cases = [
        (None, "code", "cell-not-found"),
        (stale_locked, "code", "cell-locked"),
        ({**stale_locked, "metadata": {}}, "code", "cell-type-mismatch"),
        ({**stale_locked, "metadata": {}}, None, "stale-source"),
        ({"cell_type": "code", "source": ["x = ", "1\n"], "metadata": {}}, "code", None),
    ]
    for cell, expected_type, code in cases:
        assert code_of(check_live_cell, cell, expected_type, source_hash(old)) == code


async def test_calls_are_remembered_then_forgotten(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]
    monkeypatch.setattr(edits.time, "monotonic", lambda: now[0])
    calls = ProposalCalls(memory_seconds=600)
    first = calls.start("a", {"x": 1})
    assert first is not None
    # A repeat while the first runs waits for its outcome; different data is refused.
    assert calls.start("a", {"x": 1}) is None
    repeat = asyncio.ensure_future(calls.first_outcome("a"))
    with pytest.raises(Refusal) as refused:
        calls.start("a", {"x": 2})
    assert refused.value.code == "invalid-input"
    result = edits.edit_result("art", "c1", "sha256:" + "0" * 64)
    calls.finish(first, result)
    assert await repeat == result
    # Over (no review left open): only a record is kept, which answers repeats.
    assert calls.get("a") is None
    assert await calls.first_outcome("a") == result
    refused_call = calls.start("r", {"x": 1})
    assert refused_call is not None
    calls.finish(refused_call, Refusal("stale-source", "The cell changed."))
    with pytest.raises(Refusal) as again:
        await calls.first_outcome("r")
    assert (again.value.code, again.value.message) == ("stale-source", "The cell changed.")
    # What is kept refers to no object (no traceback, request or source): strings only.
    assert calls.get("r") is None and len(calls) == 2
    for record in calls._settled.values():
        assert all(isinstance(x, str | bytes | float | None) for x in record)
    # An open review keeps its call live until it is decided.
    open_call = calls.start("b", {"x": 1})
    assert open_call is not None
    open_call.review_open = True
    calls.finish(open_call, result)
    assert calls.get("b") is open_call and calls.open_reviews() == [open_call]
    now[0] += 599
    calls.start("c", {})
    assert calls.start("a", {"x": 1}) is None
    now[0] += 120
    calls.start("d", {})
    # Over more than 10 minutes ago: forgotten, so the id is new again. The undecided open
    # review stays.
    assert calls.start("a", {"x": 2}) is not None
    assert calls.get("b") is open_call
    open_call.decision = "keep"
    calls.settle(open_call)
    assert calls.get("b") is None and calls.open_reviews() == []
    for call_id in ("a", "c", "d"):
        live = calls.get(call_id)
        assert live is not None
        live.outcome.cancel()


def test_the_fast_input_check_agrees_with_jsonschema() -> None:
    import jsonschema

    from jupyter_copilot.protocol.registry import load_registry

    schema = load_registry().tool("notebook_edit_cell")["parameters"]
    fast = edits.simple_object_check(schema)
    assert fast is not None
    good = {
        "artifactId": "a",
        "cellId": "c",
        "expectedSourceHash": "sha256:" + "0" * 64,
        "newSource": "x",
    }
    corpus = [
        good,
        {**good, "extra": 1},
        {**good, "newSource": 5},
        {**good, "expectedSourceHash": "sha256:" + "0" * 63},
        {**good, "expectedSourceHash": "sha256:" + "0" * 64 + "\n"},
        {**good, "expectedSourceHash": "SHA256:" + "0" * 64},
        {k: v for k, v in good.items() if k != "cellId"},
        {**good, "cellId": None},
        [],
        "text",
        None,
        {},
    ]
    validator = jsonschema.Draft202012Validator(schema)
    assert [fast(d) for d in corpus] == [validator.is_valid(d) for d in corpus]
    # Anything beyond flat string properties is left to jsonschema.
    assert (
        edits.simple_object_check({"type": "object", "properties": {"n": {"type": "integer"}}})
        is None
    )
    assert edits.simple_object_check({"type": "object", "anyOf": []}) is None


def test_the_size_message_names_the_field_that_holds_the_source() -> None:
    with pytest.raises(Refusal) as empty:
        check_new_source("", 16, "source")
    assert (empty.value.code, empty.value.message.split()[0]) == ("invalid-input", "source")
    with pytest.raises(Refusal) as large:
        check_new_source("x" * 17, 16, "source")
    assert large.value.code == "over-budget" and "16" in large.value.message


async def test_a_settled_insert_call_answers_repeats_with_the_insert_result() -> None:
    calls = ProposalCalls(result_of=lambda artifact, cell, hash_after: insert_result(artifact))
    call = calls.start("i", {"source": "x"})
    assert call is not None
    calls.finish(call, insert_result("art"))
    assert calls.get("i") is None
    assert await calls.first_outcome("i") == {
        "success": True,
        "artifactId": "art",
        "operation": "insert-cell",
        "reviewOpened": True,
    }


class _Tool:
    """A proposal tool as the desk sees it: its calls, and what it was asked."""

    def __init__(self, live: set[str]) -> None:
        self.live = live
        self.asked: list[tuple[str, str]] = []
        self.calls = self

    def get(self, call_id: str) -> object | None:
        return object() if call_id in self.live else None

    def keep_verdict(self, page: object, call_id: str) -> dict[str, object]:
        self.asked.append(("keep", call_id))
        return {"type": "keep-verdict", "callId": call_id, "ok": call_id in self.live}

    def review_decided(self, page: object, call_id: str, decision: str) -> None:
        self.asked.append((decision, call_id))

    def page_closed(self, page: object) -> None:
        self.asked.append(("closed", ""))


def test_the_desk_sends_keep_and_decisions_to_the_tool_that_holds_the_call() -> None:
    edit, insert = _Tool({"e1"}), _Tool({"i1"})
    desk = ProposalDesk([edit, insert])  # type: ignore[list-item]
    page = object()
    assert desk.keep_verdict(page, "i1")["ok"] is True
    desk.review_decided(page, "e1", "undo")
    # An unknown call goes to the first tool, which refuses it.
    assert desk.keep_verdict(page, "nobody")["ok"] is False
    desk.page_closed(page)
    assert edit.asked == [("undo", "e1"), ("keep", "nobody"), ("closed", "")]
    assert insert.asked == [("keep", "i1"), ("closed", "")]
