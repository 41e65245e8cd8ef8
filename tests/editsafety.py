"""A randomized proof of edit safety in real JupyterLab (docs/protocol.md section 13).

A Hypothesis rule-based state machine draws what a person, a second collaborator and an
agent do to one notebook: real keystrokes (Undo and Redo included), clicks, tab switches,
saves and reloads; proposals made with the current hash or a stale one, several for one
cell; proposed new cells (after a cell or at the top) and the notebook's own Undo right
after one was kept; requests to run a cell, with the hash the agent read or a stale one,
allowed or denied, with or without typing in the cell while the run card waits; Keep and
Undo on open reviews; aborts; the kill switch engaged and released. The expected notebook
is modelled here, cell by cell id, and after every step the live notebooks, the server and
the page are held to it:

1. each cell holds exactly what people typed plus the proposals that were kept, each applied
   at its Keep and only when its hash still matched; the file after a save holds the same;
2. no typed character is lost or reordered (1 is an exact comparison), and no source the
   page's model ever held contains a proposal that was not kept;
3. Undo in the cell's editor right after a Keep restores the cell as it was before the Keep;
4. a refused Keep changes nothing and says why;
5. the server, the page and the model agree on which reviews are open;
6. a cell runs only when the person allowed it and it still held the source the agent
   read: every cell's execution count is the model's, which only such a run changes.

The machine runs on a thread of its own: each step runs its coroutines on the test's event
loop, where the Jupyter server and Playwright live. ``tests/test_edit_safety.py`` runs a
fixed budget; ``bench/edit_safety.py`` runs the long one and counts violations.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import random
import time
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from hypothesis import HealthCheck, Phase, settings
from hypothesis import seed as use_seed
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    get_state_machine_test,
    invariant,
    precondition,
    rule,
)

from jupyter_copilot.admin.killswitch import config_directories
from jupyter_copilot.page.context import source_hash
from tests.eventually import eventually
from tests.lab import Lab, settled
from tests.mcpclient import refusal_code, structured
from tests.server import (
    ABORT,
    INSERT_ABORT,
    INSERT_INVOKE,
    INVOKE,
    RUN_ABORT,
    RUN_INVOKE,
    call_action,
)

T = TypeVar("T")

#: The notebook under test, and a second one to switch tabs to.
PATH = "a.ipynb"
OTHER = "b.ipynb"
INITIAL = ["import os", "def total(xs):\n    return sum(xs)\n", "total([1, 2])"]
#: How many cells the notebook may grow to with kept insertions; a step names a cell by an
#: index below this, taken modulo the cells there are.
MAX_CELLS = 6
CELLS = range(MAX_CELLS)
#: What people type. Proposals carry the marker ``P<n>Q``, which no typing can produce.
TYPED = "abcdefghijklmnopqrstuvwxyz0123456789 "
#: Environment of a run: sequences per mode, steps per sequence, seed, where figures go,
#: and whether violations are counted (the benchmark) instead of shrunk and raised (a test).
SEQUENCES_ENV = "EDIT_SAFETY_SEQUENCES"
STEPS_ENV = "EDIT_SAFETY_STEPS"
SEED_ENV = "EDIT_SAFETY_SEED"
REPORT_ENV = "EDIT_SAFETY_REPORT"
COUNT_ENV = "EDIT_SAFETY_COUNT"
#: How long one step may take before it counts as a failure.
STEP_TIMEOUT = 60.0
#: How long a settled state may take to show (a collaborator's typing crosses the server).
SETTLE = 10.0


@dataclass
class Figures:
    """What one run did, for the benchmark's report."""

    mode: str = ""
    seed: int = 0
    sequences: int = 0
    steps: int = 0
    keystrokes: int = 0
    proposals: int = 0
    refused_proposals: int = 0
    keeps: int = 0
    refused_keeps: int = 0
    inserts: int = 0
    inserts_kept: int = 0
    notebook_undos: int = 0
    runs: int = 0
    runs_done: int = 0
    keyboard_undos: int = 0
    reloads: int = 0
    seconds: float = 0.0
    violations: list[dict[str, Any]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class World:
    """What every sequence of one run shares: the loop, the server, the pages, the agent."""

    loop: asyncio.AbstractEventLoop
    copilot: Any
    jp_fetch: Any
    root: Path
    alice: Lab
    agent: Any
    bob: Lab | None = None
    count_violations: bool = False
    #: When counting: once a violation's error contains this, the remaining sequences do
    #: nothing (a test that proves a planted bug is caught needs one catch, not all of them).
    enough: str | None = None
    #: Set when the test ends, so that the machine's thread stops with it.
    stopped: bool = False
    #: Whether the person may reload the page (a planted page bug does not survive one).
    reloads: bool = True
    #: Whether the agent proposes new cells and asks to run cells (issue 16's tools).
    inserts: bool = True
    runs: bool = True
    figures: Figures = field(default_factory=Figures)


@dataclass
class Cell:
    """One cell of the model: the states its source went through since its undo history
    began, where it is now, which states a Keep produced, the positions Redo returns to."""

    id: str
    history: list[str]
    position: int = 0
    kept_states: set[int] = field(default_factory=set)
    redo: list[int] = field(default_factory=list)
    #: The collaborator typed here: the person's undo history in this cell is theirs alone.
    peer_touched: bool = False
    #: The execution count the cell shows; only a run the person allowed changes it.
    count: int | None = None

    @property
    def source(self) -> str:
        return self.history[self.position]


@dataclass
class Review:
    """A review the model expects: open, or showing a refused Keep's conflict.

    An edit names its cell; a proposed new cell goes ``offset`` cells after ``anchor`` (1
    after the cell it follows, 0 before the cell that was first when it was proposed)."""

    cell_id: str | None
    base: str
    new: str
    marker: str
    state: str = "open"  # "open" or "conflict"
    kind: str = "edit"  # "edit" or "insert"
    anchor: str | None = None
    offset: int = 1


class Violation(AssertionError):
    """An invariant did not hold."""


class Stopped(BaseException):
    """The test around the machine ended: no step may run, and no sequence counts."""


def budget() -> tuple[int, int]:
    """Sequences per mode and steps per sequence of this run."""
    return int(os.environ.get(SEQUENCES_ENV, "6")), int(os.environ.get(STEPS_ENV, "25"))


#: The seed of a run that names none. CI replays the same sequences each time, as Hypothesis
#: advises for CI: a red run is then the code's doing, and reproducible. New interleavings
#: come from ``EDIT_SAFETY_SEED=random`` and from the benchmark, which draws a seed per run.
DEFAULT_SEED = 20261202


def run_seed() -> int:
    """The seed of this run: given, drawn when ``random``, else the fixed one."""
    given = os.environ.get(SEED_ENV, "")
    if given == "random":
        return random.SystemRandom().randrange(2**32)
    return int(given) if given else DEFAULT_SEED


def step(function: Callable[..., None]) -> Callable[..., None]:
    """A machine step: skipped once the sequence broke, logged, and in counting mode a
    failure marks the sequence as violating instead of ending the run."""

    @functools.wraps(function)
    def run_step(self: EditSafety, **kwargs: Any) -> None:
        if self.broken:
            return
        arguments = ", ".join(f"{k}={v!r}" for k, v in kwargs.items() if k != "data")
        self.log.append(f"{function.__name__}({arguments})")
        self.world.figures.steps += 1
        # Only the step right after a Keep of a new cell may undo it with the notebook's Undo.
        self.inserted_before, self.just_inserted = self.just_inserted, None
        try:
            function(self, **kwargs)
        except Exception as error:
            self.failed(error)

    return run_step


class EditSafety(RuleBasedStateMachine):
    """The person, the collaborator and the agent, against the model of the notebook.

    Hypothesis requires what a sequence draws to depend on its earlier draws alone, never on
    what the browser did: preconditions read only what is fixed for a run, every argument is
    drawn the same way whatever the state (an index, not a choice among open reviews), and a
    step that does not apply does nothing. Otherwise a sequence that failed, or an Undo that
    grouped keystrokes differently, makes Hypothesis stop with "inconsistent data
    generation" instead of counting or shrinking.
    """

    world: ClassVar[World]

    def __init__(self) -> None:
        super().__init__()
        figures = self.world.figures
        figures.sequences += 1
        self.sequence = figures.sequences
        self.log: list[str] = []
        self.broken = False
        #: The notebook's cells, in order; set from the page when the sequence starts.
        self.cells: list[Cell] = []
        self.reviews: dict[str, Review] = {}
        self.call_ids: list[str] = []
        #: The kind of every proposal made ("edit" or "insert"), for its abort.
        self.kinds: dict[str, str] = {}
        #: The id of the cell the last step's Keep inserted, while nothing else happened since.
        self.just_inserted: str | None = None
        self.inserted_before: str | None = None
        self.kept: set[str] = set()
        self.proposal_count = 0
        self.active = PATH
        self.killed = False
        self.reloaded = False
        if self.world.enough and any(self.world.enough in v["error"] for v in figures.violations):
            self.broken = True
            return
        try:
            self.run(self._reset())
        except Exception as error:
            self.log.append("(start of the sequence)")
            self.failed(error)

    def teardown(self) -> None:
        if os.environ.get("EDIT_SAFETY_DEBUG"):
            print(f"sequence {self.sequence}: " + "; ".join(self.log), flush=True)

    # -- plumbing ----------------------------------------------------------------------------

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float = STEP_TIMEOUT) -> T:
        """Run a coroutine on the test's event loop and wait for it."""
        if self.world.stopped or self.world.loop.is_closed():
            coroutine.close()
            raise Stopped("the test ended")
        future = asyncio.run_coroutine_threadsafe(coroutine, self.world.loop)
        try:
            return future.result(timeout)
        except TimeoutError:
            future.cancel()
            raise

    def failed(self, error: BaseException) -> None:
        """Raise, for Hypothesis to shrink; or, when counting, record and stop this sequence."""
        if not self.world.count_violations:
            # Shrinking replays the steps in a real browser and can take minutes: say what
            # failed now, with the steps that led there.
            steps = "; ".join(self.log)
            print(f"sequence {self.sequence} failed: {error!r}\n  {steps}", flush=True)
            raise error
        self.broken = True
        self.world.figures.violations.append(
            {
                "sequence": self.sequence,
                "error": f"{type(error).__name__}: {error}",
                "steps": list(self.log),
            }
        )

    @property
    def alice(self) -> Lab:
        return self.world.alice

    @property
    def collaborative(self) -> bool:
        return self.world.bob is not None

    def peers(self) -> list[Lab]:
        return [self.world.alice] + ([self.world.bob] if self.world.bob else [])

    @property
    def sources(self) -> list[str]:
        return [cell.source for cell in self.cells]

    def _cells_now(self) -> list[tuple[str, str]]:
        """The (id, source) of every cell of the model, as a saved file holds them."""
        return [(cell.id, cell.source) for cell in self.cells]

    def _cell(self, pick: int) -> tuple[int, Cell]:
        """The cell a step drew, by its index modulo the cells there are now."""
        index = pick % len(self.cells)
        return index, self.cells[index]

    def _by_id(self, cell_id: str | None) -> int:
        """The index of the cell with this id, or -1."""
        return next((i for i, c in enumerate(self.cells) if c.id == cell_id), -1)

    def _open_calls(self) -> set[str]:
        """The calls whose review the server holds open, of both proposal tools."""
        copilot = self.world.copilot
        return {
            call.call_id for tool in copilot.proposals.tools for call in tool.calls.open_reviews()
        }

    async def _reset(self) -> None:
        """Start a sequence from the initial notebook: its three cells only, no reviews, no
        run card, switch released, saved."""
        world = self.world
        for call_id in self._open_calls():
            for abort in (ABORT, INSERT_ABORT):
                await call_action(world.jp_fetch, abort, {"data": {"callId": call_id}})
        await self._write_kill_switch(False)
        await self._activate(PATH)
        await eventually(lambda: _no_reviews(self.alice), "no open review", timeout=SETTLE)
        await self.alice.page.evaluate(RESET, {"path": PATH, "sources": INITIAL})
        for lab in self.peers():
            await eventually(
                lambda lab=lab: _sources_are(lab, INITIAL), "the reset notebook", timeout=SETTLE
            )
            await lab.page.evaluate(CLEAR_HISTORY, PATH)
            await lab.page.evaluate(INSTALL_LOG, PATH)
        ids = await self.alice.page.evaluate(CELL_IDS, PATH)
        counts = await self.alice.page.evaluate(COUNTS, PATH)
        self.cells = [Cell(i, [s], count=c) for i, s, c in zip(ids, INITIAL, counts, strict=True)]
        if _file_cells(world.root / PATH) != self._cells_now():
            await self._save()
        await self._wait_active(PATH)

    async def _activate(self, path: str) -> None:
        """Bring a notebook's tab to the front, as a click on its tab does."""
        lab = self.alice
        current = await lab.page.evaluate(CURRENT_PATH)
        if current != path:
            await lab.select_tab(path)
            try:
                await eventually(
                    lambda: _current_is(lab, path), f"the tab of {path}", timeout=SETTLE
                )
            except AssertionError:
                shown = await lab.page.evaluate(IN_FRONT)
                raise Violation(f"the tab of {path} was clicked; in front: {shown}") from None

    async def _wait_active(self, path: str) -> None:
        """Wait until the server knows which notebook the person's page has in front."""
        page_id = await self.alice.page_id()

        async def known() -> bool:
            try:
                _, active = self.world.copilot.dispatcher.active_notebook(page_id)
            except Exception:
                return False
            return active.get("path") == path  # type: ignore[no-any-return]

        try:
            await eventually(known, f"the server to see {path} in front", timeout=SETTLE)
        except AssertionError:
            raise Violation(
                f"the server does not see {path} in front; {await self._where()}"
            ) from None

    async def _save(self) -> None:
        """Save with the keyboard from the notebook and wait for the file to match.

        Under real-time collaboration the server saves the shared document itself after
        each change; a Ctrl+S racing that save makes JupyterLab ask whether to overwrite
        the file, a question about JupyterLab's saving, not about edits. There the step
        waits for the server's save."""
        lab = self.alice
        if not self.collaborative:
            await lab.notebook(PATH).locator(".jp-Cell .jp-InputPrompt").first.click()
            await lab.page.keyboard.press("Control+s")
        expected = self._cells_now()

        async def on_disk() -> bool:
            return _file_cells(self.world.root / PATH) == expected

        await eventually(on_disk, "the saved file to hold the notebook", timeout=SETTLE * 2)

    async def _write_kill_switch(self, engaged: bool) -> None:
        """Engage or release the kill switch in the admin's config file and wait until
        every page has heard it."""
        directory = Path(config_directories(self.world.copilot)[0])
        directory.mkdir(parents=True, exist_ok=True)
        file = directory / "jupyter_copilot_config.json"
        if self.world.copilot.kill_switch_state().engaged == engaged:
            return
        heard = [len(lab.traffic.received_of_type("tools-enabled")) for lab in self.peers()]
        file.write_text(json.dumps({"CopilotApp": {"tools_enabled": not engaged}}))
        for lab, before in zip(self.peers(), heard, strict=True):

            async def told(lab: Lab = lab, before: int = before) -> bool:
                messages = lab.traffic.received_of_type("tools-enabled")[before:]
                return bool(messages) and messages[-1]["enabled"] is (not engaged)

            await eventually(told, "the page to hear the kill switch", timeout=SETTLE)

    async def _live(self, lab: Lab) -> list[str] | None:
        return await lab.page.evaluate(SOURCES, PATH)  # type: ignore[no-any-return]

    async def _settled(self, what: str) -> None:
        """Wait until every page's notebook holds the model's sources."""
        for lab in self.peers():
            await eventually(lambda lab=lab: _sources_are(lab, self.sources), what, timeout=SETTLE)

    async def _type(self, lab: Lab, cell: int, keys: list[str], text: str) -> None:
        await lab.click_cell(PATH, cell)
        for key in keys:
            await lab.page.keyboard.press(key)
        if text:
            await lab.page.keyboard.type(text)

    @staticmethod
    def _record(cell: Cell, states: list[str], kept: bool = False) -> None:
        """The cell went through ``states`` from its current one (typing or a Keep)."""
        position = cell.position
        del cell.history[position + 1 :]
        cell.kept_states = {k for k in cell.kept_states if k <= position}
        cell.history.extend(states)
        cell.position = len(cell.history) - 1
        if kept:
            cell.kept_states.add(cell.position)
        cell.redo = []

    # -- the person ----------------------------------------------------------------------------

    @rule(cell=st.sampled_from(CELLS), text=st.text(TYPED, min_size=1, max_size=6))
    @step
    def type_text(self, cell: int, text: str) -> None:
        """Click into a cell and type at its end."""
        self._to_notebook()
        index, target = self._cell(cell)
        self.run(self._type(self.alice, index, ["Control+End"], text))
        self._typed(target, text)
        self.run(self._settled("the typed text in the notebook"))

    def _typed(self, cell: Cell, text: str) -> None:
        base = cell.source
        self._record(cell, [base + text[: i + 1] for i in range(len(text))])
        self.world.figures.keystrokes += len(text) + 1

    @rule(cell=st.sampled_from(CELLS))
    @step
    def select(self, cell: int) -> None:
        """Click a cell's prompt: it becomes the selected cell, in command mode."""
        self._to_notebook()
        index, _ = self._cell(cell)
        self.run(
            self.alice.notebook(PATH)
            .locator(".jp-Cell")
            .nth(index)
            .locator(".jp-InputPrompt")
            .click()
        )

    @rule(cell=st.sampled_from(CELLS))
    @step
    def undo_keys(self, cell: int) -> None:
        """Ctrl+Z in the cell's editor: back to an earlier state of the person's own edits,
        exactly to the state before a Keep when the Keep was the last of them."""
        index, target_cell = self._cell(cell)
        if target_cell.peer_touched:
            return  # the collaborator's characters are theirs: not modelled
        self._to_notebook()
        position = target_cell.position
        if position == 0:
            targets = [0]
        elif position in target_cell.kept_states:
            targets = [position - 1]
        else:
            floor = max([k for k in target_cell.kept_states if k <= position], default=0)
            targets = list(range(floor, position))
        self.run(self._type(self.alice, index, ["Control+z"], ""))
        self.world.figures.keyboard_undos += 1
        target = self.run(self._landed(index, targets, "Ctrl+Z"))
        if target != position:
            target_cell.redo.append(position)
        target_cell.position = target

    @rule(cell=st.sampled_from(CELLS))
    @step
    def redo_keys(self, cell: int) -> None:
        """Ctrl+Shift+Z in the cell's editor: exactly the state the last Undo left."""
        index, target_cell = self._cell(cell)
        if target_cell.peer_touched:
            return
        self._to_notebook()
        redo = target_cell.redo
        targets = [redo[-1]] if redo else [target_cell.position]
        self.run(self._type(self.alice, index, ["Control+Shift+z"], ""))
        target = self.run(self._landed(index, targets, "Ctrl+Shift+Z"))
        if redo:
            redo.pop()
        target_cell.position = target

    async def _landed(self, cell: int, targets: list[int], keys: str) -> int:
        """Which allowed state the cell at this index is in after an Undo or Redo."""
        allowed = {self.cells[cell].history[t]: t for t in sorted(targets)}
        await asyncio.sleep(0.05)  # nothing to observe when the key may change nothing

        async def landed() -> str | None:
            live = await self._live(self.alice)
            source = live[cell] if live else None
            return source if source in allowed else None

        try:
            source = await eventually(landed, keys, timeout=SETTLE)
        except AssertionError:
            live = await self._live(self.alice)
            raise Violation(
                f"{keys} in cell {cell} left {live[cell] if live else None!r}; "
                f"allowed: {sorted(allowed)!r}"
            ) from None
        return allowed[source]  # type: ignore[index]

    # One rule each way would let Hypothesis's swarm testing keep only "away" in a sequence,
    # leaving the rest of it in the other tab: one rule that goes back and forth.
    @rule()
    @step
    def switch_tab(self) -> None:
        """Click the other notebook's tab, or the notebook's tab again."""
        self._switch(OTHER if self.active == PATH else PATH)

    def _switch(self, target: str) -> None:
        self.run(self._activate(target))
        self.active = target
        self.run(self._wait_active(target))

    def _to_notebook(self) -> None:
        """A person about to act in the notebook first clicks its tab if another is in front."""
        if self.active != PATH:
            self.log[-1] += f" (after a click on the tab of {PATH})"
            self._switch(PATH)

    @rule()
    @step
    def save(self) -> None:
        """Ctrl+S: the file holds exactly the live notebook."""
        self._to_notebook()
        self.run(self._save())

    @precondition(lambda self: self.world.reloads)
    @rule()
    @step
    def reload(self) -> None:
        """Reload the page (after saving, alone: a reload drops unsaved work by design).
        Every open review goes with the page; the notebook comes back as it was. Once a
        sequence: a reload costs seconds."""
        if self.reloaded:
            return
        self.reloaded = True
        self._to_notebook()
        if not self.collaborative:
            self.run(self._save())
        self.run(self._reload())
        self.world.figures.reloads += 1
        self.reviews.clear()
        # The cells come back with their ids, sources and counts, and no undo history.
        ids = self.run(self.alice.page.evaluate(CELL_IDS, PATH))
        if ids != [c.id for c in self.cells]:
            raise Violation(f"the reloaded cells have ids {ids}; expected {self.cells}")
        self.cells = [
            Cell(c.id, [c.source], peer_touched=c.peer_touched, count=c.count) for c in self.cells
        ]
        self.active = PATH

    async def _reload(self) -> None:
        lab = self.alice
        await lab.page.reload()
        await lab.page.wait_for_selector("#jupyter-copilot-panel", state="attached", timeout=60000)
        # The workspace puts back the tabs it had; then both notebooks are open, PATH in front.
        # Both the saved layout and the file of the page's address (lab/tree/<path>), which
        # the file browser opens and brings to the front after the layout is back.
        await settled(lab.page)
        await lab.page.evaluate(OPEN, OTHER)
        await lab.open(PATH)
        await eventually(lambda: _sources_are(lab, self.sources), "the reloaded notebook")
        await lab.page.evaluate(INSTALL_LOG, PATH)
        await self._wait_active(PATH)

    # -- the collaborator ----------------------------------------------------------------------

    @precondition(lambda self: self.collaborative)
    @rule(cell=st.sampled_from(CELLS), text=st.text(TYPED, min_size=1, max_size=6))
    @step
    def peer_types(self, cell: int, text: str) -> None:
        """The second person types at the end of a cell of the same notebook."""
        assert self.world.bob is not None
        index, target = self._cell(cell)
        self.run(self._type(self.world.bob, index, ["Control+End"], text))
        target.peer_touched = True
        self._record(target, [target.source + text])
        self.world.figures.keystrokes += len(text) + 1
        self.run(self._settled("the collaborator's typing in both notebooks"))

    # -- the agent -----------------------------------------------------------------------------

    @rule(cell=st.sampled_from(CELLS), rewrite=st.booleans())
    @step
    def propose(self, cell: int, rewrite: bool) -> None:
        """The agent reads the notebook and proposes a whole new source for one cell, with
        the hash of what it read: a rewrite, or the cell with a line added."""
        self._propose(cell, rewrite, fresh=True)

    @rule(cell=st.sampled_from(CELLS))
    @step
    def propose_stale(self, cell: int) -> None:
        """The agent proposes with the hash of an earlier state of the cell."""
        self._propose(cell, rewrite=False, fresh=False)

    def _next_call(self, kind: str) -> tuple[int, str, str]:
        """A new proposal's number, marker and callId."""
        self.proposal_count += 1
        number = self.proposal_count
        call_id = f"s{self.sequence}-p{number}"
        self.call_ids.append(call_id)
        self.kinds[call_id] = kind
        return number, f"P{number}Q", call_id

    def _hash_read(self, cell: Cell, fresh: bool) -> str:
        """The hash the agent sends: of the cell as it is, or of an earlier state of it."""
        current = cell.source
        if fresh:
            return source_hash(current)
        earlier = [s for s in cell.history if s != current]
        return source_hash(earlier[-1] if earlier else current + " ")

    def _expected(self, fresh: bool = True) -> tuple[int, str | None]:
        """How the server answers a call before any review or card opens."""
        if self.killed:
            return (503, "kill-switch")
        if self.active != PATH:
            return (409, "artifact-mismatch")
        if not fresh:
            return (409, "stale-source")
        return (200, None)

    def _answered(
        self, what: str, answer: tuple[int, dict[str, Any]], expected: tuple[int, str | None]
    ) -> None:
        status, body = answer
        code = body.get("error", {}).get("code")
        if (status, code) != expected:
            raise Violation(
                f"{what} answered {status} {body!r}; expected {expected!r}; "
                + self.run(self._where())
            )

    def _propose(self, cell: int, rewrite: bool, fresh: bool) -> None:
        number, marker, call_id = self._next_call("edit")
        _, target = self._cell(cell)
        current = target.source
        if self.active == PATH:
            self.run(self._read())
        expected_hash = self._hash_read(target, fresh)
        new = f"value = {number}  # {marker}\n" if rewrite else f"{current}\n# {marker}"
        expected = self._expected(fresh)
        data = {"cellId": target.id, "expectedSourceHash": expected_hash, "newSource": new}
        self._answered("proposal", self.run(self._invoke(INVOKE, data, call_id)), expected)
        self.world.figures.proposals += 1
        if expected[0] != 200:
            self.world.figures.refused_proposals += 1
            return
        for other_id, other in list(self.reviews.items()):
            if other.kind == "edit" and other.cell_id == target.id:
                del self.reviews[other_id]  # superseded by the newer proposal
        self.reviews[call_id] = Review(target.id, current, new, marker)
        self.run(_review(self.alice, call_id).wait_for(state="visible", timeout=SETTLE * 1000))

    @precondition(lambda self: self.world.inserts)
    @rule(cell=st.sampled_from(CELLS), top=st.booleans())
    @step
    def propose_insert(self, cell: int, top: bool) -> None:
        """The agent proposes a new code cell after one cell, or at the top: a pending cell
        that changes no cell until Keep. Not when the notebook is already long."""
        if len(self.cells) + len([r for r in self.reviews.values() if r.kind == "insert"]) >= (
            MAX_CELLS
        ):
            return
        number, marker, call_id = self._next_call("insert")
        if self.active == PATH:
            self.run(self._read())
        _, after = self._cell(cell)
        new = f"inserted = {number}  # {marker}\n"
        data = {"afterCellId": None if top else after.id, "cellType": "code", "source": new}
        expected = self._expected()
        self._answered("insert", self.run(self._invoke(INSERT_INVOKE, data, call_id)), expected)
        self.world.figures.inserts += 1
        if expected[0] != 200:
            return
        # At the top, the page anchors the new cell before the cell that is first now.
        anchor, offset = (self.cells[0].id, 0) if top else (after.id, 1)
        self.reviews[call_id] = Review(None, "", new, marker, "open", "insert", anchor, offset)
        self.run(_review(self.alice, call_id).wait_for(state="visible", timeout=SETTLE * 1000))

    async def _where(self) -> str:
        """Which notebook the page, its last state messages and the server say is in front."""
        page_id = await self.alice.page_id()
        try:
            _, active = self.world.copilot.dispatcher.active_notebook(page_id)
            server = active.get("path")
        except Exception as error:
            server = repr(error)
        shown = await self.alice.page.evaluate(IN_FRONT)
        sent = [
            (m["state"].get("activeNotebook") or {}).get("path")
            for m in self.alice.traffic.of_type("state")[-4:]
        ]
        return f"in front: page {shown}, last states sent {sent}, server {server!r}"

    async def _read(self) -> None:
        """Read the whole notebook over MCP: exactly the live sources, or refused by the
        kill switch."""
        result = await self.world.agent.call_tool("notebook_read_cells", {})
        if self.killed:
            if refusal_code(result) != "kill-switch":
                raise Violation(f"a read under the kill switch answered {structured(result)!r}")
            return
        read = [c["source"] for c in structured(result)["cells"]]
        if read != self.sources:
            raise Violation(f"the agent read {read!r}, the notebook holds {self.sources!r}")

    async def _invoke(
        self, action: str, data: dict[str, Any], call_id: str
    ) -> tuple[int, dict[str, Any]]:
        """One tool call on the person's page, on the notebook under test."""
        artifact = self.world.copilot.proposal_tools["notebook_edit_cell"].host.artifact_id(PATH)
        body = {
            "data": {"artifactId": artifact, **data},
            "callId": call_id,
            "pageId": await self.alice.page_id(),
        }
        return await call_action(self.world.jp_fetch, action, body)

    @precondition(lambda self: self.world.runs)
    @rule(
        cell=st.sampled_from(CELLS),
        fresh=st.booleans(),
        typed=st.text(TYPED, max_size=3),
        allow=st.booleans(),
    )
    @step
    def request_run(self, cell: int, fresh: bool, typed: str, allow: bool) -> None:
        """The agent asks to run a cell with the hash it read (or a stale one); the run card
        shows; the person may type into that cell while it waits; then Allow or Deny. The
        cell runs only when allowed and still holding exactly the source the agent read."""
        self.proposal_count += 1
        call_id = f"s{self.sequence}-r{self.proposal_count}"
        index, target = self._cell(cell)
        if self.active == PATH:
            self.run(self._read())
        expected_hash = self._hash_read(target, fresh)
        self.world.figures.runs += 1
        self.run(self._request_run(index, target, expected_hash, fresh, typed, allow, call_id))

    async def _request_run(
        self,
        index: int,
        cell: Cell,
        expected_hash: str,
        fresh: bool,
        typed: str,
        allow: bool,
        call_id: str,
    ) -> None:
        lab = self.alice
        data = {"cellId": cell.id, "expectedSourceHash": expected_hash}
        call = asyncio.ensure_future(self._invoke(RUN_INVOKE, data, call_id))
        card = lab.page.locator(".jp-Copilot-Approval[data-kind='run']")
        try:

            async def card_or_answer() -> bool:
                return call.done() or await card.is_visible()

            await eventually(card_or_answer, "a run card, or the run's refusal", timeout=SETTLE)
            expected = self._expected(fresh)
            if call.done():
                # Refused before any card: the switches, the notebook in front, and (only
                # where the server holds a live shared document) a stale hash.
                if expected == (409, "stale-source") and not self.collaborative:
                    raise Violation("a stale run was refused before its card showed")
                self._answered("run request", call.result(), expected)
                return
            if self._expected() != (200, None):
                raise Violation(f"a run card showed; expected {self._expected()!r} at once")
            line = card.locator(".jp-Copilot-ApprovalSource")
            if typed:
                await self._type(lab, index, ["Control+End"], typed)
                self._typed(cell, typed)
                await self._settled("the text typed while the run card waits")
            stale = "true" if (typed or not fresh) else "false"

            async def card_follows() -> bool:
                return await line.get_attribute("data-stale") == stale

            await eventually(card_follows, f"the run card to say stale={stale}", timeout=SETTLE)
            button = ".jp-Copilot-ApprovalAllow" if allow else ".jp-Copilot-ApprovalDeny"
            await card.locator(button).click(timeout=SETTLE * 1000)
            answer = await asyncio.wait_for(asyncio.shield(call), STEP_TIMEOUT / 2)
            await card.wait_for(state="detached", timeout=SETTLE * 1000)
        finally:
            if not call.done():
                # A step that failed leaves no card behind for the next sequence.
                abort = {"data": {"callId": call_id}}
                await call_action(self.world.jp_fetch, RUN_ABORT, abort)
                call.cancel()
        if not allow:
            self._answered("a denied run", answer, (403, "denied"))
        elif stale == "true":
            self._answered("a run of a changed cell", answer, (409, "stale-source"))
        else:
            self._answered("an allowed run", answer, (200, None))
            count = answer[1]["result"]["executionCount"]
            if not isinstance(count, int) or count == cell.count:
                raise Violation(f"an allowed run answered the execution count {count!r}")
            cell.count = count
            self.world.figures.runs_done += 1

    @rule(pick=st.integers(0, 31))
    @step
    def abort(self, pick: int) -> None:
        """The agent aborts one of its calls: an open review is withdrawn, nothing else."""
        if not self.call_ids:
            return
        call_id = self.call_ids[pick % len(self.call_ids)]
        self.log[-1] = f"abort(call={call_id!r})"
        review = self.reviews.get(call_id)
        was_open = review is not None and review.state == "open"
        action = INSERT_ABORT if self.kinds[call_id] == "insert" else ABORT
        status, body = self.run(
            call_action(self.world.jp_fetch, action, {"data": {"callId": call_id}})
        )
        if (status, body) != (200, {"result": {"aborted": was_open}}):
            raise Violation(f"abort answered {status} {body!r}; expected aborted={was_open}")
        if was_open:
            del self.reviews[call_id]
            self.run(_review(self.alice, call_id).wait_for(state="detached", timeout=SETTLE * 1000))

    # -- the person's decisions ----------------------------------------------------------------

    def _decidable(self) -> list[str]:
        return sorted(self.reviews)

    @rule(pick=st.integers(0, 7))
    @step
    def keep(self, pick: int) -> None:
        """Press Keep: applied only if the cell still holds the proposal's base source and
        the kill switch is released; otherwise nothing changes and the review says why."""
        if not self.reviews:
            return
        call_id = self._decidable()[pick % len(self.reviews)]
        self.log[-1] = f"keep(review={call_id!r})"
        self._to_notebook()
        self._keep(call_id)

    def _keep(self, call_id: str) -> None:
        review = self.reviews[call_id]
        if review.state == "conflict":
            # A review refused for a changed cell offers no Keep any more, only Dismiss,
            # and keeps saying why.
            self.run(self._says(call_id, "conflict", "changed"))
            self.run(self._offers_no_keep(call_id))
            return
        decisions = len(self._decisions(call_id))
        self.run(self._press(call_id, ".jp-Copilot-ReviewKeep"))
        if self.killed:
            self.world.figures.refused_keeps += 1
            self.run(self._says(call_id, "refused", "administrator"))
            if len(self._decisions(call_id)) != decisions:
                raise Violation("a Keep under the kill switch reported a decision")
            return
        if review.kind == "insert":
            self._keep_insert(call_id, review)
            return
        cell = self.cells[self._by_id(review.cell_id)]
        if cell.source != review.base:
            self.world.figures.refused_keeps += 1
            review.state = "conflict"
            self.run(self._says(call_id, "conflict", "changed"))
            self.run(self._decided(call_id, "conflict"))
            return
        self.run(_review(self.alice, call_id).wait_for(state="detached", timeout=SETTLE * 1000))
        del self.reviews[call_id]
        self.kept.add(review.marker)
        self._record(cell, [review.new], kept=True)
        self.world.figures.keeps += 1
        self.run(self._decided(call_id, "keep"))
        self.run(self._settled("the kept proposal in the notebook"))

    def _keep_insert(self, call_id: str, review: Review) -> None:
        """A kept new cell goes where its anchor says, as a cell of its own with a new id."""
        anchor = self._by_id(review.anchor)
        if anchor < 0:
            raise Violation(f"the model lost the anchor of {call_id}")  # no step deletes cells
        index = anchor + review.offset
        self.run(_review(self.alice, call_id).wait_for(state="detached", timeout=SETTLE * 1000))
        del self.reviews[call_id]
        self.kept.add(review.marker)
        known = {c.id for c in self.cells}
        ids = self.run(self.alice.page.evaluate(CELL_IDS, PATH))
        if len(ids) != len(self.cells) + 1 or ids[index] in known:
            raise Violation(f"a kept new cell for index {index}: the cells are now {ids}")
        self.cells.insert(index, Cell(ids[index], [review.new]))
        self.world.figures.keeps += 1
        self.world.figures.inserts_kept += 1
        self.just_inserted = ids[index]
        self.run(self._decided(call_id, "keep"))
        self.run(self._settled("the kept new cell in the notebook"))

    @rule()
    @step
    def notebook_undo(self) -> None:
        """Right after a new cell was kept, the notebook's Undo (Z in command mode) takes it
        out again, leaving every other cell as it was. At any other time, nothing."""
        if self.inserted_before is not None:
            self._undo_insert(self.inserted_before)

    def _undo_insert(self, cell_id: str) -> None:
        index = self._by_id(cell_id)
        self.run(self._notebook_undo(index))
        del self.cells[index]
        self.world.figures.notebook_undos += 1
        self.run(self._settled("the notebook without the new cell after Z"))

    async def _notebook_undo(self, index: int) -> None:
        prompt = self.alice.notebook(PATH).locator(".jp-Cell").nth(index).locator(".jp-InputPrompt")
        await prompt.click()
        await self.alice.page.keyboard.press("z")

    @rule(then_undo=st.booleans())
    @step
    def keep_latest(self, then_undo: bool) -> None:
        """Press Keep on the newest review, as after reading it; a new cell just kept may
        then be taken out again with the notebook's Undo, as a person who changed their
        mind does."""
        if not self.reviews:
            return
        self._to_notebook()
        self._keep(list(self.reviews)[-1])
        if then_undo and self.just_inserted is not None:
            self.log[-1] += " then Z"
            self._undo_insert(self.just_inserted)
            self.just_inserted = None

    @rule(pick=st.integers(0, 7))
    @step
    def undo_review(self, pick: int) -> None:
        """Press the review's Undo: the proposal is dropped and the cell is untouched."""
        if not self.reviews:
            return
        call_id = self._decidable()[pick % len(self.reviews)]
        self.log[-1] = f"undo_review(review={call_id!r})"
        self._to_notebook()
        review = self.reviews.pop(call_id)
        self.run(self._press(call_id, ".jp-Copilot-ReviewUndo"))
        self.run(_review(self.alice, call_id).wait_for(state="detached", timeout=SETTLE * 1000))
        if review.state == "open":
            self.run(self._decided(call_id, "undo"))

    async def _press(self, call_id: str, button: str) -> None:
        """Click a review's button as a person does, also when it is disabled (nothing may
        happen then)."""
        locator = _review(self.alice, call_id).locator(button)
        await locator.scroll_into_view_if_needed(timeout=SETTLE * 1000)
        await locator.click(force=True, timeout=SETTLE * 1000)

    async def _says(self, call_id: str, state: str, words: str) -> None:
        review = _review(self.alice, call_id)

        async def says() -> bool:
            shown = await review.get_attribute("data-state")
            message = await review.locator(".jp-Copilot-ReviewMessage").inner_text()
            return shown == state and words in message.lower()

        await eventually(says, f"the review to show {state!r} and say {words!r}", timeout=SETTLE)

    async def _offers_no_keep(self, call_id: str) -> None:
        keep = _review(self.alice, call_id).locator(".jp-Copilot-ReviewKeep")
        if await keep.is_visible() or await keep.is_enabled():
            raise Violation(f"the refused review {call_id} still offers Keep")

    def _decisions(self, call_id: str) -> list[str]:
        return [
            m["decision"] for m in self.alice.traffic.of_type("review") if m["callId"] == call_id
        ]

    async def _decided(self, call_id: str, decision: str) -> None:
        async def reported() -> bool:
            return self._decisions(call_id) == [decision]

        await eventually(reported, f"the decision {decision!r} for {call_id}", timeout=SETTLE)

    # -- the admin -------------------------------------------------------------------------

    # One rule, for the reason ``switch_tab`` is one.
    @rule()
    @step
    def kill_switch(self) -> None:
        """The admin engages the kill switch in the config file, or releases it."""
        self.run(self._write_kill_switch(not self.killed))
        self.killed = not self.killed

    # -- after every step ------------------------------------------------------------------

    @invariant()
    def notebook_server_and_page_agree(self) -> None:
        if self.broken:
            return
        try:
            self.run(self._check())
        except Exception as error:
            self.failed(error)

    async def _check(self) -> None:
        for lab in self.peers():
            if lab is not self.alice:
                # The collaborator's copy follows through the server: a moment, no more.
                with contextlib.suppress(AssertionError):
                    await eventually(
                        lambda lab=lab: _sources_are(lab, self.sources), "", timeout=SETTLE
                    )
            live = await self._live(lab)
            if live != self.sources:
                raise Violation(f"the notebook holds {live!r}; expected {self.sources!r}")
        counts = await self.alice.page.evaluate(COUNTS, PATH)
        if counts != [c.count for c in self.cells]:
            raise Violation(
                f"the execution counts are {counts}; expected {[c.count for c in self.cells]}"
            )
        for lab in self.peers():
            seen: list[str] = await lab.page.evaluate(TAKE_LOG)
            for source in seen:
                for marker in _markers(source):
                    if marker not in self.kept:
                        raise Violation(f"the notebook held an unkept proposal: {source!r}")
        expected_open = {c for c, r in self.reviews.items() if r.state == "open"}

        async def agree() -> bool:
            server = self._open_calls()
            shown = await self.alice.page.evaluate(REVIEWS)
            page_open = {r["callId"] for r in shown if r["state"] != "conflict"}
            page_all = {r["callId"] for r in shown}
            return server == expected_open == page_open and page_all == set(self.reviews)

        try:
            await eventually(agree, "", timeout=SETTLE)
        except AssertionError:
            server = sorted(self._open_calls())
            shown = await self.alice.page.evaluate(REVIEWS)
            raise Violation(
                f"open reviews disagree: server {server}, page {shown}, "
                f"expected {sorted(expected_open)} of {sorted(self.reviews)}"
            ) from None


