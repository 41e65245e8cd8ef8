"""The fail-closed order that edit, insert and run share (docs/protocol.md sections 5, 11.1, 11.2).

Each failing condition below is reached alone with its exact code; then, for every pair of
conditions a tool can meet at once, the call must end exactly as it does with the earlier
condition alone (same code, same message), which proves the order. On every refusal nothing
reaches a page: no invoke request, no approval card, and the notebook is as it was.

The scene runs with real-time collaboration on, so the server itself checks the cell (steps 6
and 7) in the live shared document; without it those steps are the page's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from jupyter_copilot.protocol.callers import AUTOPILOT, PLAN
from jupyter_copilot.protocol.refusals import Refusal
from tests.unit.scene import EDIT_CELL, INSERT_CELL, RUN_CELL, Notebook, Scene, caller


@dataclass
class Attempt:
    """One call about to be made: its scene, its input and its caller's mode and rights."""

    scene: Scene
    data: dict[str, Any]
    mode: str = AUTOPILOT
    may_write: bool = True

    @property
    def notebook(self) -> Notebook:
        notebook = self.scene.browser.notebook
        assert notebook is not None
        return notebook


@dataclass(frozen=True)
class Tool:
    """What the shared checks need to know about one proposal tool."""

    name: str
    #: A valid input against the default scene.
    data: Callable[[Notebook], dict[str, Any]]
    #: The input that holds the proposed source (None: the tool proposes none).
    source_field: str | None
    #: The input naming the cell the checks of step 6 look at.
    cell_field: str
    #: Its own step 1 check (run: ``CopilotApp.agent_run_cells``).
    permitted_check: bool = False
    #: Steps 6 (lock, type) and 7 (hash) apply: the call changes or runs an existing cell.
    cell_checks: bool = True

    def __str__(self) -> str:
        return self.name


EDIT = Tool(
    EDIT_CELL.name,
    lambda nb: {
        "artifactId": "nb-a",
        "cellId": "c1",
        "expectedSourceHash": nb.cell("c1").hash,
        "newSource": "x = 2\n",
    },
    "newSource",
    "cellId",
)
INSERT = Tool(
    INSERT_CELL.name,
    lambda nb: {"artifactId": "nb-a", "afterCellId": "c1", "cellType": "code", "source": "y = 3\n"},
    "source",
    "afterCellId",
    cell_checks=False,
)
RUN = Tool(
    RUN_CELL.name,
    lambda nb: {"artifactId": "nb-a", "cellId": "c1", "expectedSourceHash": nb.cell("c1").hash},
    None,
    "cellId",
    permitted_check=True,
)
TOOLS = [EDIT, INSERT, RUN]


def _lock(attempt: Attempt, tool: Tool) -> None:
    cell = attempt.notebook.cell("c1")
    if tool is RUN:
        cell.metadata["jupyter_copilot"] = {"agent_run": False}
    else:
        cell.metadata["editable"] = False


def _retype(attempt: Attempt, tool: Tool) -> None:
    attempt.notebook.cell("c1").cell_type = "markdown"


def _reconnect_unfocused_pair(attempt: Attempt, tool: Tool) -> None:
    attempt.scene.connect("page-b", Notebook("b.ipynb"))


def _other_view(attempt: Attempt, tool: Tool) -> None:
    attempt.notebook.view_type = "json"
    attempt.scene.browser.report()


def _read_only_page(attempt: Attempt, tool: Tool) -> None:
    attempt.notebook.writable = False
    attempt.scene.browser.report()


def _oversized(attempt: Attempt, tool: Tool) -> None:
    assert tool.source_field is not None
    attempt.data[tool.source_field] = "z" * (attempt.scene.settings["tool_input_budget_bytes"] + 1)


def _empty(attempt: Attempt, tool: Tool) -> None:
    assert tool.source_field is not None
    attempt.data[tool.source_field] = ""


def _edited_meanwhile(attempt: Attempt, tool: Tool) -> None:
    attempt.notebook.cell("c1").source = "x = 100\n"


