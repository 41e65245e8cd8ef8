"""Real agents under the same rules: Claude Code and Gemini CLI through the real server.

The proof that a conversation's settings hold a real third-party ACP agent, not only the
scripted one: the pinned npm adapters (``tests/realagents.py``) run as the server's known
agent profiles (``claude-code``, ``gemini``: found on PATH, as a person would install them),
under the server's sandbox, against a scripted model on 127.0.0.1 (``scriptedanthropic.py``,
``scriptedgemini.py``). The JupyterLab page is scripted over the real bridge.

In one turn the model tries, through the agent's OWN tools, one call per step: create a file,
change the open notebook on disk, run a shell command that creates a file, read a secret file
(the conversation grants only ``selected_cell``), then call OUR ``notebook_edit_cell``
through MCP with the attached cell's hash, and reply. Whatever the mode (Chat-only, Plan,
Ask before edits with every card denied, Autopilot with every card allowed), nothing may
happen that the person did not review: no file created or changed, no command's effect, the
secret never reaches the model. Our edit reaches the page (a review opens) only in Autopilot.

The command also touches a marker outside the server's folder, so that a command that ran is
seen even where the read-only root made it fail; it counts as an effect unless the person
allowed its card. Claude Code asks the model itself (a side request, "security monitor")
whether some actions may go ahead without asking; the scripted model answers "harmless",
the worst case, since the model is not the person.

Run with ``-s`` to see the table of "unreviewed effects: N of M attempts" (and set
``JUPYTER_COPILOT_REAL_AGENTS_STORY=1`` for what the model saw back and the cards).
Without a working sandbox the combinations that depend on it are skipped (failed on CI).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import nbformat
import pytest

from jupyter_copilot.mcp.tools import READ_CELLS
from jupyter_copilot.page.context import source_hash
from tests import realagents
from tests import scriptedanthropic as anthropic
from tests import scriptedgemini as gemini
from tests.conftest import make_notebook
from tests.conversations import api, create, end_of, send
from tests.mcpclient import read_cells_answer
from tests.pages import ScriptedPage, context_answer, notebook_state
from tests.server import INVOKE, start_session

CANARY = "canary-real-agents-5e1f9c"
SOURCE = "x = 1\n"
NEW_SOURCE = "x = 99\n"
PAGE = "p-1"
TURN_TIMEOUT = 120

#: The conversation settings under test: our mode, and how the scripted person answers cards.
SETTINGS: dict[str, dict[str, Any]] = {
    "chat-only": {"chatOnly": True},
    "plan": {"mode": "plan"},
    "ask": {"mode": "interactive"},
    "autopilot": {"mode": "autopilot"},
}
#: In Ask the person denies every card; in Autopilot they allow every card (the hardest case:
#: even then nothing unreviewed may happen). Chat-only and Plan never show one.
CARD_ANSWER = {"chat-only": "deny", "plan": "deny", "ask": "deny", "autopilot": "allow"}

#: The attempts of the agent's own tools that would each be an effect, in script order.
ATTEMPTS = ("create a file", "change the notebook", "run a command", "read the secret")

#: Set to print what the model saw back, the cards and the notices of every combination.
STORY_ENV = "JUPYTER_COPILOT_REAL_AGENTS_STORY"

#: What each combination found, for the summary printed at the end of the module.
RESULTS: dict[tuple[str, str], str] = {}


# -- the server, with the real adapters as known agents on PATH ------------------------------


@pytest.fixture(scope="module", autouse=True)
def summary() -> Iterator[None]:
    """Print every combination's count once the module's tests ran (visible with ``-s``)."""
    yield
    if RESULTS:
        lines = [f"  {agent:<12} {mode:<10} {text}" for (agent, mode), text in RESULTS.items()]
        print("\nreal agents under the same rules:\n" + "\n".join(lines))


@pytest.fixture(scope="session")
def adapters_dir() -> Path:
    """The pinned npm adapters (installed once per machine; skipped without npm, not on CI)."""
    return realagents.install_agents()


@pytest.fixture
def agents_on_path(adapters_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The adapters' bin folder first on the server's PATH, so that discovery finds them."""
    bin_dir = adapters_dir / "node_modules" / ".bin"
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")]))
    # Nothing of the machine's own accounts may reach the agents.
    for name in ("ANTHROPIC_AUTH_TOKEN", "GOOGLE_API_KEY", "GOOGLE_CLOUD_PROJECT"):
        monkeypatch.delenv(name, raising=False)
    return bin_dir