def _markers(source: str) -> list[str]:
    found = []
    start = source.find("P")
    while start != -1:
        end = source.find("Q", start)
        if end == -1:
            break
        if source[start + 1 : end].isdigit():
            found.append(source[start : end + 1])
        start = source.find("P", start + 1)
    return found


def _review(lab: Lab, call_id: str) -> Any:
    return lab.page.locator(f".jp-Copilot-Review[data-call-id='{call_id}']")


async def _sources_are(lab: Lab, sources: list[str]) -> bool:
    return await lab.page.evaluate(SOURCES, PATH) == sources  # type: ignore[no-any-return]


async def _current_is(lab: Lab, path: str) -> bool:
    return await lab.page.evaluate(CURRENT_PATH) == path  # type: ignore[no-any-return]


async def _no_reviews(lab: Lab) -> bool:
    """Dismiss the reviews left showing a conflict; true once none is left.

    The reset between sequences is no step of theirs, so its Undo is a click from the
    page's script, not the mouse: a mouse click first scrolls the review into view, and
    under load that made the review's node detach and come back for the click's whole 30 s
    (seen once in a run of the browser tests), failing the reset of the next sequence.
    """
    return await lab.page.evaluate(DISMISS_REVIEWS) == 0  # type: ignore[no-any-return]


