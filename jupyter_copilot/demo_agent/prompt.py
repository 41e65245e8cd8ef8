"""What the demo agent reads from a prompt and says back: pure helpers and texts."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, unquote

from acp.schema import (
    EmbeddedResourceContentBlock,
    HttpMcpServer,
    TextContentBlock,
    TextResourceContents,
)

from ..protocol.refusals import DEFAULT_TEXT

MCP_SERVER_NAME = "jupyter-copilot"
CELL_URI_PREFIX = "jupyter-copilot://cell/"

NO_TOOLS = (
    "This conversation has no notebook tools (Chat only is on, or its Context menu grants "
    "nothing), so I cannot read or edit cells. Press + for a new conversation: it starts "
    "with Chat only off. Before its first message, the Agent menu has the Chat only switch "
    "and the Context menu what I may read. Then ask again."
)
HELP = """I am the offline demo agent: I follow rules, not a language model. I can:

- **add docstrings** to the functions and classes of a code cell;
- **sort the imports** at the top of a code cell;
- **explain** a cell in a few lines;
- **add a note**: a new Markdown cell below a cell, describing it;
- **run** a code cell, once you allow it on its run card, and tell you what it printed.

Attach a cell or select one in the notebook, then ask, e.g. "add docstrings".
Every change is a diff in the cell, and every new cell a pending cell, that you Keep or Undo.
"""
#: What the demo agent says for a refusal code: the code's default text (vocabulary.json,
#: docs/protocol.md section 7) where that says it all, its own advice where it has some.
REFUSALS = {
    **{
        code: DEFAULT_TEXT[code]
        for code in (
            "kill-switch",
            "feature-disabled",
            "not-authoring-view",
            "read-only",
            "cell-not-found",
            "cell-locked",
            "timeout",
        )
    },
    "plan-mode": "This conversation is in Plan mode, so I can only suggest.",
    "denied": "It was not approved, so nothing changed.",
    "not-permitted": "This server does not let agents run cells; you can run it yourself.",
    "cell-type-mismatch": "Only code cells can run.",
    "stale-source": "The cell changed after I read it; ask me again to work on its new source.",
    "blocked": "This conversation may not read that; allow it in the conversation's context.",
    "no-active-page": "No JupyterLab page is connected; open the notebook in JupyterLab.",
    "ambiguous-active-notebook": "More than one page shows an active notebook; close one.",
    "artifact-mismatch": "The cell's notebook is not the active one; switch to it first.",
    # Not a refusal code: the demo agent's own, when the MCP endpoint cannot be reached.
    "unreachable": "I could not reach the notebook tools.",
}


@dataclass(frozen=True)
class McpTarget:
    """The HTTP MCP server of a session and the headers (the token) it needs."""

    url: str
    headers: dict[str, str]


@dataclass(frozen=True)
class CellRef:
    """One notebook cell as the agent got it: from an attachment or a read tool."""

    artifact_id: str
    cell_id: str
    cell_type: str
    source: str
    expected_source_hash: str


class Refused(Exception):
    """A tool call that ended with a contract refusal code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def source_hash(source: str) -> str:
    """The contract's ``expectedSourceHash`` of a complete cell source."""
    return "sha256:" + hashlib.sha256(source.encode("utf-8")).hexdigest()


def choose_mcp_server(servers: Sequence[Any] | None) -> McpTarget | None:
    """The server named ``jupyter-copilot``, else the first HTTP one; ``None`` without."""
    http = [s for s in servers or [] if isinstance(s, HttpMcpServer)]
    http.sort(key=lambda s: s.name != MCP_SERVER_NAME)
    return McpTarget(http[0].url, {h.name: h.value for h in http[0].headers}) if http else None


