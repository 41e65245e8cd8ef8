"""One scene for the unit layer: the server's real collaborators, in-process, with no server.

A :class:`Scene` builds what ``CopilotApp.initialize_settings`` builds, through the same
constructors (``Dispatcher``, ``Pages``, ``Registrations``, ``Switches`` over a real
``KillSwitch``, ``ProposalHost``, ``Approvals``, ``NotebookReader`` and the proposal tools
from ``toolspecs.build_proposal_tools``), and lends them the server's facts as plain data:
the file-ID index (path to artifactId), the files the contents manager lets us write, the
live shared document of real-time collaboration (off unless a test turns it on) and the
settings. Nothing here starts a Jupyter server, a kernel or a browser, so a test runs in
milliseconds.

A :class:`Browser` is one JupyterLab page as the lab extension speaks the bridge (docs/
protocol.md section 9): its messages go through the real :class:`~jupyter_copilot.page.bridge.
PageSession`, which checks them against the bridge schema, and it answers the server's
requests from its :class:`Notebook` the way the page does. What the server sends it is kept,
so a test can tell that nothing reached the page.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jupyter_copilot.admin.killswitch import KillSwitch
from jupyter_copilot.admin.switches import Switches
from jupyter_copilot.admin.telemetry import Telemetry
from jupyter_copilot.page.bridge import PageSession, server_message_problem
from jupyter_copilot.page.context import ServedCells, source_hash
from jupyter_copilot.page.dispatcher import Dispatcher
from jupyter_copilot.page.notebook import NotebookReader
from jupyter_copilot.page.sessions import Registrations
from jupyter_copilot.protocol.callers import AUTOPILOT, Caller
from jupyter_copilot.protocol.registry import GET_CONTEXT, load_registry
from jupyter_copilot.server.pages import Pages
from jupyter_copilot.tools.approvals import Approvals
from jupyter_copilot.tools.proposals import ProposalDesk, ProposalTool
from jupyter_copilot.tools.service import NO_LIVE_DOCUMENT, ProposalHost
from jupyter_copilot.tools.toolspecs import SPECS_BY_NAME, build_proposal_tools

#: The three tools a page serves, by the names their spec files give them.
EDIT_CELL = SPECS_BY_NAME["notebook_edit_cell"]
INSERT_CELL = SPECS_BY_NAME["notebook_insert_cell"]
RUN_CELL = SPECS_BY_NAME["notebook_run_cell"]

#: The defaults of the ``CopilotApp`` settings the tools read (docs/protocol.md sections 4.1,
#: 5 and 11.2); ``CopilotApp`` itself is not imported, as loading it costs seconds.
SETTINGS: dict[str, Any] = {
    # Seconds a page has to answer; shorter than the product's 10, so that a page the
    # harness does not answer fails a test quickly.
    "page_timeout_seconds": 5.0,
    "context_budget_bytes": 8192,
    "tool_input_budget_bytes": 65536,
    "kernel_inspect_timeout_seconds": 2.0,
}

_REGISTRY = load_registry()


@dataclass
class Cell:
    """One notebook cell, as the page's model holds it."""

    id: str
    source: str = ""
    cell_type: str = "code"
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def hash(self) -> str:
        """``expectedSourceHash`` of the complete source."""
        digest = source_hash(self.source)
        assert digest is not None
        return digest

    def live(self) -> dict[str, Any]:
        """The cell as the server reads it from a live shared document."""
        return {"cell_type": self.cell_type, "source": self.source, "metadata": self.metadata}


@dataclass
class Notebook:
    """A notebook open in a page: its cells, selection, view and permission."""

    path: str = "a.ipynb"
    cells: list[Cell] = field(
        default_factory=lambda: [
            Cell("c1", "x = 1\n"),
            Cell("c2", "# Notes\n", "markdown"),
            Cell("c3", "print(x)\n"),
        ]
    )
    selected: list[str] = field(default_factory=lambda: ["c1"])
    writable: bool = True
    view_type: str = "notebook"
    language: str | None = "python"

    def cell(self, cell_id: str) -> Cell:
        """The cell with that id."""
        return next(c for c in self.cells if c.id == cell_id)

    def remove(self, cell_id: str) -> None:
        """The person deletes a cell (it leaves the selection too)."""
        self.cells = [c for c in self.cells if c.id != cell_id]
        self.selected = [s for s in self.selected if s != cell_id]

    def snapshot(self) -> list[tuple[str, str, str, str]]:
        """Everything a proposal could change, to compare before and after a call."""
        return [(c.id, c.cell_type, c.source, json.dumps(c.metadata)) for c in self.cells]

    def state(self) -> dict[str, Any]:
        """``activeNotebook`` of a ``state`` message."""
        only = self.selected[0] if len(self.selected) == 1 else None
        return {
            "path": self.path,
            "viewType": self.view_type,
            "writable": self.writable,
            "kernelSessionId": None,
            "language": self.language,
            "cellCount": len(self.cells),
            "selectedCellIds": list(self.selected),
            "selectedCellHash": self.cell(only).hash if only else None,
        }

    def context(self) -> dict[str, Any]:
        """``activeNotebook`` of the page's get-context answer."""
        only = self.selected[0] if len(self.selected) == 1 else None
        selected = None
        if only is not None:
            cell = self.cell(only)
            selected = {"cellId": cell.id, "cellType": cell.cell_type, "source": cell.source}
        return {
            "path": self.path,
            "viewType": self.view_type,
            "writable": self.writable,
            "language": self.language,
            "kernelSessionId": None,
            "selectedCellIds": list(self.selected),
            "selectedCell": selected,
        }