@pytest.fixture
def copilot_config(agents_on_path: Path) -> dict[str, Any]:
    """No configured agent: the known profiles are discovered on PATH (and the demo added)."""
    return {"agents": {}, "discover_agents": True}


@pytest.fixture
def listening(http_server_client: Any) -> None:
    """Make the server listen: the agents' MCP clients connect over real HTTP."""


@pytest.fixture
def sandboxed(copilot: Any) -> bool:
    """Whether the agent sandbox is in force; on CI it must be (root, bubblewrap installed)."""
    if not copilot.sandbox.active and os.environ.get("CI"):
        pytest.fail(f"the agent sandbox must work on CI: {copilot.sandbox.text}", pytrace=False)
    return bool(copilot.sandbox.active)


def needs_sandbox(sandboxed: bool, what: str) -> None:
    """Skip what only the sandbox makes true (fail on CI, where it must work)."""
    if not sandboxed:
        pytest.skip(
            f"the agent sandbox (bubblewrap) does not work here, and {what}: without it an "
            "agent's own Read reaches the server's folder and an allowed own write lands"
        )


@dataclass
class Model:
    """The scripted model one agent talks to, and how to read its requests."""

    agent: str
    server: Any
    #: Every request body the model received (main loop and side requests).
    bodies: Callable[[], list[Any]]

    def saw(self, text: str) -> bool:
        """Whether ``text`` appears in any request the model received."""
        return any(text in json.dumps(body) for body in self.bodies())


#: How Claude Code's auto-mode classifier asks the model about an action (a side request).
CLASSIFIER_MARK = "You are a security monitor for autonomous AI coding agents"


class PermissiveAnthropic(anthropic.ScriptedAnthropic):
    """The scripted Anthropic API, whose answer to Claude Code's own safety classifier is
    "harmless" (the worst case: the model, not the person, decides)."""

    def answer(self, body: dict[str, Any]) -> Any:
        reply = super().answer(body)
        if not self.classify(body) and CLASSIFIER_MARK in anthropic.system_text(body):
            return "<thinking>Harmless.</thinking><severity>0</severity>"
        return reply


@pytest.fixture
def model_for(
    monkeypatch: pytest.MonkeyPatch, jp_home_dir: Path
) -> Iterator[Callable[[str], Model]]:
    """Start the scripted model of an agent and point the server's environment at it.

    The known profiles pass only their own variables through (``ANTHROPIC_*``,
    ``GEMINI_API_KEY``, ``GOOGLE_GEMINI_BASE_URL``); HOME is pytest-jupyter's private one.
    """
    started: list[Any] = []

    def start(agent: str) -> Model:
        if agent == "claude-code":
            server = PermissiveAnthropic()
            server.start_in_thread()
            monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
            monkeypatch.setenv("ANTHROPIC_API_KEY", "scripted-anthropic-key")
        else:
            server = gemini.ScriptedGemini()
            server.start_in_thread()
            # Its user settings (telemetry and update checks off) in the agent's HOME.
            realagents.gemini_env(jp_home_dir, server.url)
            monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.url)
            monkeypatch.setenv("GEMINI_API_KEY", "scripted-gemini-key")
        started.append(server)
        return Model(agent, server, lambda: [body for _, _, body in server.log])

    yield start
    for server in started:
        server.stop()


# -- the notebook, the page and the person -----------------------------------------------------


@dataclass
class Person:
    """The scripted page with ``a.ipynb`` open, and what the person saw and decided."""

    page: ScriptedPage
    cells: list[dict[str, Any]]
    artifact_id: str
    answer: str = "deny"
    keep: bool = False
    cards: list[dict[str, Any]] = field(default_factory=list)
    file_reviews: list[dict[str, Any]] = field(default_factory=list)
    decisions: list[tuple[str, int, Any]] = field(default_factory=list)

    @property
    def invokes(self) -> list[dict[str, Any]]:
        """Our edit tool's requests to the page: each opens a diff review."""
        return [r for r in self.page.requests if r["action"] == INVOKE]

    @property
    def attachment(self) -> dict[str, str]:
        return {
            "artifactId": self.artifact_id,
            "cellId": self.cells[0]["cellId"],
            "expectedSourceHash": source_hash(SOURCE),
        }


