"""What an agent's own file, shell and permission requests may do: pure decisions.

Agents that honour the ACP client capabilities we announce send their file reads, file
writes and shell commands to us instead of acting on disk (docs/security.md, "Agents' own
tools"). These functions decide, from the conversation's settings alone, whether such a
request may go on; the services that carry a request out live in ``filereviews.py`` and
``shell.py``. Nothing here reads a file: only ``realpath`` touches the file system, and it
is handed in.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Iterable

from ..protocol.callers import FILES, PLAN
from ..protocol.refusals import Refusal

#: ACP tool kinds a read-only conversation still lets the person decide on.
READ_ONLY_KINDS = frozenset({"read", "search", "think"})
#: ACP tool kinds that change something; a request of these kinds is never one of ours.
CHANGING_KINDS = frozenset({"edit", "delete", "move", "execute", "fetch", "switch_mode"})
#: How adapters title a permission request for one of our MCP tools (``s``: our server's
#: name, ``n``: the tool's): Claude Code, Gemini CLI, and the plain MCP forms.
OUR_TOOL_TITLES = ("mcp__{s}__{n}", "{n} ({s} MCP Server)", "mcp_{s}_{n}", "{s}__{n}")
#: ``CopilotApp.agent_shell`` values.
SHELL_ASK = "ask"
SHELL_NEVER = "never"
SHELL_POLICIES = (SHELL_ASK, SHELL_NEVER)

_NOTEBOOK_SUFFIX = ".ipynb"


def resolve(root: str, path: str, realpath: Callable[[str], str] = os.path.realpath) -> str:
    """The contents-API path of ``path``, which must lie inside ``root`` after symlinks.

    ``path`` is what the agent sent: absolute, or relative to the root. Raises ``outside-root``
    for anything that resolves elsewhere and ``invalid-input`` for a path that is not one.
    The answer is ``""`` for the root itself, else ``a/b.txt`` with forward slashes.
    """
    if not isinstance(path, str) or not path or "\x00" in path or len(path) > 4096:
        raise Refusal("invalid-input", "The path must be a non-empty string.")
    real_root = realpath(root)
    candidate = path if os.path.isabs(path) else os.path.join(real_root, path)
    real = realpath(candidate)
    inside = real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)
    if not inside:
        raise Refusal(
            "outside-root",
            "That path is outside the Jupyter server's folder; agents may only reach files "
            "inside it.",
        )
    relative = os.path.relpath(real, real_root)
    return "" if relative == "." else relative.replace(os.sep, "/")


def refuse_notebook(*paths: str) -> None:
    """Raise ``notebook-file`` when any of ``paths`` (as given, or resolved) is a notebook."""
    names = (posixpath.basename(p.replace(os.sep, "/")).lower() for p in paths)
    if any(name.endswith(_NOTEBOOK_SUFFIX) for name in names):
        raise Refusal(
            "notebook-file",
            "Notebooks are never read or written as files. Use the notebook tools instead: "
            "notebook_read_selected_cell or notebook_read_cells to read, and "
            "notebook_edit_cell to propose a change the person reviews.",
        )


def read_refusal(chat_only: bool, context_refs: Iterable[str]) -> Refusal | None:
    """Why a file read may not go on, or ``None``: it needs the ``files`` grant."""
    if chat_only or FILES not in set(context_refs):
        return Refusal(
            "blocked",
            "Reading files was not allowed in this conversation (context reference 'files' "
            "not granted).",
        )
    return None


def write_refusal(chat_only: bool, mode: str) -> Refusal | None:
    """Why a file write may not even be proposed, or ``None``."""
    if chat_only or mode == PLAN:
        what = "Chat-only" if chat_only else "Plan mode"
        return Refusal("plan-mode", f"{what}: the agent may not write files in this conversation.")
    return None


def shell_refusal(chat_only: bool, mode: str, policy: str) -> Refusal | None:
    """Why a shell command may not even be asked for, or ``None``."""
    if policy != SHELL_ASK:
        return Refusal("not-permitted", "Agents may not run shell commands on this server.")
    if chat_only or mode == PLAN:
        what = "Chat-only" if chat_only else "Plan mode"
        return Refusal(
            "not-permitted", f"{what}: the agent may not run shell commands in this conversation."
        )
    return None


def is_our_tool(title: str | None, kind: str | None, names: Iterable[str], server: str) -> bool:
    """Whether an agent's permission request is for one of our own MCP tools.

    Those need no card of the agent's: our endpoint holds every call to the conversation's
    grants and mode itself (a card of its own in Ask before edits, a diff review always).
    Only the exact titles adapters give our tools count, and never a changing kind.
    """
    if not title or kind in CHANGING_KINDS:
        return False
    return any(title == form.format(s=server, n=name) for name in names for form in OUR_TOOL_TITLES)


def rejects_at_once(chat_only: bool, mode: str, kind: str | None) -> bool:
    """Whether an agent's own permission request is rejected without asking the person.

    Chat-only rejects every request; Plan rejects all but reading, searching and thinking
    (an unknown kind could be a write, so it is rejected too). Ask before edits and
    Autopilot reject nothing here: every request becomes a card.
    """
    if chat_only:
        return True
    return mode == PLAN and kind not in READ_ONLY_KINDS
