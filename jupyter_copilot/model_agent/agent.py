"""The model agent's ACP side: pydantic-ai runs the model and the MCP tools, this module
turns its events into ACP updates (docs/protocol.md, "The built-in model agent").

All of pydantic-ai is used here and in :func:`make_model`, so that a change of its API
touches one module. The agent never asks its client for permission: the server's tools
already hold every edit and run to a card or a review (docs/security.md).
"""

from __future__ import annotations

import asyncio
import base64
import logging
import uuid
from dataclasses import dataclass, field
from typing import Any, NoReturn

import acp
from acp.schema import (
    AgentCapabilities,
    Implementation,
    McpCapabilities,
    PromptCapabilities,
    Usage,
    UsageUpdate,
)
from pydantic_ai import Agent, BinaryContent
from pydantic_ai import exceptions as errors
from pydantic_ai.messages import (
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
)
from pydantic_ai.run import AgentRunResultEvent
from pydantic_ai.usage import UsageLimits

from .._version import __version__
from .settings import ModelSettings
from .words import ERROR_META, USAGE_META, failure_text

log = logging.getLogger(__name__)

AGENT_NAME = "jupyter-copilot-model-agent"

INSTRUCTIONS = """You help a person with the Jupyter notebook open in their JupyterLab.
Use your tools to read cells before you talk about them. To change a cell, propose the
edit with your tools: the person reviews every change before it applies. Answer briefly."""

#: The most model requests one turn may make (each tool round trip is one).
REQUEST_LIMIT = 25

#: The most characters of a tool's result repeated in its ACP update.
TOOL_OUTPUT_CHARS = 2_000

#: Seconds the SDKs may wait for a connection; the turn's own limit covers the rest.
CONNECT_SECONDS = 10.0


def make_model(settings: ModelSettings) -> Any:
    """The pydantic-ai model of ``settings``, with at most one retry by its SDK.

    Only the selected provider's SDK is imported: each takes a second or more.
    """
    if settings.protocol == "anthropic":
        from anthropic import AsyncAnthropic
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        anthropic = AsyncAnthropic(
            api_key=settings.api_key or "none", base_url=settings.base_url, max_retries=1
        )
        return AnthropicModel(
            settings.model, provider=AnthropicProvider(anthropic_client=anthropic)
        )
    if settings.protocol == "gemini":
        from pydantic_ai.models.google import GoogleModel
        from pydantic_ai.providers.google import GoogleProvider

        return GoogleModel(
            settings.model,
            provider=GoogleProvider(api_key=settings.api_key or "none", base_url=settings.base_url),
        )
    import httpx2
    from openai import AsyncOpenAI
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    openai = AsyncOpenAI(
        api_key=settings.api_key or "none",
        base_url=settings.base_url,
        max_retries=1,
        timeout=httpx2.Timeout(settings.turn_seconds, connect=CONNECT_SECONDS),
    )
    return OpenAIChatModel(settings.model, provider=OpenAIProvider(openai_client=openai))


def failure_kind(error: BaseException) -> tuple[str, int | None]:
    """The kind of a failed turn (see ``words.py``) and its HTTP status, if it had one."""
    status = getattr(error, "status_code", None)
    status = status if isinstance(status, int) else None
    if isinstance(error, errors.ModelAuthenticationError):
        return "auth", status
    if isinstance(error, errors.ModelNotFoundError):
        return "not-found", status
    if isinstance(error, errors.ModelRateLimitError):
        return "rate-limited", status
    if isinstance(error, (errors.ModelContextWindowExceededError, errors.UsageLimitExceeded)):
        return "context", status
    if isinstance(error, (errors.RunTimedOut, TimeoutError)):
        return "timeout", status
    if isinstance(error, (errors.ModelConnectionError, errors.ModelTimeoutError)):
        return "unreachable", status
    return "failed", status


@dataclass
class Session:
    """One conversation: its pydantic-ai agent, its history and the running turn."""

    agent: Any
    history: list[Any] = field(default_factory=list)
    task: asyncio.Task[acp.PromptResponse] | None = None
    input_tokens: int = 0
    output_tokens: int = 0