def _file_cells(path: Path) -> list[tuple[str, str]] | None:
    """The (id, source) of each cell of a notebook file."""
    try:
        notebook = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return [
        (c.get("id"), "".join(c["source"]) if isinstance(c["source"], list) else c["source"])
        for c in notebook["cells"]
    ]


# -- what the tests and the benchmark call -----------------------------------------------------


def run_machine(
    world: World, sequences: int, steps: int, seed: int, shrink_seconds: int | None = None
) -> Figures:
    """Run ``sequences`` random sequences of up to ``steps`` steps; blocking, so call it from
    a thread other than the event loop's. Raises the shrunk failure unless counting.

    Shrinking replays each candidate sequence in the browser, until Hypothesis's own limit
    of five minutes; ``shrink_seconds`` sets a shorter one (Hypothesis has no setting for
    it, so this sets its engine's constant for the run, and keeps five minutes if that
    constant is gone)."""
    world.figures.seed = seed
    EditSafety.world = world
    test = get_state_machine_test(
        EditSafety,
        settings=settings(
            max_examples=sequences,
            stateful_step_count=steps,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
            phases=[Phase.generate] if world.count_violations else [Phase.generate, Phase.shrink],
            print_blob=False,
        ),
    )
    started = time.monotonic()
    try:
        with shrinking_within(shrink_seconds):
            use_seed(seed)(test)()
    finally:
        world.figures.seconds = time.monotonic() - started
        report = os.environ.get(REPORT_ENV)
        if report:
            with open(report, "a", encoding="utf-8") as out:
                out.write(json.dumps(world.figures.as_json()) + "\n")
    return world.figures