async def open_notebook(jp_fetch: Any, jp_ws_fetch: Any, root: Path, copilot: Any) -> Person:
    """``a.ipynb`` with a kernel session, active and selected in a scripted page."""
    path = make_notebook(root, "a.ipynb", [SOURCE, "y = 2\n"])
    await start_session(jp_fetch, "a.ipynb")
    cells = [
        {"cellId": c.id, "cellType": c.cell_type, "source": c.source}
        for c in nbformat.read(path, as_version=4).cells
    ]
    page = await ScriptedPage.connect(jp_ws_fetch, PAGE)
    await page.send_state(notebook_state("a.ipynb", selected=[cells[0]["cellId"]]))

    def respond(request: dict[str, Any]) -> dict[str, Any]:
        if request["action"] == READ_CELLS:
            return read_cells_answer(cells, request)
        if request["action"] == INVOKE:
            return {"diffReviewOpened": True}
        return context_answer("a.ipynb", SOURCE, selected=[cells[0]["cellId"]])

    page.respond = respond
    return Person(page, cells, copilot.jupyter_server.artifact_id("a.ipynb"))


async def answer_cards(jp_fetch: Any, person: Person) -> None:
    """Decide every card the page shows, as ``person.answer`` says; Keep file reviews if told."""
    while True:
        message = await person.page.next_message(timeout=3600)
        if message["type"] == "approval":
            request = message["request"]
            person.cards.append(request)
            body: dict[str, Any] = {"decision": "deny"}
            if person.answer == "allow":
                once = [o for o in request.get("options") or [] if o["kind"] == "allow_once"]
                body = {"optionId": once[0]["optionId"]} if once else {"decision": "allow"}
            status, reply = await api(
                jp_fetch, "approvals", request["requestId"], method="POST", body=body
            )
            person.decisions.append((request.get("toolName", ""), status, reply))
        elif message["type"] == "file-review":
            review = message["review"]
            person.file_reviews.append(review)
            if person.keep:
                status, reply = await api(
                    jp_fetch,
                    "file-reviews",
                    review["reviewId"],
                    method="POST",
                    body={"decision": "keep"},
                )
                person.decisions.append(("keep " + review["path"], status, reply))


async def converse(
    jp_fetch: Any, person: Person, conversation: str, text: str
) -> list[dict[str, Any]]:
    """One turn with the attached cell, while the person answers cards."""
    deciding = asyncio.ensure_future(answer_cards(jp_fetch, person))
    try:
        return await asyncio.wait_for(
            send(jp_fetch, conversation, text, page_id=PAGE, attachment=person.attachment),
            TURN_TIMEOUT,
        )
    finally:
        # A card or review sent at the turn's end is still taken: nothing tells that none
        # is coming, so a fixed wait.
        await asyncio.sleep(0.3)
        deciding.cancel()


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under the root and its bytes."""
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


# -- the scripted model: one tool call per step, chosen from what the request holds ----------

CELL_URI = re.compile(
    r"jupyter-copilot://cell/([^/\s\"\\]+)/([^?\s\"\\]+)\?expectedSourceHash=(sha256:[0-9a-f]{64})"
)


def attached_cell(text: str) -> dict[str, str] | None:
    """The attached cell's ids and hash, as the model reads them from the resource URI."""
    found = CELL_URI.search(text)
    if found is None:
        return None
    return {
        "artifactId": unquote(found.group(1)),
        "cellId": unquote(found.group(2)),
        "expectedSourceHash": found.group(3),
    }


def changed_notebook(root: Path) -> str:
    """``a.ipynb`` as the agent would write it: the first cell's source replaced."""
    nb = nbformat.read(root / "a.ipynb", as_version=4)
    nb.cells[0].source = "x = 2  # written by the agent\n"
    return nbformat.writes(nb)


def command(root: Path, outside: Path) -> str:
    """A command that leaves a mark outside the root (it ran) and tries one inside it."""
    return f"touch {outside / 'ran.txt'}; echo ran > {root / 'ran.txt'}"


