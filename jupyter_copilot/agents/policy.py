"""What a conversation gives its agent: pure decisions, no I/O.

The agent gets the person's message verbatim and, as explicit resources, the cell and the
other chips (variables, files, a cell's error) the person attached. It gets our MCP endpoint
only when the conversation is not Chat-only and at least one context reference is granted.
Nothing here looks at the text of the message.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import quote, urlencode

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
#: The schemes of the other references a person attaches (docs/conversations.md, "Context chips").
VARIABLE_URI_PREFIX = "jupyter-copilot://variable/"
FILE_URI_PREFIX = "jupyter-copilot://file/"
ERROR_URI_PREFIX = "jupyter-copilot://error/"


def client_capabilities() -> ClientCapabilities:
    """What we announce: file reads, file writes and terminals, all through us.

    Adapters that honour these send their own Read, Write and shell tools to us instead of
    acting on disk, and we serve them under the conversation's mode (docs/security.md).
    """
    return ClientCapabilities(
        fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True
    )


def cell_uri(artifact_id: str, cell_id: str, source_hash: str) -> str:
    """An attached cell's resource URI; it carries the hash, which adapters pass on.

    Real adapters hand the model the URI but drop the resource's ``_meta``, so the hash
    that ``notebook_edit_cell`` needs travels in the URI's query.
    """
    query = urlencode({"expectedSourceHash": source_hash}, safe=":")
    return f"{CELL_URI_PREFIX}{quote(artifact_id, safe='')}/{quote(cell_id, safe='')}?{query}"


#: Agent modes in which an agent acts without asking the client first: never chosen.
UNSAFE_AGENT_MODES = frozenset(
    {
        "auto",
        "bypasspermissions",
        "acceptedits",
        "yolo",
        "autoedit",
        "auto_edit",
        "dontask",
        "full-access",
        "full_access",
        "never",
    }
)


def agent_mode(
    available: Sequence[str], ask_mode: str | None, plan_mode: str | None, read_only: bool
) -> str | None:
    """The agent's own session mode to hold it in, or ``None`` when it offers none that fits.

    Under our Plan (and Chat-only) the agent's plan mode; otherwise the mode in which it asks
    the client before acting. A profile names them; an unknown agent's are found by name.
    An unsafe mode (one that acts without asking) is never chosen.
    """
    wanted = [plan_mode, "plan"] if read_only else [ask_mode, "default", "ask"]
    for mode in wanted:
        if mode and mode in available and mode.lower() not in UNSAFE_AGENT_MODES:
            return mode
    return None


def tools_offered(chat_only: bool, context_refs: Iterable[str]) -> bool:
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


def prompt_blocks(
    text: str,
    cell: dict[str, Any] | None,
    language: str | None,
    extra: Sequence[TextResourceContents] = (),
) -> list[Any]:
    """The prompt: the message verbatim, then the attached cell as an embedded resource,
    then the other references the person attached (``extra``), one resource each.

    ``cell`` is the live cell (``artifactId``, ``cellId``, ``cellType``, ``source``,
    ``expectedSourceHash``); its source never enters the text block.
    """
    blocks: list[Any] = [TextContentBlock(type="text", text=text)]
    resources = ([cell_resource(cell, language)] if cell is not None else []) + list(extra)
    for resource in resources:
        blocks.append(EmbeddedResourceContentBlock(type="resource", resource=resource))
    return blocks


def cell_resource(cell: dict[str, Any], language: str | None) -> TextResourceContents:
    """A live cell as a resource: its source, with its hash in the URI and ``_meta``."""
    mime = "text/markdown" if cell["cellType"] == "markdown" else f"text/x-{language or 'code'}"
    return TextResourceContents(
        uri=cell_uri(cell["artifactId"], cell["cellId"], cell["expectedSourceHash"]),
        text=cell["source"],
        mime_type=mime,
        field_meta={
            "cellId": cell["cellId"],
            "cellType": cell["cellType"],
            "expectedSourceHash": cell["expectedSourceHash"],
        },
    )


def variable_resource(name: str, description: dict[str, Any]) -> TextResourceContents:
    """A kernel variable as a resource: what ``notebook_describe_variable`` answers."""
    return TextResourceContents(
        uri=f"{VARIABLE_URI_PREFIX}{quote(name, safe='.')}",
        text=json.dumps(description, ensure_ascii=False),
        mime_type="application/json",
        field_meta={"variable": name},
    )


def file_resource(path: str, text: str) -> TextResourceContents:
    """A file under the server's root as a resource, by its contents-API path."""
    return TextResourceContents(
        uri=f"{FILE_URI_PREFIX}{quote(path)}",
        text=text,
        mime_type="text/plain",
        field_meta={"path": path},
    )


def error_text(error: dict[str, Any]) -> str:
    """An attached error in plain text: name and value, the traceback (as the panel sent it,
    ANSI codes stripped), and a last line saying what was left out, if anything was."""
    lines = [f"{error['ename']}: {error['evalue']}"]
    if error["traceback"]:
        lines += ["", error["traceback"]]
    omitted = error.get("omitted")
    if omitted:
        lines += [
            "",
            f"[{omitted.get('linesOmitted', 0)} traceback lines "
            f"({omitted.get('tracebackBytes', 0)} bytes in all) were left out to keep within "
            f"the context budget of {omitted.get('budgetBytes', 0)} bytes.]",
        ]
    return "\n".join(lines)


def error_resource(error: dict[str, Any]) -> TextResourceContents:
    """The error a cell's run ended with, as a resource beside the cell's own."""
    meta: dict[str, Any] = {"cellId": error["cellId"], "ename": error["ename"]}
    if error.get("omitted"):
        meta["omitted"] = error["omitted"]
    return TextResourceContents(
        uri=f"{ERROR_URI_PREFIX}{quote(error['artifactId'], safe='')}/"
        f"{quote(error['cellId'], safe='')}",
        text=error_text(error),
        mime_type="text/plain",
        field_meta=meta,
    )
