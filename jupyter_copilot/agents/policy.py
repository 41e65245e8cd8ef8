"""What a conversation gives its agent: pure decisions, no I/O.

The agent gets the person's message verbatim and, if attached, one cell as an explicit
resource. It gets our MCP endpoint only when the conversation is not Chat-only and at least
one context reference is granted. Nothing here looks at the text of the message.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from acp.schema import (
    AcpMcpServer,
    ClientCapabilities,
    EmbeddedResourceContentBlock,
    FileSystemCapabilities,
    HttpHeader,
    HttpMcpServer,
    McpServerStdio,
    SseMcpServer,
    TextContentBlock,
    TextResourceContents,
)

#: The name of our MCP server as agents see it (tools are often shown as ``<name>__<tool>``).
MCP_SERVER_NAME = "jupyter-copilot"
#: The scheme of an attached cell's resource URI.
CELL_URI_PREFIX = "jupyter-copilot://cell/"


def client_capabilities() -> ClientCapabilities:
    """What we announce: no file reads or writes and no terminals through us."""
    return ClientCapabilities(
        fs=FileSystemCapabilities(read_text_file=False, write_text_file=False), terminal=False
    )


def tools_attached(chat_only: bool, context_refs: Iterable[str]) -> bool:
    """Whether a conversation's agent gets our MCP endpoint."""
    return not chat_only and any(True for _ in context_refs)


def mcp_servers(
    attached: bool, url: str, token: str
) -> list[HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio]:
    """The ``mcpServers`` of ``session/new``: ours with the conversation's token, or none."""
    if not attached:
        return []
    return [
        HttpMcpServer(
            type="http",
            name=MCP_SERVER_NAME,
            url=url,
            headers=[HttpHeader(name="Authorization", value=f"Bearer {token}")],
        )
    ]


def mcp_url(*, secure: bool, ip: str, port: int, base_url: str) -> str:
    """The endpoint's URL as seen from the agent, a process on the server's machine."""
    host = ip if ip not in ("", "0.0.0.0", "::", "*") else "127.0.0.1"
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    base = "/" + base_url.strip("/") + "/" if base_url.strip("/") else "/"
    return f"{'https' if secure else 'http'}://{host}:{port}{base}copilot/mcp"


def prompt_blocks(text: str, cell: dict[str, Any] | None, language: str | None) -> list[Any]:
    """The prompt: the message verbatim, then the attached cell as an embedded resource.

    ``cell`` is the live cell (``artifactId``, ``cellId``, ``cellType``, ``source``,
    ``expectedSourceHash``); its source never enters the text block.
    """
    blocks: list[Any] = [TextContentBlock(type="text", text=text)]
    if cell is not None:
        mime = "text/markdown" if cell["cellType"] == "markdown" else f"text/x-{language or 'code'}"
        resource = TextResourceContents(
            uri=f"{CELL_URI_PREFIX}{cell['artifactId']}/{cell['cellId']}",
            text=cell["source"],
            mime_type=mime,
            field_meta={
                "cellId": cell["cellId"],
                "cellType": cell["cellType"],
                "expectedSourceHash": cell["expectedSourceHash"],
            },
        )
        blocks.append(EmbeddedResourceContentBlock(type="resource", resource=resource))
    return blocks