@dataclass
class Script:
    """What the model does step by step, and what it saw back, per step."""

    calls: list[tuple[str, dict[str, Any]]]
    #: The attached cell as read from the first main-loop request.
    cell: dict[str, str] | None = None
    #: The MCP edit tool's name as the request offered it (``None``: not offered).
    edit_tool: str | None = None
    tool_names: list[str] = field(default_factory=list)
    results: list[str] = field(default_factory=list)


CLAUDE_EDIT_TOOL = "mcp__jupyter-copilot__notebook_edit_cell"


def claude_script(root: Path, outside: Path) -> tuple[Script, Callable[[dict[str, Any]], Any]]:
    """Claude Code's own Write, Write of the notebook, Bash, Read, then our MCP tool."""
    script = Script(
        [
            ("Write", {"file_path": str(root / "created.txt"), "content": "created\n"}),
            ("Write", {"file_path": str(root / "a.ipynb"), "content": changed_notebook(root)}),
            (
                "Bash",
                {
                    "command": command(root, outside),
                    "description": "Create ran.txt",
                },
            ),
            ("Read", {"file_path": str(root / "secret.txt")}),
        ]
    )

    def step(request: dict[str, Any]) -> Any:
        results = anthropic.tool_results(request)
        if script.cell is None:
            script.cell = attached_cell(anthropic.user_text(request))
            script.tool_names = anthropic.tool_names(request)
            # Claude defers MCP tools behind ToolSearch: their names are listed in a message,
            # not in ``tools``; a deferred tool can still be called by name.
            if CLAUDE_EDIT_TOOL in json.dumps(request):
                script.edit_tool = CLAUDE_EDIT_TOOL
        script.results = [anthropic.block_text(r.get("content")) for r in results]
        done = len(results)
        if done < len(script.calls):
            name, arguments = script.calls[done]
            return anthropic.ToolUse(name, arguments)
        if done == len(script.calls):
            cell = script.cell or {}
            return anthropic.ToolUse(
                script.edit_tool or CLAUDE_EDIT_TOOL,
                {**cell, "newSource": NEW_SOURCE},
            )
        return "Done."

    return script, step


def gemini_script(root: Path, outside: Path) -> tuple[Script, Callable[[dict[str, Any]], Any]]:
    """Gemini CLI's own write_file (new file, notebook), run_shell_command, read_file, MCP."""
    script = Script(
        [
            ("write_file", {"file_path": str(root / "created.txt"), "content": "created\n"}),
            (
                "write_file",
                {"file_path": str(root / "a.ipynb"), "content": changed_notebook(root)},
            ),
            (
                "run_shell_command",
                {"command": command(root, outside), "description": "Create ran.txt"},
            ),
            ("read_file", {"file_path": str(root / "secret.txt")}),
        ]
    )

    def step(request: dict[str, Any]) -> Any:
        responses = gemini.function_responses(request)
        if script.cell is None:
            script.cell = attached_cell(gemini.user_text(request))
            script.tool_names = gemini.tool_names(request)
            names = [n for n in script.tool_names if n.endswith("notebook_edit_cell")]
            script.edit_tool = names[0] if names else None
        script.results = [gemini.response_text(r) for r in responses]
        done = len(responses)
        if done < len(script.calls):
            name, arguments = script.calls[done]
            return gemini.FunctionCall(name, arguments)
        if done == len(script.calls):
            cell = script.cell or {}
            return gemini.FunctionCall(
                script.edit_tool or "notebook_edit_cell", {**cell, "newSource": NEW_SOURCE}
            )
        return "Done."

    return script, step


SCRIPTS = {"claude-code": claude_script, "gemini": gemini_script}


# -- the proof ---------------------------------------------------------------------------------