@dataclass(frozen=True)
class Condition:
    """One way a call fails, at the step of the order where it is checked."""

    name: str
    code: str
    apply: Callable[[Attempt, Tool], None]
    applies: Callable[[Tool], bool] = lambda tool: True
    #: Conditions that cannot hold together with this one.
    excludes: frozenset[str] = field(default_factory=frozenset)


#: Every condition, in the documented order.
CONDITIONS = [
    Condition("input-breaks-schema", "invalid-input", lambda a, t: a.data.update(extra=1)),
    Condition("kill-switch-engaged", "kill-switch", lambda a, t: a.scene.engage_kill_switch()),
    Condition("feature-off", "feature-disabled", lambda a, t: setattr(a.scene, "enabled", False)),
    Condition("plan-mode", "plan-mode", lambda a, t: setattr(a, "mode", PLAN)),
    Condition(
        "runs-never-permitted",
        "not-permitted",
        lambda a, t: setattr(a.scene, "run_policy", "never"),
        applies=lambda t: t.permitted_check,
    ),
    Condition(
        "no-page",
        "no-active-page",
        lambda a, t: a.scene.browser.close(),
        excludes=frozenset({"two-unfocused-pages"}),
    ),
    Condition("two-unfocused-pages", "ambiguous-active-notebook", _reconnect_unfocused_pair),
    Condition("not-a-notebook-view", "not-authoring-view", _other_view),
    Condition(
        "another-notebook", "artifact-mismatch", lambda a, t: a.data.update(artifactId="nb-b")
    ),
    Condition(
        "no-kernel-session",
        "no-active-session",
        lambda a, t: a.scene.registrations.session_deleted("session-a.ipynb"),
    ),
    Condition("read-only-document", "read-only", _read_only_page),
    Condition(
        "source-over-budget",
        "over-budget",
        _oversized,
        applies=lambda t: t.source_field is not None,
        excludes=frozenset({"source-empty"}),
    ),
    Condition(
        "source-empty", "invalid-input", _empty, applies=lambda t: t.source_field is not None
    ),
    Condition(
        "cell-gone",
        "cell-not-found",
        lambda a, t: a.notebook.remove("c1"),
        excludes=frozenset({"cell-locked", "cell-retyped", "cell-edited"}),
    ),
    Condition("cell-locked", "cell-locked", _lock, applies=lambda t: t.cell_checks),
    Condition("cell-retyped", "cell-type-mismatch", _retype, applies=lambda t: t.cell_checks),
    Condition("cell-edited", "stale-source", _edited_meanwhile, applies=lambda t: t.cell_checks),
]
BY_NAME = {c.name: c for c in CONDITIONS}


async def attempt_for(scene: Scene, tool: Tool) -> Attempt:
    """A call that would succeed: collaboration on, the cell served once (as an agent reads
    it before an edit), and the pages' requests so far forgotten."""
    scene.collaborate()
    await scene.reader.context(caller())
    scene.browser.requests.clear()
    return Attempt(scene, tool.data(scene.notebook))


async def outcome(scene: Scene, tool: Tool, *names: str) -> Refusal:
    """Apply the named conditions, make the call, and return its refusal; check that the
    refusal left everything as it was."""
    attempt = await attempt_for(scene, tool)
    for name in names:
        BY_NAME[name].apply(attempt, tool)
    before = attempt.notebook.snapshot()
    with pytest.raises(Refusal) as err:
        await scene.tools[tool.name].invoke(
            caller(attempt.mode, may_write=attempt.may_write), attempt.data, call_id="call-1"
        )
    assert scene.requests() == [], "a refused call reached the page"
    assert scene.cards() == [], "a refused call showed an approval card"
    assert attempt.notebook.snapshot() == before
    return err.value


def applicable(tool: Tool) -> list[Condition]:
    return [c for c in CONDITIONS if c.applies(tool)]


def single_cases() -> list[Any]:
    return [pytest.param(t, c.name, id=f"{t}-{c.name}") for t in TOOLS for c in applicable(t)]


def later_than(tool: Tool, earlier: str) -> list[str]:
    """The conditions after ``earlier`` that can hold together with it."""
    conditions = applicable(tool)
    later = conditions[conditions.index(BY_NAME[earlier]) + 1 :]
    return [
        c.name
        for c in later
        if c.name not in BY_NAME[earlier].excludes and earlier not in c.excludes
    ]


