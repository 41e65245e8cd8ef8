"""The protocol's vocabulary, read from ``schemas/vocabulary.json`` (docs/protocol.md).

``vocabulary.json`` is the one machine-readable source of the names both sides of the
protocol use: refusal codes with their HTTP status and default text, the codes a page may
answer with, actions, tools, context references and entries, approval modes, kinds and
outcomes, review decisions, how a run ends and the run mark, and the bridge message types.
The tools a page serves and their invoke and abort actions come from their own spec files
instead (``manifests/tools/*.json``, docs/protocol.md section 14), which the vocabulary's
``tools`` and ``actions`` gain (:func:`with_page_tools`). The server reads its tables from
here, the lab extension gets types generated from the same files when it is built (the
generator merges them alike), and the bridge schemas reference the lists through
:func:`vocabulary_schema`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

VOCABULARY_PATH = Path(__file__).parents[1] / "schemas" / "vocabulary.json"
#: The spec files of the tools a page serves, one per tool (docs/protocol.md section 14).
PAGE_TOOLS_DIR = Path(__file__).parents[1] / "manifests" / "tools"
#: The ``$id`` under which the bridge schemas reference the vocabulary's enums.
VOCABULARY_SCHEMA_ID = "urn:jupyter-copilot:schema:vocabulary"


def with_page_tools(
    vocabulary: dict[str, Any], definitions: list[dict[str, Any]]
) -> dict[str, Any]:
    """``vocabulary`` with each page tool of ``definitions`` in ``tools`` (not read-only)
    and its invoke and abort actions in ``actions``, after the file's own entries.

    A name that ``vocabulary.json`` spells itself is an error: each has one source.
    """
    tools, actions = dict(vocabulary["tools"]), dict(vocabulary["actions"])
    for definition in definitions:
        name = definition["name"]
        if name in tools:
            raise ValueError(f"{name} is in vocabulary.json and has a spec file")
        tools[name] = {"readOnly": False}
        for kind in ("invoke", "abort"):
            action = definition[kind]["action"]
            if action in actions:
                raise ValueError(f"{action} is in vocabulary.json and in {name}'s spec file")
            actions[action] = {"kind": kind, "tool": name}
    return {**vocabulary, "tools": tools, "actions": actions}


def read_page_tools(folder: Path = PAGE_TOOLS_DIR) -> list[dict[str, Any]]:
    """The spec files of the tools a page serves, in the order of their file names."""
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))]


VOCABULARY: dict[str, Any] = with_page_tools(
    json.loads(VOCABULARY_PATH.read_text(encoding="utf-8")), read_page_tools()
)


def names(key: str) -> tuple[str, ...]:
    """The names of one vocabulary entry, in the file's order.

    A list gives its items, an object its keys (``refusalCodes``, ``actions``, ...).
    """
    value = VOCABULARY[key]
    if isinstance(value, dict):
        return tuple(value)
    if isinstance(value, list):
        return tuple(value)
    raise KeyError(f"{key} is not a list of names")


def enum_name(key: str) -> str:
    """The name of an entry's enum: the key without its plural ``s`` (``refusalCode``)."""
    return key[:-1]


def vocabulary_schema() -> dict[str, Any]:
    """The vocabulary's lists as a JSON Schema of enums, one ``$defs`` entry per list."""
    defs = {
        enum_name(key): {"enum": list(names(key))}
        for key, value in VOCABULARY.items()
        if not key.startswith("$") and isinstance(value, (list, dict))
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": VOCABULARY_SCHEMA_ID,
        "$defs": defs,
    }


PROTOCOL: int = VOCABULARY["protocol"]
REFUSAL_CODES = names("refusalCodes")
PAGE_CODES = frozenset(names("pageCodes"))
ACTIONS = names("actions")
TOOLS = names("tools")
READ_TOOLS = frozenset(t for t, d in VOCABULARY["tools"].items() if d["readOnly"])
WRITE_TOOLS = frozenset(t for t, d in VOCABULARY["tools"].items() if not d["readOnly"])
CONTEXT_REFS = names("contextRefs")
NOTEBOOK_REFS = tuple(r for r, d in VOCABULARY["contextRefs"].items() if d["notebook"])
CONTEXT_ENTRIES = names("contextEntries")
APPROVAL_MODES = names("approvalModes")
APPROVAL_OUTCOMES = names("approvalOutcomes")
REVIEW_DECISIONS = frozenset(names("reviewDecisions"))
FILE_REVIEW_DECISIONS = frozenset(names("fileReviewDecisions"))
RUN_STATUSES = names("runEndings")
#: The cell metadata path whose value ``false`` marks a cell never to be run by an agent.
RUN_MARK_KEYS = names("runMarkKeys")
PAGE_MESSAGE_TYPES = names("pageMessageTypes")
SERVER_MESSAGE_TYPES = names("serverMessageTypes")
