"""The shipped demo agent: an ACP agent that follows rules instead of calling a model.

It answers over stdio and reaches nothing on the network but the MCP server its client
passes in ``session/new`` (jupyter-copilot's ``copilot/mcp``). Each MCP call is reported
to the client as an ACP tool call. It never asks the client for permission: the
jupyter-copilot server shows its own approval card, and the person reviews the diff.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from dataclasses import dataclass
from typing import Any, NoReturn

import acp
from acp.schema import (
    AgentCapabilities,
    Implementation,
    McpCapabilities,
    PromptCapabilities,
)

from .._version import __version__
from . import rules
from .prompt import (
    HELP,
    NO_TOOLS,
    REFUSALS,
    CellRef,
    McpTarget,
    Refused,
    choose_mcp_server,
    chunks,
    fenced,
    read_prompt,
    run_summary,
)

log = logging.getLogger(__name__)

AGENT_NAME = "jupyter-copilot-demo-agent"
AGENT_TITLE = "Demo agent (rule-based)"
#: An edit may wait for the person's approval card (300 s by default) before it answers, and
#: a run for its card and then the run itself (600 s by default).
TOOL_TIMEOUT_SECONDS = 960.0
#: How long listing a new session's tools may take before it is given up.
LIST_TOOLS_SECONDS = 10.0

EDITS = {
    "docstrings": (rules.add_docstrings, "adding docstrings to", "has a docstring already"),
    "sort-imports": (rules.sort_imports, "sorting the imports of", "has sorted imports already"),
}


def _first_error(error: BaseException) -> BaseException:
    """The first leaf of an exception group (the SDK's task groups raise groups)."""
    while getattr(error, "exceptions", None):
        error = error.exceptions[0]  # type: ignore[attr-defined]
    return error


class Turn:
    """One prompt: its reply, its tool calls and its MCP connection (opened on first use)."""

    def __init__(
        self, client: acp.Client, session_id: str, mcp: McpTarget | None, chunk_delay: float
    ) -> None:
        self.client = client
        self.session_id = session_id
        self.mcp = mcp
        self.chunk_delay = chunk_delay
        self._stack = contextlib.AsyncExitStack()
        self._mcp_client: Any = None

    async def say(self, text: str, stream: bool = False) -> None:
        """Send ``text`` as the agent's message; ``stream`` sends it in parts, with pauses."""
        parts = chunks(text) if stream else [text]
        for index, part in enumerate(parts):
            if index and self.chunk_delay:
                await asyncio.sleep(self.chunk_delay)
            await self.client.session_update(self.session_id, acp.update_agent_message_text(part))

    async def call(self, tool: str, arguments: dict[str, Any], title: str, kind: Any) -> Any:
        """Call one MCP tool, reported as an ACP tool call; raises :class:`Refused`."""
        call_id = f"demo-{uuid.uuid4().hex[:16]}"
        await self.client.session_update(
            self.session_id,
            # The input as agents report it; the server takes only the cell id from it.
            acp.start_tool_call(
                call_id, title, kind=kind, status="in_progress", raw_input=arguments
            ),
        )
        try:
            result = await self._call(tool, arguments)
        except Refused as refusal:
            await self._finish(call_id, "failed", f"{refusal.code}: {refusal.message}")
            raise
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await asyncio.shield(self._finish(call_id, "failed", "Cancelled."))
            raise
        await self._finish(call_id, "completed", None)
        return result

    async def _finish(self, call_id: str, status: Any, message: str | None) -> None:
        content = [acp.tool_content(acp.text_block(message))] if message else None
        await self.client.session_update(
            self.session_id, acp.update_tool_call(call_id, status=status, content=content)
        )

    async def _call(self, tool: str, arguments: dict[str, Any]) -> Any:
        try:
            client = await self._connect()
            result = await client.call_tool(tool, arguments)
        except Exception as error:  # the SDK raises groups, HTTP and protocol errors alike
            log.warning("MCP call %s failed: %r", tool, error)
            raise Refused("unreachable", str(_first_error(error)) or type(error).__name__) from None
        structured = result.structured_content
        text = getattr(result.content[0], "text", "") if result.content else ""
        if structured is None:
            with contextlib.suppress(ValueError):
                structured = json.loads(text)
        structured = structured if isinstance(structured, dict) else {}
        if result.is_error:
            refusal = structured.get("error")
            refusal = refusal if isinstance(refusal, dict) else {}
            raise Refused(str(refusal.get("code", "error")), str(refusal.get("message", text)))
        return structured

    async def _connect(self) -> Any:
        if self._mcp_client is None:
            # Imported on first use: the SDK takes about a second to import, and a Chat-only
            # conversation never needs it.
            import httpx2
            from mcp import Client
            from mcp.client.streamable_http import streamable_http_client

            assert self.mcp is not None
            timeout = httpx2.Timeout(TOOL_TIMEOUT_SECONDS, connect=10.0)
            http = await self._stack.enter_async_context(
                httpx2.AsyncClient(headers=self.mcp.headers, timeout=timeout)
            )
            transport = streamable_http_client(self.mcp.url, http_client=http)
            self._mcp_client = await self._stack.enter_async_context(
                Client(transport, read_timeout_seconds=TOOL_TIMEOUT_SECONDS)
            )
        return self._mcp_client

    async def list_tools(self) -> None:
        """Connect to the MCP server and list its tools."""
        await (await self._connect()).list_tools()

    async def aclose(self) -> None:
        """Close the MCP connection, if one was opened."""
        self._mcp_client = None
        await self._stack.aclose()

    # -- what the agent does -------------------------------------------------------------

    async def run(self, text: str, attached: CellRef | None) -> None:
        """Answer one message."""
        what = rules.intent(text)
        if what == "echo":
            await self.say(rules.echo_word(text) or "")
        elif what == "explain":
            cell = await self._cell(attached)
            if cell is not None:
                await self.say(rules.explain(cell.source, cell.cell_type), stream=True)
        elif what == "add-note":
            if self.mcp is None:
                await self.say(NO_TOOLS)
                return
            cell = await self._cell(attached)
            if cell is not None:
                await self._add_note(cell)
        elif what == "run":
            if self.mcp is None:
                await self.say(NO_TOOLS)
                return
            cell = await self._cell(attached)
            if cell is not None:
                await self._run_cell(cell)
        elif what in EDITS:
            if self.mcp is None:
                await self.say(NO_TOOLS)
                return
            cell = await self._cell(attached)
            if cell is not None:
                await self._edit(what, cell)
        else:
            await self.say(HELP, stream=True)

    async def _cell(self, attached: CellRef | None) -> CellRef | None:
        """The attached cell, else the selected one; ``None`` once the reply says why not."""
        if attached is not None:
            return attached
        if self.mcp is None:
            await self.say(
                "Attach a cell to your message (this conversation has no notebook tools to "
                "read the selected one) and ask again."
            )
            return None
        try:
            answer = await self.call(
                "notebook_read_selected_cell", {}, "Read the selected cell", "read"
            )
        except Refused as refusal:
            await self.say(self._refusal_text("read the selected cell", refusal))
            return None
        cell = answer.get("cell")
        if not cell:
            reason = answer.get("reason") or "No cell is selected."
            await self.say(f"{reason} Select one cell in the notebook and ask again.")
            return None
        if "omitted" in cell or "source" not in cell:
            await self.say("The selected cell is too large for me to read (over the budget).")
            return None
        return CellRef(
            artifact_id=cell["artifactId"],
            cell_id=cell["cellId"],
            cell_type=cell.get("cellType", "code"),
            source=cell["source"],
            expected_source_hash=cell["expectedSourceHash"],
        )

    async def _edit(self, what: str, cell: CellRef) -> None:
        transform, doing, done = EDITS[what]
        if cell.cell_type != "code":
            await self.say(f"I can only do that in a code cell; this is a {cell.cell_type} cell.")
            return
        if not rules.parses(cell.source):
            await self.say(f"I cannot change this cell. {rules.explain(cell.source)}")
            return
        new_source = transform(cell.source)
        if new_source is None:
            await self.say(f"Nothing to change: this cell {done}.")
            return
        arguments = {
            "artifactId": cell.artifact_id,
            "cellId": cell.cell_id,
            "expectedSourceHash": cell.expected_source_hash,
            "newSource": new_source,
        }
        try:
            await self.call("notebook_edit_cell", arguments, "Propose an edit of the cell", "edit")
        except Refused as refusal:
            text = self._refusal_text(f"propose {doing} the cell", refusal)
            if refusal.code == "plan-mode":
                text += f" Here is what I would propose:\n\n{fenced(new_source)}"
            await self.say(text)
            return
        await self.say(
            f"I proposed {doing} this cell. Review the diff in the cell and choose Keep or Undo."
        )

    async def _add_note(self, cell: CellRef) -> None:
        note = rules.note_for(cell.source, cell.cell_type)
        arguments = {
            "artifactId": cell.artifact_id,
            "afterCellId": cell.cell_id,
            "cellType": "markdown",
            "source": note,
        }
        try:
            await self.call("notebook_insert_cell", arguments, "Propose a new cell", "edit")
        except Refused as refusal:
            text = self._refusal_text("propose a new cell", refusal)
            if refusal.code == "plan-mode":
                text += f" Here is the cell I would propose:\n\n{fenced(note)}"
            await self.say(text)
            return
        await self.say(
            "I proposed a new Markdown cell below this one that describes it. It is not in "
            "the notebook yet: choose Keep on the pending cell to add it, or Undo."
        )

    async def _run_cell(self, cell: CellRef) -> None:
        if cell.cell_type != "code":
            await self.say(f"Only code cells can run; this is a {cell.cell_type} cell.")
            return
        arguments = {
            "artifactId": cell.artifact_id,
            "cellId": cell.cell_id,
            "expectedSourceHash": cell.expected_source_hash,
        }
        await self.say(
            "I would like to run this cell in the notebook's kernel. It runs only if you "
            "choose Allow once on the run card in this panel.\n\n"
        )
        try:
            result = await self.call("notebook_run_cell", arguments, "Run the cell", "execute")
        except Refused as refusal:
            text = self._refusal_text("run the cell", refusal)
            if refusal.code == "cell-locked":
                text = (
                    "I could not run the cell (`cell-locked`): it is marked never to be run "
                    "by an agent."
                )
            await self.say(text)
            return
        await self.say(run_summary(result))

    @staticmethod
    def _refusal_text(action: str, refusal: Refused) -> str:
        if refusal.code == "plan-mode":
            # The person's own choice of mode: said calmly, without a code.
            return REFUSALS["plan-mode"]
        meaning = REFUSALS.get(refusal.code, refusal.message)
        if refusal.code == "unreachable":
            meaning += f" ({refusal.message})"
        return f"I could not {action} (`{refusal.code}`). {meaning}"


def _unsupported(method: str) -> Any:
    """A handler for an ACP method the demo does not offer: JSON-RPC "method not found"."""

    async def handler(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
        raise acp.RequestError.method_not_found(method)

    return handler


@dataclass
class _Session:
    mcp: McpTarget | None
    task: asyncio.Task[None] | None = None
    cancelled: bool = False


class DemoAgent(acp.Agent):
    """The rule-based ACP agent; ``chunk_delay`` is the pause between streamed parts."""

    # Without these the protocol's empty bodies would answer ``null`` instead of an error.
    authenticate = _unsupported("authenticate")
    list_sessions = _unsupported("session/list")
    set_session_mode = _unsupported("session/set_mode")
    set_config_option = _unsupported("session/set_config_option")
    fork_session = _unsupported("session/fork")
    resume_session = _unsupported("session/resume")
    close_session = _unsupported("session/close")
    ext_method = _unsupported("_ext")

    def __init__(self, chunk_delay: float = 0.05) -> None:
        self.chunk_delay = chunk_delay
        self._client: acp.Client | None = None
        self._sessions: dict[str, _Session] = {}
        #: Tasks that list a new session's tools; kept so that they are not collected.
        self._background: set[asyncio.Future[None]] = set()

    def on_connect(self, conn: acp.Client) -> None:
        """Keep the connection to the client, to send session updates."""
        self._client = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **kwargs: Any,
    ) -> acp.InitializeResponse:
        """Announce embedded context (attached cells), HTTP MCP servers and loading a session."""
        return acp.InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True),
            ),
            agent_info=Implementation(name=AGENT_NAME, title=AGENT_TITLE, version=__version__),
        )

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> acp.NewSessionResponse:
        """A new session that remembers its HTTP MCP server, if one was given.

        Like an agent with a model, it connects to the server and lists the tools (in the
        background, for at most a few seconds), so that the panel can say the tools are
        attached.
        """
        session_id = uuid.uuid4().hex
        mcp = choose_mcp_server(mcp_servers)
        self._sessions[session_id] = _Session(mcp)
        if mcp is not None and self._client is not None:
            turn = Turn(self._client, session_id, mcp, self.chunk_delay)
            self._background.add(asyncio.ensure_future(self._list_tools(turn)))
        return acp.NewSessionResponse(session_id=session_id)

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> acp.LoadSessionResponse:
        """Open an earlier session again by its id (ACP ``session/load``).

        The demo's replies never depend on earlier messages, so a session is only its MCP
        server: there is no history to replay, and loading one is exact.
        """
        mcp = choose_mcp_server(mcp_servers)
        self._sessions[session_id] = _Session(mcp)
        if mcp is not None and self._client is not None:
            turn = Turn(self._client, session_id, mcp, self.chunk_delay)
            self._background.add(asyncio.ensure_future(self._list_tools(turn)))
        return acp.LoadSessionResponse()

    async def _list_tools(self, turn: Turn) -> None:
        try:
            await asyncio.wait_for(turn.list_tools(), LIST_TOOLS_SECONDS)
        except Exception:  # noqa: BLE001 (a tool call later says what is wrong)
            log.debug("The demo agent could not list its tools", exc_info=True)
        finally:
            await turn.aclose()
            self._background = {t for t in self._background if not t.done()}

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> acp.PromptResponse:
        """Answer one message; ``cancelled`` when the client cancels the turn."""
        session = self._sessions.get(session_id)
        if session is None or self._client is None:
            raise acp.RequestError.invalid_params({"sessionId": "Unknown session."})
        if session.task is not None:
            raise acp.RequestError.invalid_request({"sessionId": "A prompt is still running."})
        text, cell = read_prompt(prompt)
        turn = Turn(self._client, session_id, session.mcp, self.chunk_delay)
        session.cancelled = False
        task = session.task = asyncio.ensure_future(self._run(turn, text, cell))
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:
            task.cancel()
            raise
        finally:
            session.task = None
        if session.cancelled or task.cancelled():
            return acp.PromptResponse(stop_reason="cancelled")
        task.result()
        return acp.PromptResponse(stop_reason="end_turn")

    @staticmethod
    async def _run(turn: Turn, text: str, cell: CellRef | None) -> None:
        try:
            await turn.run(text, cell)
        finally:
            await turn.aclose()

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        """Extension notifications are ignored."""

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """Stop the session's running turn, an MCP call in flight included."""
        session = self._sessions.get(session_id)
        if session is not None and session.task is not None:
            session.cancelled = True
            session.task.cancel()