def earlier_cases() -> list[Any]:
    """Each tool with each of its conditions that a later one can join."""
    return [
        pytest.param(t, c.name, id=f"{t}-{c.name}")
        for t in TOOLS
        for c in applicable(t)
        if later_than(t, c.name)
    ]


async def test_a_call_without_a_failing_condition_reaches_the_page(scene: Scene) -> None:
    invoked = []
    for tool in TOOLS:
        attempt = await attempt_for(scene, tool)
        result = await scene.tools[tool.name].invoke(caller(), attempt.data)
        assert result["success"] is True
        invoked += [r["action"] for r in scene.requests()]
    assert invoked == [EDIT_CELL.invoke_action, INSERT_CELL.invoke_action, RUN_CELL.invoke_action]


@pytest.mark.parametrize(("tool", "name"), single_cases())
async def test_each_condition_alone_refuses_with_its_own_code(
    scene: Scene, tool: Tool, name: str
) -> None:
    refusal = await outcome(scene, tool, name)
    assert refusal.code == BY_NAME[name].code, refusal.message


@pytest.mark.parametrize(("tool", "earlier"), earlier_cases())
async def test_the_earlier_check_wins_over_every_later_one(
    new_scene: Callable[[], Scene], tool: Tool, earlier: str
) -> None:
    alone = await outcome(new_scene(), tool, earlier)
    for later in later_than(tool, earlier):
        both = await outcome(new_scene(), tool, earlier, later)
        assert (both.code, both.message) == (alone.code, alone.message), (
            f"with {earlier} and {later}, {tool} refused with {both.code}, not {alone.code}"
        )


@pytest.mark.parametrize("tool", TOOLS, ids=str)
async def test_a_refused_call_id_keeps_its_refusal_and_never_reaches_the_page(
    scene: Scene, tool: Tool
) -> None:
    attempt = await attempt_for(scene, tool)
    scene.engage_kill_switch()
    invoke = scene.tools[tool.name].invoke
    for _ in range(2):
        with pytest.raises(Refusal) as err:
            await invoke(caller(), attempt.data, call_id="call-1")
        assert err.value.code == "kill-switch"
    assert scene.requests() == []


@pytest.mark.parametrize("tool", TOOLS, ids=str)
async def test_a_file_the_contents_manager_will_not_write_is_read_only(
    scene: Scene, tool: Tool
) -> None:
    scene.writable_files.discard("a.ipynb")
    assert (await outcome(scene, tool)).code == "read-only"


@pytest.mark.parametrize("tool", TOOLS, ids=str)
async def test_a_user_the_authorizer_will_not_let_write_is_read_only(
    scene: Scene, tool: Tool
) -> None:
    attempt = await attempt_for(scene, tool)
    with pytest.raises(Refusal) as err:
        await scene.tools[tool.name].invoke(caller(may_write=False), attempt.data)
    assert err.value.code == "read-only"
    assert scene.requests() == [] and scene.cards() == []


#: Where docs/protocol.md lists each tool's order. The edit's section 5 names plan-mode only
#: among the other codes; its place (after the switches) is in section 8 and as in 11.1.
DOCUMENTED_ORDER = {
    EDIT.name: ("## 5. ", "## 6. ", {"plan-mode"}),
    INSERT.name: ("### 11.1 ", "### 11.2 ", set()),
    RUN.name: ("### 11.2 ", "## 12. ", set()),
}


@pytest.mark.parametrize("tool", TOOLS, ids=str)
def test_the_conditions_follow_the_order_the_protocol_documents(tool: Tool) -> None:
    docs = (Path(__file__).parents[3] / "docs" / "protocol.md").read_text(encoding="utf-8")
    start, end, unlisted = DOCUMENTED_ORDER[tool.name]
    section = docs[docs.index(start) : docs.index(end)]
    at = 0
    for condition in applicable(tool):
        if condition.code in unlisted:
            continue
        found = section.find(f"`{condition.code}`", at)
        assert found >= 0, f"{condition.name}: `{condition.code}` is not where the docs list it"
        at = found
