"""One machine-readable protocol source: both sides use only what it defines.

``jupyter_copilot/schemas/vocabulary.json`` and the bridge schemas are the protocol's one
source (docs/protocol.md). These tests fail when the server's Python, the lab extension's
TypeScript, the telemetry schemas or docs/protocol.md use a refusal code, a bridge message
type or a message field that the source does not define, and they check what a real server
sends a page against the server-to-page schema. The scanners are tested on bad snippets
first, so that a scanner that finds nothing cannot pass for a clean code base.
"""

from __future__ import annotations

import ast
import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from jupyter_copilot.admin.killswitch import KillSwitchState
from jupyter_copilot.page.bridge import PAGE_CODES, server_message_problem
from jupyter_copilot.protocol import vocabulary
from jupyter_copilot.protocol.refusals import DEFAULT_TEXT, HTTP_STATUS, Refusal
from tests.pages import ScriptedPage, get_context, next_of

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "jupyter_copilot"
SCHEMAS = PACKAGE / "schemas"
TS_SOURCES = REPO / "labextension" / "src"
PROTOCOL_DOC = REPO / "docs" / "protocol.md"

REFUSAL_CODES = set(vocabulary.REFUSAL_CODES)
ACTIONS = set(vocabulary.ACTIONS)
#: What an action name looks like (docs/protocol.md section 1).
ACTION_NAME = re.compile(r"jupyter_copilot\.notebook\.[a-z.-]+")
SERVER_TYPES = set(vocabulary.SERVER_MESSAGE_TYPES)
PAGE_TYPES = set(vocabulary.PAGE_MESSAGE_TYPES)


def schema(name: str) -> dict[str, Any]:
    return json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def fields(schema_name: str) -> dict[str, set[str]]:
    """The fields each message type of a bridge schema defines."""
    defs = schema(schema_name)["$defs"]
    return {
        name: set(d["properties"])
        for name, d in defs.items()
        if d.get("properties", {}).get("type", {}).get("const") == name
    }


SERVER_FIELDS = fields("bridge-server-message")
PAGE_FIELDS = fields("bridge-page-message")


# -- the scanners ------------------------------------------------------------------------------


def python_findings(source: str, where: str = "<snippet>") -> list[str]:
    """What a Python module says that the protocol source does not define.

    Looks at action names (every string that looks like one), ``Refusal("<code>", ...)``,
    ``code = "<code>"`` and every dict literal that is
    a server-to-page message: one sent with ``.send({...})``, or one whose ``type`` is a
    server message type (a ``keep-verdict`` built before it is sent). Its type must be a
    server message type and each of its literal keys a field of that type's schema.
    """
    problems = []
    tree = ast.parse(source)
    sent = {
        id(arg)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "send"
        for arg in node.args
    }
    for node in ast.walk(tree):
        at = f"{where}:{getattr(node, 'lineno', '?')}"
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and ACTION_NAME.fullmatch(node.value)
            and node.value not in ACTIONS
        ):
            problems.append(f"{at}: action {node.value!r}")
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            first = node.args[0] if node.args else None
            if (
                name == "Refusal"
                and isinstance(first, ast.Constant)
                and isinstance(first.value, str)
                and first.value not in REFUSAL_CODES
            ):
                problems.append(f"{at}: refusal code {first.value!r}")
        elif isinstance(node, ast.Assign):
            if (
                any(isinstance(t, ast.Name) and t.id == "code" for t in node.targets)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
                and node.value.value not in REFUSAL_CODES
            ):
                problems.append(f"{at}: refusal code {node.value.value!r}")
        elif isinstance(node, ast.Dict):
            keys = {
                k.value: v
                for k, v in zip(node.keys, node.values, strict=True)
                if isinstance(k, ast.Constant) and isinstance(k.value, str)
            }
            kind = keys.get("type")
            if not (isinstance(kind, ast.Constant) and isinstance(kind.value, str)):
                continue
            if id(node) not in sent and kind.value not in SERVER_TYPES:
                continue
            if kind.value not in SERVER_TYPES:
                problems.append(f"{at}: server message type {kind.value!r}")
                continue
            for key in set(keys) - SERVER_FIELDS[kind.value]:
                problems.append(f"{at}: field {key!r} of {kind.value!r}")
            code = keys.get("code")
            if (
                kind.value == "keep-verdict"
                and isinstance(code, ast.Constant)
                and code.value not in REFUSAL_CODES
            ):
                problems.append(f"{at}: refusal code {code.value!r}")
    return sorted(problems, key=lambda p: int(p.split(":")[1]))