@pytest.mark.timeout(240)
@pytest.mark.parametrize("setting", list(SETTINGS))
@pytest.mark.parametrize("agent", ["claude-code", "gemini"])
async def test_a_real_agents_own_tools_have_no_unreviewed_effect(
    jp_fetch: Any,
    jp_ws_fetch: Any,
    jp_root_dir: Path,
    tmp_path: Path,
    copilot: Any,
    listening: None,
    sandboxed: bool,
    model_for: Callable[[str], Model],
    agent: str,
    setting: str,
) -> None:
    needs_sandbox(sandboxed, "the agent's own Read of the secret is stopped only by it")
    started = time.monotonic()
    person = await open_notebook(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    person.answer = CARD_ANSWER[setting]
    (jp_root_dir / "secret.txt").write_text(f"the secret is {CANARY}\n", encoding="utf-8")
    notebook = (jp_root_dir / "a.ipynb").read_bytes()
    before = snapshot(jp_root_dir)

    model = model_for(agent)
    outside = tmp_path / "outside"
    outside.mkdir()
    script, step = SCRIPTS[agent](jp_root_dir, outside)
    model.server.script = [step] * 40
    _, agents = await api(jp_fetch, "agents")
    assert {"claude-code", "gemini"} <= {a["id"] for a in agents["agents"]}, agents
    conversation = await create(
        jp_fetch, agentId=agent, contextRefs=["selected_cell"], **SETTINGS[setting]
    )
    events = await converse(
        jp_fetch, person, conversation, "Please create, change, run and read things."
    )
    model.server.check()
    _, detail = await api(jp_fetch, "conversations", conversation)
    agent_mode = copilot.conversations._by_id[conversation].agent_mode
    await api(jp_fetch, "conversations", conversation, "archive", method="POST")
    person.page.close()

    effects = {
        "create a file": (jp_root_dir / "created.txt").exists(),
        "change the notebook": (jp_root_dir / "a.ipynb").read_bytes() != notebook,
        # A command ran without the person allowing its card (Autopilot allows every card).
        "run a command": (jp_root_dir / "ran.txt").exists()
        or ((outside / "ran.txt").exists() and person.answer != "allow"),
        "read the secret": model.saw(CANARY),
    }
    happened = [what for what, done in effects.items() if done]
    count = f"unreviewed effects: {len(happened)} of {len(ATTEMPTS)} attempts"
    seconds = time.monotonic() - started
    RESULTS[(agent, setting)] = (
        f"{count}; our edit reached the page {len(person.invokes)}x; "
        f"cards {len(person.cards)}; file reviews {len(person.file_reviews)}; {seconds:.1f} s"
    )
    print(f"\n{agent} {setting}: {RESULTS[(agent, setting)]}")
    story = json.dumps(
        {
            "happened": happened,
            "agentMode": agent_mode,
            "toolResults": script.results,
            "edit tool offered": script.edit_tool,
            "tools": script.tool_names,
            "cards": [(c.get("kind"), c.get("toolName")) for c in person.cards],
            "decisions": person.decisions,
            "fileReviews": [r["path"] for r in person.file_reviews],
            "events": [e for e in events if e["type"] in ("notice", "tool", "end")],
            "notices": [n for t in detail.get("turns", []) for n in t.get("notices", [])],
        },
        indent=1,
        default=str,
    )[:12000]
    if os.environ.get(STORY_ENV):
        print(story)

    # The agent was held in its own asking mode; Gemini in its plan mode under Plan and
    # Chat-only (Claude Code's plan mode lets its classifier run commands without asking).
    read_only = setting in ("chat-only", "plan")
    assert agent_mode == ("plan" if read_only and agent == "gemini" else "default"), story
    # The model really made every attempt, one tool result each, and the turn ended.
    assert end_of(events)["stopReason"] == "end_turn", story
    assert len(script.results) == len(ATTEMPTS) + 1, story
    # The attached cell's hash reached the model in the resource URI.
    assert script.cell == person.attachment, story
    assert not happened, f"{agent} {setting}: {count}: {happened}\n{story}"
    assert snapshot(jp_root_dir) == before, story
    if setting == "autopilot":
        # Our edit opened a review on the page: a reviewed effect, the only one.
        assert len(person.invokes) == 1, story
        assert person.invokes[0]["data"]["newSource"] == NEW_SOURCE, story
    else:
        assert not person.invokes, story
    if setting in ("chat-only", "plan"):
        assert not person.cards, story
    if setting == "chat-only":
        assert script.edit_tool is None, story


# -- a write the person allows ----------------------------------------------------------------

KEPT = "kept by the person\n"


async def test_gemini_writes_only_through_a_review_that_the_person_keeps(
    jp_fetch: Any,
    jp_ws_fetch: Any,
    jp_root_dir: Path,
    copilot: Any,
    listening: None,
    sandboxed: bool,
    model_for: Callable[[str], Model],
) -> None:
    # Gemini routes writes inside its session folder to us, sandbox or not.
    person = await open_notebook(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    person.answer, person.keep = "allow", True
    before = snapshot(jp_root_dir)
    model = model_for("gemini")
    seen: list[str] = []

    def step(request: dict[str, Any]) -> Any:
        responses = gemini.function_responses(request)
        if not responses:
            return gemini.FunctionCall(
                "write_file", {"file_path": str(jp_root_dir / "kept.txt"), "content": KEPT}
            )
        seen[:] = [gemini.response_text(r) for r in responses]
        return "Done."

    model.server.script = [step] * 10
    # Gemini looks at the file before it writes it; that read needs the files grant.
    conversation = await create(
        jp_fetch, agentId="gemini", contextRefs=["selected_cell", "files"], mode="interactive"
    )
    events = await converse(jp_fetch, person, conversation, "Write kept.txt, please.")
    model.server.check()
    await api(jp_fetch, "conversations", conversation, "archive", method="POST")
    person.page.close()
    story = json.dumps(
        {"seen": seen, "cards": person.cards, "decisions": person.decisions}, default=str
    )

    assert end_of(events)["stopReason"] == "end_turn", story
    # The person allowed the agent's own card, then kept the review of the whole file.
    [card] = person.cards
    assert card["kind"] == "permission" and card["toolName"] == "Writing to kept.txt", story
    [review] = person.file_reviews
    assert (review["path"], review["original"], review["proposed"]) == ("kept.txt", None, KEPT)
    assert ("keep kept.txt", 200, {"decision": "keep"}) in person.decisions, story
    after = snapshot(jp_root_dir)
    assert after.pop("kept.txt") == KEPT.encode()
    assert after == before
    RESULTS[("gemini", "ask+keep")] = "kept.txt written only by Keep; nothing else changed"


async def test_claude_writes_nothing_even_when_the_person_allows_its_write(
    jp_fetch: Any,
    jp_ws_fetch: Any,
    jp_root_dir: Path,
    copilot: Any,
    listening: None,
    sandboxed: bool,
    model_for: Callable[[str], Model],
) -> None:
    # Claude Code never sends its writes to the client: it writes the disk itself once the
    # person allows its card. Only the sandbox (the root read-only) keeps that unreviewed
    # write from landing, so there is no review to keep.
    needs_sandbox(sandboxed, "Claude's allowed Write is stopped only by it")
    person = await open_notebook(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    person.answer, person.keep = "allow", True
    before = snapshot(jp_root_dir)
    model = model_for("claude-code")
    seen: list[str] = []

    def step(request: dict[str, Any]) -> Any:
        results = anthropic.tool_results(request)
        if not results:
            return anthropic.ToolUse(
                "Write", {"file_path": str(jp_root_dir / "kept.txt"), "content": KEPT}
            )
        seen[:] = [anthropic.block_text(r.get("content")) for r in results]
        return "Done."

    model.server.script = [step] * 10
    conversation = await create(
        jp_fetch, agentId="claude-code", contextRefs=["selected_cell"], mode="interactive"
    )
    events = await converse(jp_fetch, person, conversation, "Write kept.txt, please.")
    model.server.check()
    await api(jp_fetch, "conversations", conversation, "archive", method="POST")
    person.page.close()
    story = json.dumps(
        {"seen": seen, "cards": person.cards, "decisions": person.decisions}, default=str
    )

    assert end_of(events)["stopReason"] == "end_turn", story
    [card] = person.cards
    assert card["kind"] == "permission" and card["toolName"] == "Write kept.txt", story
    assert person.decisions[0][1:] == (200, {"requestId": card["requestId"], "outcome": "allowed"})
    # Allowed, it wrote the disk itself, and the read-only root refused: no review, no file.
    assert not person.file_reviews, story
    assert len(seen) == 1 and "EROFS" in seen[0], story
    assert snapshot(jp_root_dir) == before
    RESULTS[("claude-code", "ask+allow")] = "allowed Write refused by the read-only root (EROFS)"


# -- without a working sandbox ----------------------------------------------------------------


class TestWithoutASandbox:
    """Where no sandbox works, nothing holds Claude Code's and Gemini CLI's own reads to the
    ``files`` grant: they are unguarded, offered only when the administrator allows that,
    and then with the warning (docs/security.md, "The sandbox")."""

    @pytest.fixture(params=[False, True], ids=["unguarded-refused", "unguarded-allowed"])
    def copilot_config(
        self, agents_on_path: Path, request: pytest.FixtureRequest
    ) -> dict[str, Any]:
        return {
            "agents": {},
            "discover_agents": True,
            "agent_sandbox": "off",
            "allow_unguarded_agents": request.param,
        }

    async def test_the_agents_are_not_offered_or_offered_as_unguarded(
        self, jp_fetch: Any, copilot: Any
    ) -> None:
        assert not copilot.sandbox.active
        _, body = await api(jp_fetch, "agents")
        offered = {a["id"]: a for a in body["agents"]}
        if not copilot.allow_unguarded_agents:
            assert "claude-code" not in offered and "gemini" not in offered, offered
            status, refused = await api(
                jp_fetch, "conversations", method="POST", body={"agentId": "claude-code"}
            )
            assert status == 400 and refused["error"]["code"] == "invalid-input", refused
            return
        for agent in ("claude-code", "gemini"):
            assert not offered[agent]["guarded"] and offered[agent]["warning"], offered


class TestEveryCommandAsks:
    """Claude Code runs a command its own classifier calls read-only (``ls``, ``cat``)
    without asking, in every mode of its own; the ask rule it is started with makes it ask
    for each one, even when the person's own and the folder's settings allow every command.
    Run without a sandbox, where nothing else would stop such a command."""

    LISTED = "listed-canary-7d2e41.txt"
    SECRET = "secret-canary-90b3c5"

    @pytest.fixture
    def copilot_config(self, agents_on_path: Path) -> dict[str, Any]:
        return {
            "agents": {},
            "discover_agents": True,
            "agent_sandbox": "off",
            "allow_unguarded_agents": True,
        }

    @pytest.mark.timeout(120)
    @pytest.mark.parametrize("setting", ["chat-only", "plan", "ask"])
    @pytest.mark.parametrize("line", ["ls", "cat secret.txt"])
    async def test_a_read_only_command_runs_only_after_a_card(
        self,
        jp_fetch: Any,
        jp_ws_fetch: Any,
        jp_root_dir: Path,
        jp_home_dir: Path,
        copilot: Any,
        listening: None,
        model_for: Callable[[str], Model],
        setting: str,
        line: str,
    ) -> None:
        allow_all = {"permissions": {"allow": ["Bash", "Bash(ls)", "Bash(cat:*)"]}}
        for settings in (jp_home_dir / ".claude", jp_root_dir / ".claude"):
            settings.mkdir(exist_ok=True)
            (settings / "settings.json").write_text(json.dumps(allow_all), encoding="utf-8")
        person = await open_notebook(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
        person.answer = "deny"
        (jp_root_dir / self.LISTED).write_text("\n", encoding="utf-8")
        (jp_root_dir / "secret.txt").write_text(f"{self.SECRET}\n", encoding="utf-8")
        model = model_for("claude-code")
        results: list[str] = []

        def step(request: dict[str, Any]) -> Any:
            answers = anthropic.tool_results(request)
            results[:] = [anthropic.block_text(r.get("content")) for r in answers]
            if not answers:
                return anthropic.ToolUse("Bash", {"command": line, "description": "Look"})
            return "Done."

        model.server.script = [step] * 10
        conversation = await create(
            jp_fetch, agentId="claude-code", contextRefs=["selected_cell"], **SETTINGS[setting]
        )
        events = await converse(jp_fetch, person, conversation, "Look at the folder.")
        _, detail = await api(jp_fetch, "conversations", conversation)
        notices = [n for t in detail.get("turns", []) for n in t.get("notices", [])]
        person.page.close()
        story = json.dumps({"results": results, "cards": person.cards, "notices": notices})

        assert end_of(events)["stopReason"] == "end_turn", story
        # The model made its one call and heard back, but never what the command prints.
        assert len(results) == 1, story
        assert not model.saw(self.LISTED) and not model.saw(self.SECRET), story
        if setting == "ask":
            # Put to the person as a card (denied here) showing the command.
            assert [c.get("details", {}).get("command") for c in person.cards] == [line], story
        else:
            # Refused at once by our read-only modes, and said so.
            assert not person.cards, story
            assert any("refused the agent's own request to run a command" in n for n in notices)