@contextlib.contextmanager
def shrinking_within(seconds: int | None) -> Iterator[None]:
    """Hypothesis stops shrinking after ``seconds`` instead of its five minutes, while inside."""
    from hypothesis.internal.conjecture import engine

    default = getattr(engine, "MAX_SHRINKING_SECONDS", None)
    if seconds is None or default is None:
        yield
        return
    engine.MAX_SHRINKING_SECONDS = seconds
    try:
        yield
    finally:
        engine.MAX_SHRINKING_SECONDS = default


# -- JavaScript run in the pages -------------------------------------------------------------

_PANEL = """
    const panelOf = path => [...window.jupyterapp.shell.widgets('main')]
        .find(w => w.context && w.context.path === path && w.content && w.content.model);
"""

SOURCES = f"""path => {{ {_PANEL}
    const panel = panelOf(path);
    return panel ? [...panel.content.model.cells].map(c => c.sharedModel.getSource()) : null;
}}"""

CELL_IDS = f"""path => {{ {_PANEL}
    return [...panelOf(path).content.model.cells].map(c => c.id);
}}"""

COUNTS = f"""path => {{ {_PANEL}
    return [...panelOf(path).content.model.cells].map(c => c.executionCount ?? null);
}}"""

OPEN = """async path => {
    const widget = await window.jupyterapp.commands.execute('docmanager:open', {path});
    await widget.context.ready;
}"""