def _block(text: str, start: int, open_: str = "{", close: str = "}") -> str:
    """The text from the bracket at ``start`` to its match (strings are not special)."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == open_:
            depth += 1
        elif text[i] == close:
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
    return text[start:]


def _top_level_keys(literal: str) -> list[str]:
    """The keys of a one-level object literal ``{ a: 1, b, ...c }``; spreads are skipped."""
    body, depth, part, parts = literal[1:-1], 0, "", []
    for ch in body:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(part)
            part = ""
        else:
            part += ch
    parts.append(part)
    keys = []
    for p in (p.strip() for p in parts):
        if p and not p.startswith("..."):
            keys.append(re.split(r"\s*:", p, maxsplit=1)[0].strip())
    return keys


CODE_CALL = re.compile(r"(?:new ActionError|\bfailure|\bfail)\(\s*'([^']*)'")
CODE_SWITCH = re.compile(r"switch \(([\w.?]*\bcode)\) \{")
CODE_COMPARE = re.compile(r"(?<!typeof )(?<![\w.?])(?:\w+\??\.)*code\s*[!=]==\s*'([^']*)'")
TYPE_SWITCH = re.compile(r"switch \(msg\.type\) \{")
TYPE_COMPARE = re.compile(r"(?<!typeof )\bmsg\.type\s*[!=]==\s*'([^']*)'")
DECISION_SWITCH = re.compile(r"switch \(decision\) \{")
SENT_LITERAL = re.compile(r"(?:\.send|JSON\.stringify)\(\s*(\{)\s*type:\s*'")
CASE = re.compile(r"case '([^']*)':")


def typescript_findings(source: str, where: str = "<snippet>") -> list[str]:
    """What a TypeScript module says that the protocol source does not define.

    Action names: every quoted string that looks like one. Page codes: the first argument
    of ``new ActionError``, ``failure`` and ``fail``. Refusal codes: the cases of a
    ``switch`` on a ``code`` and comparisons with ``code``. Server message types: the cases
    of ``switch (msg.type)`` and comparisons with ``msg.type``.
    Page messages: every object literal sent (``.send({type: ...})`` or
    ``JSON.stringify({type: ...})``), its type and its keys. File review decisions: the cases
    of ``switch (decision)``.
    """
    problems = []

    def line(pos: int) -> str:
        return f"{where}:{source.count(chr(10), 0, pos) + 1}"

    for m in re.finditer(r"'(" + ACTION_NAME.pattern + r")'", source):
        if m.group(1) not in ACTIONS:
            problems.append(f"{line(m.start())}: action {m.group(1)!r}")
    for m in CODE_CALL.finditer(source):
        if m.group(1) not in PAGE_CODES:
            problems.append(f"{line(m.start())}: page code {m.group(1)!r}")
    for pattern, allowed, what in (
        (CODE_SWITCH, REFUSAL_CODES, "refusal code"),
        (TYPE_SWITCH, SERVER_TYPES, "server message type"),
        (DECISION_SWITCH, set(vocabulary.names("fileReviewDecisions")), "file review decision"),
    ):
        for m in pattern.finditer(source):
            block = _block(source, m.end() - 1)
            for case in CASE.finditer(block):
                if case.group(1) not in allowed:
                    problems.append(f"{line(m.start())}: {what} {case.group(1)!r}")
    for pattern, allowed, what in (
        (CODE_COMPARE, REFUSAL_CODES, "refusal code"),
        (TYPE_COMPARE, SERVER_TYPES, "server message type"),
    ):
        for m in pattern.finditer(source):
            if m.group(1) not in allowed:
                problems.append(f"{line(m.start())}: {what} {m.group(1)!r}")
    for m in SENT_LITERAL.finditer(source):
        literal = _block(source, m.start(1))
        kind = re.match(r"\{\s*type:\s*'([^']*)'", literal)
        assert kind is not None
        if kind.group(1) not in PAGE_TYPES:
            problems.append(f"{line(m.start())}: page message type {kind.group(1)!r}")
            continue
        for key in _top_level_keys(literal):
            if key not in PAGE_FIELDS[kind.group(1)]:
                problems.append(f"{line(m.start())}: field {key!r} of {kind.group(1)!r}")
    return problems


# -- the scanners fail on bad snippets ---------------------------------------------------------


def test_the_python_scanner_finds_codes_types_and_fields_outside_the_source() -> None:
    bad = """