class Browser:
    """One JupyterLab page on the bridge, answering as the lab extension does.

    ``notebook`` is its active notebook (None: another kind of tab is active). Requests are
    answered on the next turn of the event loop, as a WebSocket would; an invoke opens the
    review (or, for a run, ends with ``run_answer``) without touching ``notebook``, as the
    page keeps a proposal out of the notebook until Keep.
    """

    def __init__(self, scene: Scene, page_id: str, notebook: Notebook | None) -> None:
        self.scene = scene
        self.page_id = page_id
        self.notebook = notebook
        self.focused = False
        #: Every message the server sent, in order; requests are in ``requests`` too.
        self.received: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        #: The answer to a run request (``runCellDone``).
        self.run_answer: dict[str, Any] = {"executionCount": 1, "status": "ok", "outputs": []}
        #: Whether this page allows the approval cards it is shown, refuses them, or waits.
        self.approve: bool | None = True
        #: Answers one request; a test replaces it to stay silent, fail or close instead.
        self.respond: Callable[[dict[str, Any]], None] = self.answer
        self.session: PageSession = scene.pages.open(self._from_server)

    # -- what the page sends --------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        """One message to the server, as text (the session parses and checks it)."""
        self.session.receive(json.dumps(message))

    def hello(self) -> Browser:
        """Say hello (the dispatcher registers the page)."""
        url = f"lab/tree/{self.notebook.path}" if self.notebook else "lab"
        self.send({"type": "hello", "protocol": 1, "pageId": self.page_id, "url": url})
        return self

    def report(self, focused: bool | None = None) -> Browser:
        """Send the page's semantic state, as it does after every change."""
        if focused is not None:
            self.focused = focused
        state = {
            "focused": self.focused,
            "url": f"lab/tree/{self.notebook.path}" if self.notebook else "lab",
            "activeNotebook": self.notebook.state() if self.notebook else None,
        }
        fingerprint = hashlib.sha256(json.dumps(state, sort_keys=True).encode()).hexdigest()
        self.send({"type": "state", "fingerprint": fingerprint, "state": state})
        return self

    def close(self) -> None:
        """The page goes away."""
        self.scene.pages.close(self.session)

    # -- what the server sends ------------------------------------------------------------

    def _from_server(self, message: dict[str, Any]) -> None:
        problem = server_message_problem(message)
        assert problem is None, f"the server sent a message outside the schema: {problem}"
        self.received.append(message)
        if message["type"] == "request":
            self.requests.append(message)
            asyncio.get_running_loop().call_soon(self.respond, message)
        elif message["type"] == "approval" and self.approve is not None:
            request_id = message["request"]["requestId"]
            allow = self.approve
            asyncio.get_running_loop().call_soon(
                lambda: self.scene.approvals.decide(request_id, "owner", allow=allow)
            )

    def kinds(self) -> list[str]:
        """The types of the messages the server sent, in order."""
        return [m["type"] for m in self.received]

    def answer(self, request: dict[str, Any]) -> None:
        """Answer a request as the lab extension does when all goes well."""
        action = request["action"]
        if action == GET_CONTEXT:
            data: dict[str, Any] = {
                "activeNotebook": self.notebook.context() if self.notebook else None
            }
        elif action == EDIT_CELL.invoke_action:
            data = {"diffReviewOpened": True}
        elif action == INSERT_CELL.invoke_action:
            data = {"reviewOpened": True}
        elif action == RUN_CELL.invoke_action:
            data = self.run_answer
        else:
            data = {"withdrawn": True}
        self.send({"type": "result", "requestId": request["requestId"], "ok": True, "data": data})