def read_prompt(blocks: Sequence[Any]) -> tuple[str, CellRef | None]:
    """The person's text (all text blocks) and the attached cell, if one came along."""
    texts = [b.text for b in blocks if isinstance(b, TextContentBlock)]
    cell = None
    for block in blocks:
        resource = getattr(block, "resource", None)
        if not isinstance(block, EmbeddedResourceContentBlock) or not (
            isinstance(resource, TextResourceContents) and resource.uri.startswith(CELL_URI_PREFIX)
        ):
            continue
        meta = {**(block.field_meta or {}), **(resource.field_meta or {})}
        # The query carries the hash for agents that drop _meta: jupyter-copilot://cell/A/C?...
        where, _, query = resource.uri[len(CELL_URI_PREFIX) :].partition("?")
        artifact, _, cell_id = where.rpartition("/")
        meta = {**dict(parse_qsl(query)), **meta}
        cell = CellRef(
            artifact_id=unquote(artifact),
            cell_id=str(meta.get("cellId") or unquote(cell_id)),
            cell_type=str(meta.get("cellType") or "code"),
            source=resource.text,
            expected_source_hash=str(meta.get("expectedSourceHash") or source_hash(resource.text)),
        )
    return "\n".join(texts), cell


def chunks(text: str, pieces: int = 4) -> list[str]:
    """``text`` cut at line ends into about ``pieces`` parts, for streaming."""
    lines = text.splitlines(keepends=True)
    size = max(1, -(-len(lines) // pieces))
    return ["".join(lines[i : i + size]) for i in range(0, len(lines), size)] or [text]


def fenced(source: str, language: str = "python") -> str:
    """``source`` as a Markdown code block whose fence no line of it can close."""
    fence = "`" * max([3, *(len(run) + 1 for run in re.findall(r"`{3,}", source))])
    body = source.rstrip("\r\n")
    return f"{fence}{language}\n{body}\n{fence}\n"


def run_summary(result: dict[str, Any], limit: int = 600) -> str:
    """What the agent says about a finished run: how it ended and its output digests.

    Text outputs are quoted, ``limit`` characters in all, saying how much was left out;
    an error is its name and value; anything else is named by type and size, as the
    digests give it (never more).
    """
    count = result.get("executionCount")
    head = _RUN_ENDINGS.get(str(result.get("status")), _RUN_ENDINGS["ok"])
    parts = [head + (f" (execution count {count})." if isinstance(count, int) else ".")]
    budget = limit
    for output in result.get("outputs") or []:
        part, budget = _output_text(output, budget)
        parts.append(part)
    omitted = result.get("outputsOmitted")
    if isinstance(omitted, int) and omitted:
        parts.append(f"{omitted} more output(s) did not fit the size budget.")
    if len(parts) == 1:
        parts.append("It printed nothing.")
    return "\n\n".join(parts) + "\n"


_RUN_ENDINGS = {
    "ok": "The cell ran",
    "error": "The cell ran and raised an error",
    "aborted": "The run did not finish (the kernel stopped, restarted or was interrupted)",
}


def _output_text(output: Any, budget: int) -> tuple[str, int]:
    if not isinstance(output, dict):
        return "An output I cannot read.", budget
    if output.get("outputType") == "error":
        return f"Error `{output.get('ename')}`: {output.get('evalue')}", budget
    text = output.get("text")
    data: dict[str, Any] = output["data"] if isinstance(output.get("data"), dict) else {}
    plain = data.get("text/plain")
    if not isinstance(text, str) and isinstance(plain, dict):
        text = plain.get("text")
    if isinstance(text, str):
        shown = text[: max(budget, 0)]
        part = fenced(shown, "text") if shown.strip() else "(a blank line)"
        if len(text) > len(shown):
            part += f"\n... and {len(text) - len(shown)} more characters."
        return part, budget - len(shown)
    sizes = [
        f"{mime} ({item['bytes']} bytes)"
        for mime, item in data.items()
        if isinstance(item, dict) and isinstance(item.get("bytes"), int)
    ]
    if sizes:
        return "A rich output: " + ", ".join(sizes) + ".", budget
    return "An output I cannot show.", budget