raise Refusal("teleported", "no")
code = "exploded"
page.send({"type": "welcome", "protocol": 1, "pageId": "p", "motd": "hi"})
page.send({"type": "telegram", "text": "hi"})
verdict = {"type": "keep-verdict", "callId": c, "ok": False, "code": "nope"}
DELETE = "jupyter_copilot.notebook.delete-cell.invoke"
"""
    found = python_findings(bad)
    assert found == [
        "<snippet>:2: refusal code 'teleported'",
        "<snippet>:3: refusal code 'exploded'",
        "<snippet>:4: field 'motd' of 'welcome'",
        "<snippet>:5: server message type 'telegram'",
        "<snippet>:6: refusal code 'nope'",
        "<snippet>:7: action 'jupyter_copilot.notebook.delete-cell.invoke'",
    ]
    good = """
raise Refusal("stale-source")
code = "aborted"
page.send({"type": "tools-enabled", "enabled": True})
event = {"type": "text", "text": "not a bridge message"}
READ = "jupyter_copilot.notebook.read-cells"
"""
    assert python_findings(good) == []


def test_the_typescript_scanner_finds_codes_types_and_fields_outside_the_source() -> None:
    bad = """
throw new ActionError('crashed', 'no');
reply = failure('kill-switch', 'not a page code');
switch (error.code) {
  case 'stale-source':
    break;
  case 'gone-fishing':
    break;
}
if (code === 'made-up') {}
switch (msg.type) {
  case 'welcome':
  case 'wellcome':
}
this.send({ type: 'hello', protocol: PROTOCOL, pageId: this.pageId, href: url() });
this.send({ type: 'goodbye' });
socket.send(JSON.stringify({ type: 'result', requestId: id, ok: true, answer }));
export const deleteCell = 'jupyter_copilot.notebook.delete-cell.invoke';
"""
    assert typescript_findings(bad) == [
        "<snippet>:18: action 'jupyter_copilot.notebook.delete-cell.invoke'",
        "<snippet>:2: page code 'crashed'",
        "<snippet>:3: page code 'kill-switch'",
        "<snippet>:4: refusal code 'gone-fishing'",
        "<snippet>:11: server message type 'wellcome'",
        "<snippet>:10: refusal code 'made-up'",
        "<snippet>:15: field 'href' of 'hello'",
        "<snippet>:16: page message type 'goodbye'",
        "<snippet>:17: field 'answer' of 'result'",
    ]
    good = """