IN_FRONT = """() => {
    const widget = window.jupyterapp.shell.currentWidget;
    const selector = '#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current';
    const tabs = [...document.querySelectorAll(selector)];
    return {
        current: widget && widget.context ? widget.context.path : null,
        visible: widget ? widget.isVisible : null,
        tabs: tabs.map(tab => tab.textContent),
        focus: String(document.activeElement && document.activeElement.className).slice(0, 60),
        now: Math.round(performance.now()),
        changes: window.__editSafetyTabs || [],
        activations: window.__editSafetyActivations || [],
    };
}"""

CURRENT_PATH = """() => {
    const widget = window.jupyterapp.shell.currentWidget;
    return widget && widget.context ? widget.context.path : null;
}"""

RESET = f"""({{path, sources}}) => {{ {_PANEL}
    const shared = panelOf(path).content.model.sharedModel;
    if (shared.cells.length > sources.length) {{
        shared.deleteCellRange(sources.length, shared.cells.length);
    }}
    sources.forEach((source, i) => shared.cells[i].setSource(source));
}}"""

CLEAR_HISTORY = f"""path => {{ {_PANEL}
    const model = panelOf(path).content.model;
    for (const cell of model.cells) {{ cell.sharedModel.clearUndoHistory(); }}
    model.sharedModel.clearUndoHistory();
}}"""

