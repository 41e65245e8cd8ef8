"""The chat's pure logic, run as compiled TypeScript in Node: NDJSON lines and the turn reducer."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.node_harness import run_node

SPLIT = """
const { NdjsonSplitter, parseLine } = await import(`${LIB}/chat/ndjson.js`);
const out = [];
for (const chunks of input) {
  const s = new NdjsonSplitter();
  const lines = [];
  for (const c of chunks) lines.push(...s.push(c));
  lines.push(...s.flush());
  out.push({ lines, parsed: lines.map(parseLine) });
}
console.log(JSON.stringify(out));
"""

REDUCE = """
const { NdjsonSplitter, parseLine } = await import(`${LIB}/chat/ndjson.js`);
const t = await import(`${LIB}/chat/transcript.js`);
const out = [];
for (const c of input) {
  let turn = t.startTurn(c.user);
  const seen = [];
  const s = new NdjsonSplitter();
  for (const chunk of c.chunks) {
    for (const line of s.push(chunk)) {
      const event = t.parseEvent(parseLine(line));
      if (event) { turn = t.applyEvent(turn, event); seen.push(event.type); }
    }
  }
  out.push({ turn, seen, notice: t.endNotice(turn) });
}
console.log(JSON.stringify(out));
"""

MISC = """
const t = await import(`${LIB}/chat/transcript.js`);
const fresh = () => t.startTurn({ text: 'x', attachment: null });
const ended = r => ({ ...fresh(), stopReason: r, error: r === 'error' ? 'boom' : null });
console.log(JSON.stringify({
  parsed: input.turns.map(t.parseTurn),
  notices: input.reasons.map(r => t.endNotice(ended(r))),
  short: input.errors.map(e => t.shortError(e)),
  abandoned: [t.abandonTurn(fresh(), 'lost'), t.abandonTurn(ended('end_turn'), 'lost')],
}));
"""


def lines(*events: dict[str, Any]) -> str:
    return "".join(json.dumps(e) + "\n" for e in events)


def every_split(text: str) -> list[list[str]]:
    """The text cut in two at every position, and cut into single characters."""
    return [[text[:i], text[i:]] for i in range(len(text) + 1)] + [list(text)]


def test_lines_come_out_whole_wherever_the_chunks_split() -> None:
    body = '{"type":"text","text":"a\\nb"}\r\n\n{"type":"end"}\n{"type":"text","text":"é"}'
    results = run_node(SPLIT, every_split(body))
    expected = ['{"type":"text","text":"a\\nb"}', '{"type":"end"}', '{"type":"text","text":"é"}']
    assert all(r["lines"] == expected for r in results)
    assert results[0]["parsed"] == [
        {"type": "text", "text": "a\nb"},
        {"type": "end"},
        {"type": "text", "text": "é"},
    ]


def test_lines_that_are_not_json_objects_parse_as_null() -> None:
    [result] = run_node(SPLIT, [['not json\n[1,2]\n"s"\n{"type":"turn"}\n']])
    assert result["parsed"] == [None, None, None, {"type": "turn"}]


def test_a_streamed_turn_collects_text_and_tool_calls_in_order() -> None:
    body = lines(
        {"type": "turn", "turnId": "t1", "toolsAttached": True},
        {"type": "text", "text": "Let me "},
        {
            "type": "tool",
            "toolCallId": "c1",
            "title": "Read the selected cell",
            "status": "in_progress",
        },
        {"type": "text", "text": "look."},
        {"type": "tool", "toolCallId": "c1", "status": "completed"},
        {"type": "tool", "toolCallId": "c2", "title": "Edit cell", "status": "pending"},
        {
            "type": "tool",
            "toolCallId": "c2",
            "status": "failed",
            "error": "stale-source: the cell changed",
        },
        {"type": "unknown", "x": 1},
        {"type": "end", "stopReason": "end_turn", "error": None},
    )
    user = {"text": "Add a docstring", "attachment": {"cellId": "abc", "label": "Cell 3"}}
    results = run_node(
        REDUCE, [{"user": user, "chunks": chunks} for chunks in every_split(body)[::7]]
    )
    for result in results:
        turn = result["turn"]
        assert turn["turnId"] == "t1"
        assert turn["user"] == user
        assert turn["reply"] == "Let me look."
        assert turn["toolCalls"] == [
            {
                "toolCallId": "c1",
                "title": "Read the selected cell",
                "status": "completed",
                "error": None,
            },
            {
                "toolCallId": "c2",
                "title": "Edit cell",
                "status": "failed",
                "error": "stale-source: the cell changed",
            },
        ]
        assert turn["stopReason"] == "end_turn" and turn["error"] is None
        assert result["notice"] is None
        assert "unknown" not in result["seen"]


def test_a_turn_that_ends_with_an_error_says_so_and_keeps_the_details() -> None:
    body = lines(
        {"type": "turn", "turnId": "t2", "toolsAttached": False},
        {"type": "text", "text": "Working"},
        {"type": "end", "stopReason": "error", "error": "The agent exited (code 1)."},
    )
    [result] = run_node(REDUCE, [{"user": {"text": "hi", "attachment": None}, "chunks": [body]}])
    assert result["turn"]["stopReason"] == "error"
    assert result["notice"] == {
        "level": "error",
        "text": "The agent exited (code 1).",
        "details": "",
    }


def test_an_error_without_words_or_with_many_says_the_agent_stopped() -> None:
    long = "Traceback:\n" + "line\n" * 50
    ends = [
        {"type": "end", "stopReason": "error"},
        {"type": "end", "stopReason": "error", "error": long},
    ]
    results = run_node(
        REDUCE, [{"user": {"text": "hi", "attachment": None}, "chunks": [lines(e)]} for e in ends]
    )
    assert "stopped unexpectedly" in results[0]["notice"]["text"]
    assert results[1]["notice"]["text"] == "Traceback:"
    assert results[1]["notice"]["details"] == long.strip()


def test_a_turn_without_its_end_stays_running_until_abandoned() -> None:
    body = lines(
        {"type": "turn", "turnId": "t3", "toolsAttached": True}, {"type": "text", "text": "a"}
    )
    [result] = run_node(REDUCE, [{"user": {"text": "hi", "attachment": None}, "chunks": [body]}])
    assert result["turn"]["stopReason"] is None and result["notice"] is None
    misc = run_node(MISC, {"turns": [], "reasons": [], "errors": []})
    assert [t["stopReason"] for t in misc["abandoned"]] == ["error", "end_turn"]
    assert misc["abandoned"][0]["error"] == "lost"


@pytest.mark.parametrize(
    ("reason", "level"),
    [
        ("end_turn", None),
        ("cancelled", "info"),
        ("max_tokens", "info"),
        ("max_turn_requests", "info"),
        ("refusal", "info"),
        ("error", "error"),
        ("other", "info"),
    ],
)
def test_each_stop_reason_has_its_notice(reason: str, level: str | None) -> None:
    [notice] = run_node(MISC, {"turns": [], "reasons": [reason], "errors": []})["notices"]
    assert (notice and notice["level"]) == level


def test_server_turns_are_read_defensively() -> None:
    turns = [
        {
            "turnId": "t",
            "user": {"text": "q", "attachment": {"cellId": "c", "label": "Cell 2"}},
            "reply": "**a**",
            "toolCalls": [
                {"toolCallId": "x", "title": "T", "status": "completed", "error": None},
                {"no": "id"},
            ],
            "stopReason": "end_turn",
            "error": None,
        },
        {"user": None, "toolCalls": "nope"},
        None,
    ]
    parsed = run_node(MISC, {"turns": turns, "reasons": [], "errors": []})["parsed"]
    assert parsed[0] == {**turns[0], "toolCalls": [turns[0]["toolCalls"][0]]}
    assert parsed[1] == {
        "turnId": None,
        "user": {"text": "", "attachment": None},
        "reply": "",
        "toolCalls": [],
        "stopReason": None,
        "error": None,
    }
    assert parsed[2] is None


def test_short_errors_are_one_line_of_at_most_80_characters() -> None:
    errors = ["short", "first line\nsecond line", "x" * 200]
    short = run_node(MISC, {"turns": [], "reasons": [], "errors": errors})["short"]
    assert short[:2] == ["short", "first line"]
    assert len(short[2]) == 80 and short[2].endswith("…")
