"""The turns of side-panel conversations: a person's message, the agent's reply, Stop.

A turn starts the conversation's agent when it has none running, holds the agent's own
session mode, sends the message verbatim with the attached cell read live from the notebook,
and ends at the agent's stop reason, a cap (``TurnLimits``), Stop or a failure; it never
depends on the HTTP connection that streams it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any

import acp
from acp.schema import TextResourceContents

from ..protocol.callers import CELL_OUTPUTS, KERNEL_VARIABLES
from ..protocol.refusals import Refusal
from . import bodies, files
from .conversation import CANCELLED, END_TURN, ERROR, TITLE_CHARS, Conversation, Turn, tokens
from .host import ConversationsHost
from .images import MAX_PAGE_IMAGE_CHARS, image_blocks
from .permissions import AgentModes
from .policy import (
    cell_resource,
    error_resource,
    file_resource,
    prompt_blocks,
    tools_offered,
    variable_resource,
)
from .process import AgentExited, AgentStartError
from .processes import AgentProcesses

#: How long Stop waits for the agent to end its turn before the agent is stopped.
CANCEL_GRACE_SECONDS = 5.0


def _cell_label(cell: dict[str, Any]) -> str:
    """How the transcript names an attached cell: "Code cell 3"."""
    label = f"{'Markdown' if cell['cellType'] == 'markdown' else 'Code'} cell"
    return f"{label} {cell['index'] + 1}" if isinstance(cell.get("index"), int) else label


class Turns:
    """Runs the turns of a server's conversations."""

    def __init__(
        self,
        host: ConversationsHost,
        processes: AgentProcesses,
        modes: AgentModes,
        saved: Callable[[Conversation, Turn], None] = lambda c, t: None,
    ) -> None:
        self.host = host
        self.processes = processes
        self.modes = modes
        #: Writes the conversation and the turn to the store, as the turn starts and ends.
        self.saved = saved

    async def send(
        self,
        conversation: Conversation,
        message: bodies.Message,
        may_read_files: bool = False,
        may_write_files: bool = False,
    ) -> Turn:
        """Start a turn with the person's message; the agent's reply streams into it.

        The attached cell is read from the live notebook first, so that a cell that has
        gone refuses the message before anything reaches the agent. ``may_read_files`` and
        ``may_write_files`` are the server authorizer's answers for the person now: the
        agent's own file tools act as the person.
        """
        if conversation.running is not None:
            raise Refusal(
                "conversation-busy", "The agent is still replying; stop it or wait for it."
            )
        cell = None
        label = None
        images: list[dict[str, Any]] = []
        if message.attachment is not None:
            cell = await self.host.read_cell(
                message.attachment["artifactId"], message.attachment["cellId"]
            )
            label = _cell_label(cell)
            images = await self._images(conversation, message.attachment)
        extra, cells = await self._references(conversation, message, may_read_files)
        if conversation.running is not None:
            raise Refusal(
                "conversation-busy", "The agent is still replying; stop it or wait for it."
            )
        if cell is not None:
            cells = [c for c in cells if c["cellId"] != cell["cellId"]]
        elif cells:
            cell = cells.pop(0)
            label = _cell_label(cell)
        attachment = None if cell is None else {"cellId": cell["cellId"], "label": label}
        turn = Turn(message.text, attachment, self.host.limits())
        turn.images = images
        conversation.turns.append(turn)
        conversation.running = turn
        conversation.page_id = message.page_id
        conversation.may_read_files = may_read_files
        conversation.may_write_files = may_write_files
        if conversation.title is None:
            conversation.title = message.text.strip().splitlines()[0][:TITLE_CHARS]
        if conversation.tools_offered is None:
            conversation.tools_offered = tools_offered(
                conversation.chat_only, conversation.context_refs
            )
        process = conversation.process
        # A crashed or stopped agent (idle, or a server restart) starts again without the
        # conversation's history, unless it can load its earlier session (``session/load``).
        turn.restarted = (
            conversation.session_id is not None
            and (process is None or process.ending)
            and not conversation.loads_sessions
        )
        turn.emit(
            {
                "type": "turn",
                "turnId": turn.turn_id,
                "toolsAttached": conversation.tools_attached,
                "restarted": turn.restarted,
            }
        )
        if conversation.next_notice is not None:
            turn.notice(conversation.next_notice)
            conversation.next_notice = None
        language = self.host.dispatcher.active_language(conversation.page_id)
        extra = [cell_resource(c, language) for c in cells] + extra
        blocks = prompt_blocks(message.text, cell, language, extra)
        if conversation.idle is not None:
            conversation.idle.cancel()
        self.saved(conversation, turn)
        conversation.task = asyncio.ensure_future(self._run(conversation, turn, blocks))
        return turn

    async def _images(
        self, conversation: Conversation, attachment: dict[str, Any]
    ) -> list[dict[str, Any]]:
        """The PNG and JPEG outputs of the attached cell, read live, when the conversation
        may read outputs (``cell_outputs``, as the policy allows now); else none."""
        granted = set(conversation.context_refs) & set(self.host.policy().context_refs)
        if CELL_OUTPUTS not in granted or self.host.read_images is None:
            return []
        return await self.host.read_images(
            attachment["artifactId"], attachment["cellId"], MAX_PAGE_IMAGE_CHARS
        )

    async def _references(
        self, conversation: Conversation, message: bodies.Message, may_read_files: bool
    ) -> tuple[list[TextResourceContents], list[dict[str, Any]]]:
        """What the person attached besides the pill, read now and checked against the
        conversation's grants now (docs/conversations.md, "Context chips"): the resources of
        variables, files and errors, and the live cells (those of errors first).

        A variable needs ``kernel_variables``, a file needs ``files`` and the person's own
        right to read, an error needs ``cell_outputs`` to be allowed by the administrator;
        anything refused refuses the whole message, before anything reaches the agent.
        """
        granted = set(conversation.context_refs) & set(self.host.policy().context_refs)
        budget = self.host.context_budget()
        resources: list[TextResourceContents] = []
        cells: list[dict[str, Any]] = []
        for item in message.references:
            kind = item["kind"]
            if kind in ("cell", "error"):
                if kind == "error" and CELL_OUTPUTS not in self.host.policy().context_refs:
                    raise Refusal(
                        "not-permitted",
                        "Your administrator does not allow cell outputs to reach agents.",
                    )
                cell = await self.host.read_cell(item["artifactId"], item["cellId"])
                if all(c["cellId"] != cell["cellId"] for c in cells):
                    cells.append(cell)
                if kind == "error":
                    size = sum(
                        len(item[k].encode("utf-8", "surrogatepass"))
                        for k in ("ename", "evalue", "traceback")
                    )
                    if size > budget:
                        raise Refusal(
                            "over-budget",
                            "The attached error is larger than the context budget; it "
                            "cannot be sent.",
                        )
                    resources.append(error_resource(item))
            elif kind == "variable":
                if KERNEL_VARIABLES not in granted:
                    raise Refusal(
                        "blocked",
                        "Kernel variables are not allowed in this conversation; check Kernel "
                        "variables under Context first.",
                    )
                if self.host.variables is None:
                    raise Refusal("no-active-session", "This server has no kernels to read.")
                description = await self.host.variables.describe(item["name"])
                resources.append(variable_resource(item["name"], description))
            else:
                refusal = files.read_refusal(conversation.chat_only, granted)
                if refusal is None and not may_read_files:
                    refusal = Refusal("blocked", "You may not read files on this server.")
                if refusal is not None:
                    raise refusal
                api_path = files.resolve(self.host.cwd, item["path"])
                files.refuse_notebook(item["path"], api_path)
                text = await self.host.file_reviews.read(api_path)
                if text is None:
                    raise Refusal("invalid-input", "The attached file no longer exists.")
                if len(text.encode("utf-8", "surrogatepass")) > budget:
                    raise Refusal(
                        "over-budget",
                        "The attached file is larger than the context budget; it cannot be "
                        "sent. Ask the agent to read it instead.",
                    )
                resources.append(file_resource(api_path, text))
        return resources, cells

    async def cancel(self, conversation: Conversation) -> bool:
        """Stop: ask the agent to cancel; stop the agent if it does not within a grace."""
        turn = conversation.running
        if turn is None:
            return False
        turn.cancel_requested = True
        self.host.approvals.end_group(conversation.id)
        process = conversation.process
        if process is not None and process.conn is not None and conversation.session_id:
            with contextlib.suppress(Exception):
                await process.call(process.conn.cancel(session_id=conversation.session_id), 2.0)
        asyncio.ensure_future(self._stop_if_still_running(conversation, turn))
        return True

    async def _run(self, conversation: Conversation, turn: Turn, blocks: list[Any]) -> None:
        started = time.monotonic()
        try:
            ending = conversation.process
            if ending is None or ending.ending:
                if ending is not None:
                    # Stopped for idleness as this message came: let that stop end first.
                    await ending.stop()
                await self.processes.start(conversation)
            process = conversation.process
            assert process is not None and process.conn is not None
            await self.modes.set(conversation)
            if not self.modes.held(conversation):
                # Fail closed: an agent left in a mode that acts without asking gets no prompt.
                turn.end(
                    ERROR,
                    f"{conversation.agent.label} could not be put into the mode in which it "
                    "asks before acting; nothing was sent to it.",
                )
                return
            if len(blocks) > 1 and not process.accepts_embedded_context:
                turn.end(
                    ERROR,
                    f"{conversation.agent.label} does not accept attached cells. Detach the "
                    "cell, or choose another agent in a new conversation.",
                )
                return
            if turn.images:
                # Decoding and resizing are CPU work: off the event loop.
                blocks = blocks + await asyncio.to_thread(
                    image_blocks,
                    turn.images,
                    process.accepts_images,
                    self.host.image_max_pixels(),
                )
                turn.images = []
            prompt = asyncio.ensure_future(
                process.call(
                    process.conn.prompt(session_id=conversation.session_id or "", prompt=blocks),
                    self.host.limits().turn_seconds,
                )
            )
            limit = asyncio.ensure_future(turn.limit_hit.wait())
            try:
                await asyncio.wait({prompt, limit}, return_when=asyncio.FIRST_COMPLETED)
            except asyncio.CancelledError:
                # The conversation ends (archive, delete, server stop) and stops the agent:
                # its prompt call goes with the turn, not left to fail later unread.
                prompt.cancel()
                raise
            finally:
                limit.cancel()
            if not prompt.done():
                # A cap was hit: the agent's turn is cancelled, and stopped if it goes on.
                await self._cut_short(conversation, prompt)
                turn.end(ERROR, turn.limit_message)
                return
            try:
                response = prompt.result()
            except asyncio.TimeoutError:
                await self._cut_short(conversation, prompt)
                turn.end(
                    ERROR,
                    f"{conversation.agent.label} took longer than "
                    f"{self.host.limits().turn_seconds:g} seconds for this message; it was "
                    "stopped.",
                )
                return
            usage = turn_usage(conversation, turn, response)
            if usage is not None:
                turn.emit({"type": "usage", **usage})
            failure = endpoint_failure(conversation, response)
            if failure is not None and not turn.cancel_requested:
                turn.end(ERROR, failure)
                return
            turn.end(CANCELLED if turn.cancel_requested else str(response.stop_reason))
        except AgentStartError as e:
            turn.end(ERROR, str(e))
        except AgentExited as e:
            if turn.cancel_requested:
                turn.end(CANCELLED)
            elif conversation.process is not None and conversation.process.line_overrun:
                turn.end(
                    ERROR,
                    f"{conversation.agent.label} sent a message longer than "
                    f"{conversation.process.line_max_bytes} bytes; it was stopped. Send a "
                    "message to start it again; it will not remember this conversation.",
                )
            else:
                turn.end(
                    ERROR,
                    f"{conversation.agent.label} stopped unexpectedly ({e}). Send a message to "
                    "start it again; it will not remember this conversation.",
                )
        except acp.RequestError as e:
            self.host.log.debug("Copilot agent '%s' answered: %s", conversation.agent.id, e)
            turn.end(
                CANCELLED if turn.cancel_requested else ERROR,
                None if turn.cancel_requested else f"{conversation.agent.label} reported an error.",
            )
        except asyncio.CancelledError:
            turn.end(CANCELLED)
            raise
        except Exception:
            self.host.log.warning(
                "Copilot agent '%s': the turn failed", conversation.agent.id, exc_info=True
            )
            turn.end(ERROR, "The turn failed on the server; see the server log.")
        finally:
            if not turn.ended:
                turn.end(END_TURN)
            # Cards of a turn that ended can no longer be allowed.
            self.host.approvals.end_group(conversation.id)
            if conversation.running is turn:
                conversation.running = None
                if self.host.idle_timeout() > 0 and not conversation.archived:
                    self.processes.stop_when_idle(conversation)
            self.host.telemetry.conversation_turn(
                conversation_ref=conversation.ref,
                agent_kind=conversation.agent.kind,
                tools_attached=conversation.tools_attached,
                attachment=turn.attachment is not None,
                restarted=turn.restarted,
                stop_reason=turn.stop_reason or ERROR,
                tool_calls=len(turn.tool_calls),
                latency_ms=(time.monotonic() - started) * 1000,
            )
            self.saved(conversation, turn)

    async def _cut_short(self, conversation: Conversation, prompt: asyncio.Future[Any]) -> None:
        """Cancel the agent's turn; stop the agent if it does not end within the grace."""
        process = conversation.process
        if process is not None and process.conn is not None and conversation.session_id:
            with contextlib.suppress(Exception):
                await process.call(process.conn.cancel(session_id=conversation.session_id), 2.0)
        await asyncio.wait({prompt}, timeout=CANCEL_GRACE_SECONDS)
        if not prompt.done():
            prompt.cancel()
            if process is not None:
                await process.stop()
        with contextlib.suppress(BaseException):
            await prompt

    async def _stop_if_still_running(self, conversation: Conversation, turn: Turn) -> None:
        await asyncio.sleep(CANCEL_GRACE_SECONDS)
        if conversation.running is turn and conversation.process is not None:
            await conversation.process.stop()