INSTALL_LOG = f"""path => {{ {_PANEL}
    window.__editSafetyLog = window.__editSafetyLog || [];
    if (!window.__editSafetyTabs) {{
        // Which code brought a tab to the front: a programmatic focus() or activate()
        // runs the shell's handlers synchronously, so the stack names the caller.
        window.__editSafetyTabs = [];
        window.jupyterapp.shell.currentChanged.connect((_, change) => {{
            const widget = change.newValue;
            // Deep enough to pass the shell's and the focus tracker's own frames.
            const limit = Error.stackTraceLimit;
            Error.stackTraceLimit = 60;
            const stack = String(new Error().stack).split('\\n').slice(2, 40);
            Error.stackTraceLimit = limit;
            window.__editSafetyTabs.push({{
                at: Math.round(performance.now()),
                path: widget && widget.context ? widget.context.path : null,
                stack: stack.map(line => line.trim().slice(0, 120)).join(' < '),
            }});
            window.__editSafetyTabs.splice(0, window.__editSafetyTabs.length - 3);
        }});
    }}
    if (!window.__editSafetyActivations) {{
        // A tab change through a focus event comes from an activate-request that Lumino
        // posted earlier, so its own stack ends in the message loop: record who called a
        // document widget's activate(), when the call is made.
        window.__editSafetyActivations = [];
        let owner = panelOf(path);
        while (owner && !Object.prototype.hasOwnProperty.call(owner, 'activate')) {{
            owner = Object.getPrototypeOf(owner);
        }}
        if (owner) {{
            const activate = owner.activate;
            owner.activate = function () {{
                if (this.context) {{
                    const limit = Error.stackTraceLimit;
                    Error.stackTraceLimit = 40;
                    const stack = String(new Error().stack).split('\\n').slice(2, 30);
                    Error.stackTraceLimit = limit;
                    window.__editSafetyActivations.push({{
                        at: Math.round(performance.now()),
                        path: this.context.path,
                        stack: stack.map(line => line.trim().slice(0, 120)).join(' < '),
                    }});
                    window.__editSafetyActivations.splice(
                        0, window.__editSafetyActivations.length - 4);
                }}
                return activate.call(this);
            }};
        }}
    }}
    const model = panelOf(path).content.model;
    const log = cell => {{
        if (cell.__editSafetyLogged) {{ return; }}
        cell.__editSafetyLogged = true;
        window.__editSafetyLog.push(cell.sharedModel.getSource());
        cell.sharedModel.changed.connect(
            () => window.__editSafetyLog.push(cell.sharedModel.getSource()));
    }};
    if (!model.__editSafetyLogged) {{
        // A cell added to the notebook, by anyone, is logged from its first source on.
        model.__editSafetyLogged = true;
        model.cells.changed.connect(() => {{ for (const cell of model.cells) {{ log(cell); }} }});
    }}
    for (const cell of model.cells) {{ log(cell); }}
}}"""

TAKE_LOG = """() => {
    const log = window.__editSafetyLog || [];
    window.__editSafetyLog = [];
    return log;
}"""

#: Click Undo on every review the page shows; gives how many there were.
DISMISS_REVIEWS = """() => {
    const reviews = [...document.querySelectorAll('.jp-Copilot-Review')];
    reviews.forEach(node => node.querySelector('.jp-Copilot-ReviewUndo')?.click());
    return reviews.length;
}"""

REVIEWS = """() => [...document.querySelectorAll('.jp-Copilot-Review')].map(node => ({
    callId: node.dataset.callId, cellId: node.dataset.cellId, state: node.dataset.state
}))"""