def _unsupported(method: str) -> Any:
    """A handler for an ACP method the agent does not offer: JSON-RPC "method not found"."""

    async def handler(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
        raise acp.RequestError.method_not_found(method)

    return handler


class ModelAgent(acp.Agent):
    """An ACP agent answering with one model endpoint, its tools from the client's MCP."""

    # Without these the protocol's empty bodies would answer ``null`` instead of an error.
    authenticate = _unsupported("authenticate")
    load_session = _unsupported("session/load")
    list_sessions = _unsupported("session/list")
    set_session_mode = _unsupported("session/set_mode")
    set_config_option = _unsupported("session/set_config_option")
    fork_session = _unsupported("session/fork")
    resume_session = _unsupported("session/resume")
    close_session = _unsupported("session/close")
    ext_method = _unsupported("_ext")

    def __init__(self, settings: ModelSettings) -> None:
        self.settings = settings
        self.model = make_model(settings)
        self.client: Any = None
        self.sessions: dict[str, Session] = {}

    def on_connect(self, conn: acp.Client) -> None:
        """Keep the connection to the client, to send session updates."""
        self.client = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **kwargs: Any,
    ) -> acp.InitializeResponse:
        """Announce embedded context (attached cells), images (a cell's plots, unless the
        entry says the model takes none) and HTTP MCP servers."""
        return acp.InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                prompt_capabilities=PromptCapabilities(
                    embedded_context=True, image=self.settings.images
                ),
                mcp_capabilities=McpCapabilities(http=True),
            ),
            agent_info=Implementation(name=AGENT_NAME, title="Model agent", version=__version__),
        )

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> acp.NewSessionResponse:
        """A session whose tools are the HTTP MCP servers given (the notebook's tools).

        The MCP client is imported only for a session that has servers: it is about a second
        of the agent's start, which a chat-only conversation does not wait for.
        """
        servers = [s for s in mcp_servers or [] if getattr(s, "type", None) == "http"]
        toolsets: list[Any] = []
        if servers:
            from pydantic_ai.mcp import MCPToolset

            toolsets = [
                MCPToolset(
                    server.url,
                    id=server.name,
                    headers={h.name: h.value for h in server.headers},
                    tool_error_behavior="failed",
                )
                for server in servers
            ]
        session_id = uuid.uuid4().hex
        self.sessions[session_id] = Session(
            Agent(self.model, toolsets=toolsets, instructions=INSTRUCTIONS)
        )
        return acp.NewSessionResponse(session_id=session_id)

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> acp.PromptResponse:
        """Run one turn; ``cancelled`` when the client cancels it (``session/cancel``)."""
        session = self.sessions.get(session_id)
        if session is None or self.client is None:
            raise acp.RequestError.invalid_params({"sessionId": "Unknown session."})
        if session.task is not None:
            raise acp.RequestError.invalid_request({"sessionId": "A prompt is still running."})
        task = session.task = asyncio.ensure_future(
            self._turn(session_id, session, prompt_content(prompt))
        )
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:
            task.cancel()
            raise
        finally:
            session.task = None
        if task.cancelled():
            return acp.PromptResponse(stop_reason="cancelled")
        return task.result()

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        """Extension notifications are ignored."""

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """Stop the session's turn at once: the endpoint's stream is closed with it."""
        session = self.sessions.get(session_id)
        if session is not None and session.task is not None:
            session.task.cancel()

    async def _send(self, session_id: str, update: Any) -> None:
        await self.client.session_update(session_id=session_id, update=update)

    async def _turn(
        self, session_id: str, session: Session, text: str | list[Any]
    ) -> acp.PromptResponse:
        settings = self.settings
        limits = UsageLimits(
            request_limit=REQUEST_LIMIT, per_request_input_tokens_limit=settings.input_budget
        )
        try:
            async with session.agent.run_stream_events(
                text,
                message_history=session.history,
                usage_limits=limits,
                timeout=settings.turn_seconds,
                model_settings={"max_tokens": settings.max_output_tokens},
            ) as events:
                async for event in events:
                    if isinstance(event, AgentRunResultEvent):
                        return await self._finish(session_id, session, event.result)
                    await self._relay(session_id, event)
        except (errors.AgentRunError, TimeoutError) as error:
            kind, status = failure_kind(error)
            log.info("model turn failed: %s", kind)  # never the message: it may echo the key
            return acp.PromptResponse(
                stop_reason="max_tokens" if kind == "context" else "end_turn",
                field_meta={
                    ERROR_META: {
                        "kind": kind,
                        "status": status,
                        "message": failure_text(kind, settings, status),
                    }
                },
            )
        return acp.PromptResponse(stop_reason="end_turn")

    async def _relay(self, session_id: str, event: Any) -> None:
        """One pydantic-ai event as the ACP update the panel shows, if any."""
        if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
            if event.part.content:
                await self._send(session_id, acp.update_agent_message_text(event.part.content))
        elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
            if event.delta.content_delta:
                await self._send(
                    session_id, acp.update_agent_message_text(event.delta.content_delta)
                )
        elif isinstance(event, FunctionToolCallEvent):
            await self._send(
                session_id,
                acp.start_tool_call(
                    event.part.tool_call_id,
                    event.part.tool_name,
                    kind="other",
                    status="in_progress",
                    raw_input=event.part.args_as_dict(),
                ),
            )
        elif isinstance(event, FunctionToolResultEvent):
            failed = getattr(event.part, "part_kind", "") == "retry-prompt"
            output = str(getattr(event.part, "content", ""))[:TOOL_OUTPUT_CHARS]
            await self._send(
                session_id,
                acp.update_tool_call(
                    event.tool_call_id,
                    status="failed" if failed else "completed",
                    content=[acp.tool_content(acp.text_block(output))] if failed else None,
                    raw_output=None if failed else output,
                ),
            )

    async def _finish(self, session_id: str, session: Session, result: Any) -> acp.PromptResponse:
        """Keep the history; report the turn's tokens and how full the context is."""
        session.history = list(result.all_messages())
        usage = result.usage
        session.input_tokens += usage.input_tokens
        session.output_tokens += usage.output_tokens
        last = result.response.usage
        await self._send(
            session_id,
            UsageUpdate(
                session_update="usage_update",
                used=last.input_tokens + last.output_tokens,
                size=self.settings.context_window,
            ),
        )
        figures = {
            "inputTokens": usage.input_tokens,
            "outputTokens": usage.output_tokens,
            "conversationInputTokens": session.input_tokens,
            "conversationOutputTokens": session.output_tokens,
            "contextUsed": last.input_tokens + last.output_tokens,
            "contextSize": self.settings.context_window,
        }
        return acp.PromptResponse(
            stop_reason="end_turn",
            usage=Usage(
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                total_tokens=usage.input_tokens + usage.output_tokens,
            ),
            field_meta={USAGE_META: figures},
        )


def prompt_content(blocks: list[Any]) -> str | list[Any]:
    """The prompt as the model's user message: its text (:func:`prompt_text`), followed by
    the images that came with it as binary image parts, which pydantic-ai sends to the
    endpoint as images in its own format (OpenAI, Anthropic and Gemini alike)."""
    text = prompt_text(blocks)
    images = [
        BinaryContent(base64.b64decode(block.data), media_type=block.mime_type)
        for block in blocks
        if getattr(block, "type", None) == "image"
        and isinstance(getattr(block, "data", None), str)
        and block.mime_type in ("image/png", "image/jpeg")
    ]
    return [text, *images] if images else text


def prompt_text(blocks: list[Any]) -> str:
    """The prompt as text: typed text, and an attached cell as a fenced resource."""
    parts: list[str] = []
    for block in blocks:
        text = getattr(block, "text", None)
        resource = getattr(block, "resource", None)
        if isinstance(text, str):
            parts.append(text)
        elif resource is not None and isinstance(getattr(resource, "text", None), str):
            parts.append(f"Attached ({resource.uri}):\n```\n{resource.text}\n```")
    return "\n\n".join(parts)