class Scene:
    """The server's collaborators for one test, and the pages connected to it.

    ``tmp`` holds the kill switch's JSON config file. The default scene has one page, its
    active notebook ``a.ipynb`` (artifactId ``nb-a``) with a running kernel session, that
    the user may write; it never reported focus.
    """

    def __init__(self, tmp: Path) -> None:
        self.settings = dict(SETTINGS)
        self.enabled = True
        self.run_policy = "ask"
        #: The file-ID index: path to artifactId.
        self.file_ids: dict[str, str] = {"a.ipynb": "nb-a", "b.ipynb": "nb-b"}
        #: Files the contents manager reports writable.
        self.writable_files: set[str] = {"a.ipynb", "b.ipynb"}
        #: Live shared documents by artifactId (real-time collaboration); None: no RTC.
        self.live: dict[str, Notebook] | None = None
        self._config_dir = tmp
        self.kill_switch = KillSwitch(
            config_engaged=False, directories=[str(tmp)], log=logging.getLogger("test")
        )
        self.switches = Switches(
            enabled=lambda: self.enabled,
            tools_engaged=lambda: self.kill_switch.state().engaged,
        )
        self.dispatcher = Dispatcher()
        self.telemetry = Telemetry(None)
        self.served = ServedCells()
        self.reader = NotebookReader(
            self.dispatcher, self.file_ids.get, lambda: self.settings, self.served
        )
        self.registrations = Registrations(self.file_ids.get)
        host = ProposalHost(
            switches=self.switches,
            artifact_id=self.file_ids.get,
            file_writable=self._file_writable,
            live_cell=self._live_cell,
            served_type=self.served.type_of,
            settings=lambda: self.settings,
            run_policy=lambda: self.run_policy,
            run_timeout=lambda: self.settings["page_timeout_seconds"],
        )
        # A card nobody answers ends within seconds, so that a broken check fails a test
        # instead of hanging it (the product's default is 300 seconds).
        self.approvals = Approvals(self.telemetry, lambda: 5.0, lambda: 20)
        self.tools: dict[str, ProposalTool] = build_proposal_tools(
            _REGISTRY, self.dispatcher, self.registrations, self.telemetry, host, self.approvals
        )
        desk = ProposalDesk([t for t in self.tools.values() if t.page.opens_review])
        self.pages = Pages(self.dispatcher, desk, self.approvals, self.telemetry, self._welcome)
        self.browsers: list[Browser] = []
        self.kernel_session("a.ipynb")
        self.browser = self.connect("page-a", Notebook())

    @property
    def notebook(self) -> Notebook:
        """The active notebook of the scene's first page."""
        assert self.browser.notebook is not None
        return self.browser.notebook

    # -- the server's facts ----------------------------------------------------------------

    def kernel_session(self, path: str, session_id: str | None = None) -> str:
        """A kernel session starts on ``path`` (its notebook tools are registered)."""
        session_id = session_id or f"session-{path}"
        self.registrations.session_saved(
            {"id": session_id, "path": path, "type": "notebook", "kernel": {"id": f"k-{path}"}}
        )
        return session_id

    def engage_kill_switch(self) -> None:
        """An admin writes ``tools_enabled: false`` to a watched JSON config file."""
        path = self._config_dir / "jupyter_copilot_config.json"
        path.write_text(json.dumps({"CopilotApp": {"tools_enabled": False}}), encoding="utf-8")

    def collaborate(self) -> Notebook:
        """Turn on real-time collaboration: the server reads cells from the live document,
        which is the page's notebook (the same shared model)."""
        notebook = self.browser.notebook
        assert notebook is not None
        self.live = {self.file_ids[notebook.path]: notebook}
        return notebook

    async def _file_writable(self, path: str) -> bool:
        return path in self.writable_files

    async def _live_cell(self, artifact_id: str, cell_id: str) -> Any:
        if self.live is None or artifact_id not in self.live:
            return NO_LIVE_DOCUMENT
        cell = next((c for c in self.live[artifact_id].cells if c.id == cell_id), None)
        return None if cell is None else cell.live()

    def _welcome(self) -> dict[str, Any]:
        return {
            "toolsEnabled": not self.kill_switch.state().engaged,
            "budgetBytes": self.settings["context_budget_bytes"],
            "toolInputBudgetBytes": self.settings["tool_input_budget_bytes"],
        }

    # -- pages -------------------------------------------------------------------------------

    def connect(self, page_id: str, notebook: Notebook | None = None) -> Browser:
        """A page connects, says hello and reports its state once."""
        browser = Browser(self, page_id, notebook).hello().report()
        self.browsers.append(browser)
        return browser

    def requests(self) -> list[dict[str, Any]]:
        """Every request any page received."""
        return [r for b in self.browsers for r in b.requests]

    def cards(self) -> list[dict[str, Any]]:
        """Every approval card any page was shown."""
        return [m for b in self.browsers for m in b.received if m["type"] == "approval"]


def caller(
    mode: str = AUTOPILOT, *, may_write: bool = True, kind: str = "external", principal="owner"
) -> Caller:
    """A caller whose user the server's authorizer lets write (or not)."""

    async def allowed() -> bool:
        return may_write

    return Caller(may_write=allowed, kind=kind, principal=principal, approval_mode=mode)
