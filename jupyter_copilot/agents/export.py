"""A conversation as a Markdown file a person takes with them (docs/conversations.md,
"Take a conversation with you"). Pure functions, no I/O.

The file holds what the transcript shows: each message, each reply, a one-line summary of
each tool call and the notices. Cells are referenced by a link to their notebook and their
label, never copied in; tool outputs are left out. Secrets are never written: the server's
own token and the conversation's are replaced wherever they appear, and so is anything that
looks like a key or a token (``sk-…``, ``Bearer …``, ``api_key=…`` and the like).
"""

from __future__ import annotations

import datetime
import re
import unicodedata
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

#: What replaces a secret.
REDACTED = "[redacted]"

#: Things that look like keys and tokens, whatever they belong to.
_SECRET_PATTERNS = [
    re.compile(r"\bjcc-[A-Za-z0-9_\-]{16,}"),
    re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}"),
    re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"),
    re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    re.compile(r"(?i)\b(bearer|token)\s+[A-Za-z0-9._~+/\-]{16,}=*"),
    re.compile(
        r"(?i)\b([A-Za-z0-9_]*(?:api[_-]?key|token|secret|password|passwd)[A-Za-z0-9_]*)"
        r"(\s*[=:]\s*)(['\"]?)[^\s'\"]{6,}\3"
    ),
]

#: How the transcript's tool states read in the file.
_STATES = {
    "pending": "pending",
    "in_progress": "running",
    "completed": "done",
    "failed": "failed",
}


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with each of ``secrets`` and anything that looks like a key replaced."""
    for secret in secrets:
        if secret and len(secret) >= 8:
            text = text.replace(secret, REDACTED)
    for pattern in _SECRET_PATTERNS:
        if pattern.groups >= 3:
            text = pattern.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
        elif pattern.groups == 1:
            text = pattern.sub(lambda m: f"{m.group(1)} {REDACTED}", text)
        else:
            text = pattern.sub(REDACTED, text)
    return text


def notebook_link(path: str) -> str:
    """A Markdown link to a notebook by its path under the server's root."""
    name = path.rsplit("/", 1)[-1] or path
    return f"[{_inline(name)}]({quote(path)})"


def filename(conversation: dict[str, Any]) -> str:
    """``copilot-<title>-<date>.md``: ASCII letters, digits and dashes only."""
    title = unicodedata.normalize("NFKD", str(conversation.get("title") or "conversation"))
    slug = re.sub(r"[^a-z0-9]+", "-", title.encode("ascii", "ignore").decode().lower())
    slug = slug.strip("-")[:48].strip("-") or "conversation"
    date = str(conversation.get("createdAt") or "")[:10]
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", date):
        date = datetime.date.today().isoformat()
    return f"copilot-{slug}-{date}.md"


def conversation_markdown(
    conversation: dict[str, Any], turns: list[dict[str, Any]], secrets: Iterable[str] = ()
) -> str:
    """The conversation (``Conversation.to_json``) and its turns (``Turn.to_json``) as
    Markdown, with every secret redacted."""
    secrets = list(secrets)
    agent = str(conversation.get("agentLabel") or "Agent")
    notebooks = [p for p in conversation.get("notebooks") or [] if isinstance(p, str)]
    lines = [f"# {_inline(str(conversation.get('title') or 'Conversation'))}", ""]
    lines.append(f"- Agent: {_inline(agent)}")
    lines.append(f"- Started: {conversation.get('createdAt') or 'unknown'}")
    if notebooks:
        lines.append(f"- Notebooks: {', '.join(notebook_link(p) for p in notebooks)}")
    lines.append(
        "- Exported from jupyter-copilot. Cells are linked, not copied; tool outputs are "
        "left out; keys and tokens are redacted."
    )
    for turn in turns:
        user = turn.get("user") or {}
        lines += ["", "## You", "", str(user.get("text") or "")]
        attachment = user.get("attachment")
        if isinstance(attachment, dict):
            label = _inline(str(attachment.get("label") or "Cell"))
            path = attachment.get("notebook")
            where = f" of {notebook_link(path)}" if isinstance(path, str) and path else ""
            cell_id = _inline(str(attachment.get("cellId") or ""))
            lines += ["", f"Attached: {label}{where} (cell id `{cell_id}`)"]
        lines += ["", f"## {_inline(agent)}", ""]
        reply = str(turn.get("reply") or "")
        lines.append(reply if reply.strip() else "_(no reply text)_")
        calls = [c for c in turn.get("toolCalls") or [] if isinstance(c, dict)]
        if calls:
            lines += ["", "Tool calls:", ""]
            for call in calls:
                state = _STATES.get(str(call.get("status")), str(call.get("status") or ""))
                line = f"- {_inline(str(call.get('title') or 'Tool call'))}: {state}"
                if call.get("error"):
                    line += f" ({_inline(str(call['error']))})"
                lines.append(line)
        for notice in turn.get("notices") or []:
            lines += ["", f"> {_inline(str(notice))}"]
        if turn.get("error"):
            lines += ["", f"> {_inline(str(turn['error']))}"]
    return redact("\n".join(lines).rstrip() + "\n", secrets)


def _inline(text: str) -> str:
    """One line of text: line breaks become spaces."""
    return " ".join(text.split())


def active_notebook_path(dispatcher: Any, page_id: str | None) -> str | None:
    """The path of the active notebook of the page that sent a message, if it has one."""
    try:
        page = dispatcher.resolve(page_id)
    except Exception:  # a Refusal: no page, or none that answers
        return None
    active = (page.state or {}).get("activeNotebook") or {}
    path = active.get("path")
    return path if isinstance(path, str) and path else None