throw new ActionError('invalid-input', 'The request is malformed.');
this.send({ type: 'result', requestId: requestId as string, ...reply });
this._bridge.send({ type: 'state', fingerprint: f as string, state, coalesced });
export const getContext = 'jupyter_copilot.notebook.get-context';
"""
    assert typescript_findings(good) == []


# -- both sides use only what the source defines -----------------------------------------------


def python_modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "labextension" not in p.parts)


def typescript_modules() -> list[Path]:
    return sorted(p for p in TS_SOURCES.rglob("*.ts") if "generated" not in p.parts)


def test_the_server_uses_only_codes_types_and_fields_of_the_source() -> None:
    modules = python_modules()
    assert len(modules) > 40
    problems = [
        problem
        for path in modules
        for problem in python_findings(
            path.read_text(encoding="utf-8"), str(path.relative_to(REPO))
        )
    ]
    assert problems == []


def test_the_lab_extension_uses_only_codes_types_and_fields_of_the_source() -> None:
    modules = typescript_modules()
    text = "\n".join(p.read_text(encoding="utf-8") for p in modules)
    # The scanner sees the places that matter, so an empty answer means something.
    assert len(CODE_CALL.findall(text)) >= 10
    assert len(SENT_LITERAL.findall(text)) >= 5
    assert len(TYPE_SWITCH.findall(text)) == 1
    problems = [
        problem
        for path in modules
        for problem in typescript_findings(
            path.read_text(encoding="utf-8"), str(path.relative_to(REPO))
        )
    ]
    assert problems == []


def test_every_page_code_is_a_refusal_code_and_every_code_has_a_status_and_text() -> None:
    assert set(vocabulary.PAGE_CODES) <= REFUSAL_CODES
    assert {"invalid-input", "page-error"} <= set(vocabulary.PAGE_CODES)
    assert set(HTTP_STATUS) == set(DEFAULT_TEXT) == REFUSAL_CODES
    assert HTTP_STATUS["page-error"] == 502
    for code in REFUSAL_CODES:
        assert Refusal(code).message == DEFAULT_TEXT[code]
    with pytest.raises(ValueError):
        Refusal("page-crashed")


def test_the_bridge_schemas_define_exactly_the_vocabularys_message_types() -> None:
    assert set(SERVER_FIELDS) == SERVER_TYPES
    assert set(PAGE_FIELDS) == PAGE_TYPES
    hello = schema("bridge-page-message")["$defs"]["hello"]["properties"]["protocol"]
    welcome = schema("bridge-server-message")["$defs"]["welcome"]["properties"]["protocol"]
    assert hello == welcome == {"const": vocabulary.PROTOCOL}


def test_python_names_match_the_vocabulary() -> None:
    from jupyter_copilot.agents import filereviews
    from jupyter_copilot.mcp import skills
    from jupyter_copilot.page import context
    from jupyter_copilot.protocol import callers as grants
    from jupyter_copilot.protocol import registry
    from jupyter_copilot.protocol.registry import load_registry
    from jupyter_copilot.tools import approvals, edits, run_tool, toolspecs

    names = {registry.GET_CONTEXT, registry.READ_CELLS}
    for spec in toolspecs.NOTEBOOK_TOOLS:
        names |= {spec.invoke_action, spec.abort_action}
    assert names == set(vocabulary.ACTIONS)
    assert load_registry().actions | {registry.READ_CELLS} == set(vocabulary.ACTIONS)
    assert sorted(s.name for s in toolspecs.TOOL_SPECS) == sorted(vocabulary.TOOLS)
    assert [s.name for s in toolspecs.NOTEBOOK_TOOLS] == [
        "notebook_edit_cell",
        "notebook_insert_cell",
        "notebook_run_cell",
    ]
    listed = json.loads((PACKAGE / "mcp" / "tools.json").read_text(encoding="utf-8"))
    pages = {s.name for s in toolspecs.NOTEBOOK_TOOLS}
    assert {d["name"] for d in listed} | pages == set(vocabulary.TOOLS)
    assert {t["name"] for t in load_registry().tools} == pages
    assert set(vocabulary.TOOLS) == skills.TOOL_NAMES
    assert (
        grants.SELECTED_CELL,
        grants.ACTIVE_NOTEBOOK,
        grants.CELL_OUTPUTS,
        grants.KERNEL_VARIABLES,
        grants.FILES,
    ) == vocabulary.CONTEXT_REFS
    assert (grants.PLAN, grants.INTERACTIVE, grants.AUTOPILOT) == vocabulary.APPROVAL_MODES
    assert {context.VIEW_STATE, context.SELECTED_CELL} == set(vocabulary.CONTEXT_ENTRIES)
    sent_outcomes = {
        approvals.ALLOWED,
        approvals.DENIED,
        approvals.TIMEOUT,
        approvals.DISMISSED,
        approvals.STOPPED,
        approvals.ABORTED,
    }
    assert sent_outcomes == set(vocabulary.APPROVAL_OUTCOMES)
    assert edits.DECISIONS == vocabulary.REVIEW_DECISIONS
    assert {
        filereviews.KEEP,
        filereviews.UNDO,
        filereviews.CONFLICT,
        filereviews.WITHDRAWN,
    } == vocabulary.FILE_REVIEW_DECISIONS
    assert run_tool.RUN_STATUSES == ("ok", "error", "aborted")
    assert (run_tool.RUN_MARK, run_tool.RUN_MARK_KEY) == ("jupyter_copilot", "agent_run")


def test_the_telemetry_schemas_use_the_vocabulary() -> None:
    def enum(event: str, field: str) -> list[str]:
        data = yaml.safe_load((PACKAGE / "events" / f"{event}.yaml").read_text(encoding="utf-8"))
        return data["properties"][field]["enum"]  # type: ignore[no-any-return]

    assert enum("approval_ended", "outcome") == list(vocabulary.APPROVAL_OUTCOMES)
    assert set(enum("edit_decision", "decision")) == vocabulary.REVIEW_DECISIONS


# -- docs/protocol.md says the same ------------------------------------------------------------


def doc_section(number: int) -> str:
    text = PROTOCOL_DOC.read_text(encoding="utf-8")
    start = text.index(f"\n## {number}. ")
    end = text.find("\n## ", start + 1)
    return text[start:end]


def test_section_7_lists_every_refusal_code_with_its_status_and_nothing_else() -> None:
    table: dict[str, int] = {}
    for row in re.finditer(r"^\| (\d{3}) \| (.*) \|$", doc_section(7), re.MULTILINE):
        for code in re.findall(r"`([a-z-]+)`", row.group(2)):
            assert code not in table, f"{code} is listed twice"
            table[code] = int(row.group(1))
    assert table == HTTP_STATUS


def test_the_edit_skill_explains_only_refusal_codes_and_every_page_code() -> None:
    skill = (REPO / "skills" / "propose-cell-edit" / "SKILL.md").read_text(encoding="utf-8")
    explained = set(re.findall(r"^\| `([a-z-]+)` \|", skill, re.MULTILINE))
    assert explained <= REFUSAL_CODES
    # An edit call can end with any code a page may answer, but unknown-action.
    assert set(vocabulary.PAGE_CODES) - {"unknown-action"} <= explained


def test_section_9_lists_every_bridge_message_and_every_page_code() -> None:
    section = doc_section(9)
    server_part = section[section.index("server -> page") :]
    page_part = section[: section.index("server -> page")]
    listed_page = set(re.findall(r"^- `([a-z-]+)` `\{", page_part, re.MULTILINE))
    listed_server = set(re.findall(r"^- `([a-z-]+)` `\{", server_part, re.MULTILINE))
    assert listed_page == PAGE_TYPES
    assert listed_server == SERVER_TYPES
    for code in vocabulary.PAGE_CODES:
        assert f"`{code}`" in section, code


# -- what a real server sends a page -----------------------------------------------------------


async def test_every_message_a_real_server_sends_a_page_fits_the_schema(
    jp_ws_fetch, jp_fetch, jp_root_dir, copilot
) -> None:
    page = await ScriptedPage.connect(jp_ws_fetch, "p-1")
    page.respond = lambda request: {"activeNotebook": None}
    assert await get_context(jp_fetch) == []  # request
    page.send({"type": "sync-barrier"})  # error
    await next_of(page, "error")
    page.send({"type": "keep", "callId": "never-proposed"})
    assert (await next_of(page, "keep-verdict"))["code"] == "aborted"

    copilot._on_kill_switch_change(KillSwitchState(True, "file"))
    assert (await next_of(page, "tools-enabled"))["enabled"] is False
    copilot._on_kill_switch_change(KillSwitchState(False, None))
    await next_of(page, "tools-enabled")

    session = copilot.dispatcher.pages()[0]
    approvals = copilot.approvals

    async def approve() -> None:
        await approvals.ask(
            owner="me",
            page=session,
            path="a.ipynb",
            tool="notebook_edit_cell",
            description="Open a whole-cell diff for the attached notebook cell",
            details={"artifactId": "a", "cellId": "c1", "newSourceBytes": 3},
            caller_kind="external",
        )

    waiting = asyncio.ensure_future(approve())
    card = await next_of(page, "approval")
    approvals.decide(card["request"]["requestId"], "me", allow=True)
    await waiting
    assert (await next_of(page, "approval-ended"))["outcome"] == "allowed"

    reviews = copilot.conversations.host.file_reviews
    review = await reviews.propose(
        owner="me", group="g", page=session, path="notes.txt", content="hi\n", agent="Demo"
    )
    assert (await next_of(page, "file-review"))["review"]["original"] is None
    await reviews.decide(review.review_id, "me", "undo")
    assert (await next_of(page, "file-review-ended"))["decision"] == "undo"

    assert {m["type"] for m in page.received} == SERVER_TYPES
    for message in page.received:
        assert server_message_problem(message) is None, message
    page.close()


def test_the_schema_check_of_server_messages_can_fail() -> None:
    assert server_message_problem({"type": "welcome", "protocol": 1, "pageId": "p"}) is not None
    assert server_message_problem({"type": "approval-ended", "requestId": "r", "outcome": "meh"})
    assert server_message_problem({"type": "keep-verdict", "callId": "c", "ok": False})
    assert server_message_problem({"type": "teleport"}) is not None
    ok = {"type": "keep-verdict", "callId": "c", "ok": False, "code": "kill-switch"}
    assert server_message_problem(ok) is None