#: The ``_meta`` key in which the built-in model agent copies its turn's tokens.
USAGE_META = "jupyter-copilot/usage"

#: The ``_meta`` key in which the built-in model agent reports its endpoint's failure.
ENDPOINT_ERROR_META = "jupyter-copilot/error"

#: The longest endpoint failure shown as the turn's error.
ENDPOINT_ERROR_CHARS = 400


def endpoint_failure(conversation: Conversation, response: Any) -> str | None:
    """The plain words of a failed model endpoint, when the built-in model agent sent them.

    Only the built-in model agent's ``_meta`` is read (docs/protocol.md, "The built-in model
    agent"); its sentences are fixed ones that never quote the endpoint.
    """
    if conversation.agent.kind != "model":
        return None
    meta = getattr(response, "field_meta", None)
    error = meta.get(ENDPOINT_ERROR_META) if isinstance(meta, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return message[:ENDPOINT_ERROR_CHARS] if isinstance(message, str) and message else None


def turn_usage(conversation: Conversation, turn: Turn, response: Any) -> dict[str, int] | None:
    """The turn's tokens as its agent reported them, with the conversation's totals.

    Read from the prompt response's ``usage`` (ACP), else from the built-in model agent's
    ``_meta["jupyter-copilot/usage"]``; the totals are summed here, over the conversation's
    turns, never taken from the agent. How full its context is comes from its last
    ``usage_update``.
    """
    reported = getattr(response, "usage", None)
    if reported is not None:
        figures = {"inputTokens": reported.input_tokens, "outputTokens": reported.output_tokens}
    else:
        meta = getattr(response, "field_meta", None)
        copied = meta.get(USAGE_META) if isinstance(meta, dict) else None
        copied = copied if isinstance(copied, dict) else {}
        figures = {k: copied.get(k) for k in ("inputTokens", "outputTokens")}
    counted = {k: tokens(v) for k, v in figures.items()}
    if any(v is None for v in counted.values()):
        return None
    usage: dict[str, int] = {k: v for k, v in counted.items() if v is not None}
    earlier = [t.usage for t in conversation.turns if t is not turn and t.usage is not None]
    usage["conversationInputTokens"] = usage["inputTokens"] + sum(
        u.get("inputTokens", 0) for u in earlier
    )
    usage["conversationOutputTokens"] = usage["outputTokens"] + sum(
        u.get("outputTokens", 0) for u in earlier
    )
    if turn.context is not None:
        usage["contextUsed"], usage["contextSize"] = turn.context
    return usage
