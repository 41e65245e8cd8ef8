"""The request bodies of the conversation API, checked; pure.

Every problem is a :class:`Refusal` ``invalid-input`` whose message names the field and the
rule, never the value (a message may hold anything the person typed).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..protocol.callers import APPROVAL_MODES, CONTEXT_REFS
from ..protocol.refusals import Refusal

#: The longest message a person may send, in characters.
MAX_MESSAGE_CHARS = 100_000
_ID_CHARS = 200


def _invalid(message: str) -> Refusal:
    return Refusal("invalid-input", message)


def _only(body: dict[str, Any], allowed: Iterable[str]) -> None:
    unknown = sorted(set(body) - set(allowed))
    if unknown:
        raise _invalid(f"Unknown fields: {', '.join(unknown)}.")


def context_refs(value: Any) -> list[str]:
    """A list of context references, in the documented order, without duplicates."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _invalid("'contextRefs' must be a list of strings.")
    unknown = [v for v in value if v not in CONTEXT_REFS]
    if unknown:
        raise _invalid(f"'contextRefs' may only hold {', '.join(CONTEXT_REFS)}.")
    return [ref for ref in CONTEXT_REFS if ref in value]


def mode(value: Any) -> str:
    """An approval mode."""
    if value not in APPROVAL_MODES:
        raise _invalid(f"'mode' must be one of {', '.join(APPROVAL_MODES)}.")
    return str(value)


@dataclass(frozen=True)
class Settings:
    """What a conversation is created or changed with; ``None`` leaves a field alone."""

    agent_id: str | None = None
    chat_only: bool | None = None
    context_refs: list[str] | None = None
    mode: str | None = None


def settings(body: dict[str, Any], agent_ids: Iterable[str]) -> Settings:
    """The body of ``POST conversations`` or ``PATCH conversations/<id>``."""
    _only(body, ("agentId", "chatOnly", "contextRefs", "mode"))
    agent_id = body.get("agentId")
    if agent_id is not None and (not isinstance(agent_id, str) or agent_id not in set(agent_ids)):
        raise _invalid("'agentId' is not one of the agents on offer (GET copilot/api/agents).")
    chat_only = body.get("chatOnly")
    if chat_only is not None and not isinstance(chat_only, bool):
        raise _invalid("'chatOnly' must be true or false.")
    return Settings(
        agent_id=agent_id,
        chat_only=chat_only,
        context_refs=context_refs(body["contextRefs"]) if "contextRefs" in body else None,
        mode=mode(body["mode"]) if "mode" in body else None,
    )


#: The most references one message may carry besides the attached cell.
MAX_REFERENCES = 8
#: The largest error a message may carry (name, value and traceback), in UTF-8 bytes; the
#: panel keeps the traceback within the context budget, this only bounds the request.
MAX_ERROR_BYTES = 262_144
#: The longest path of a referenced file, in characters.
_PATH_CHARS = 4096


@dataclass(frozen=True)
class Message:
    """One message of the person."""

    text: str
    page_id: str | None
    #: ``{"artifactId", "cellId", "expectedSourceHash"}`` of the attached cell, or ``None``.
    attachment: dict[str, str] | None
    #: What the person attached with ``@`` or Fix and Explain (docs/conversations.md, "Context
    #: chips"): ``{"kind": "cell" | "variable" | "file" | "error", ...}``, checked here.
    references: tuple[dict[str, Any], ...] = ()


def _cell_fields(item: dict[str, Any], what: str) -> dict[str, str]:
    keys = ("artifactId", "cellId", "expectedSourceHash")
    if not all(isinstance(item.get(k), str) and item[k] for k in keys) or any(
        len(item[k]) > _ID_CHARS for k in keys
    ):
        raise _invalid(f"{what} must hold artifactId, cellId and expectedSourceHash strings.")
    return {k: item[k] for k in keys}


def _string(item: dict[str, Any], key: str, what: str, limit: int) -> str:
    value = item.get(key)
    if not isinstance(value, str) or len(value) > limit:
        raise _invalid(f"{what}: '{key}' must be a string of at most {limit} characters.")
    return value


def reference(item: Any) -> dict[str, Any]:
    """One item of a message's ``references``, checked; unknown fields are refused."""
    what = "Each reference"
    if not isinstance(item, dict):
        raise _invalid(f"{what} must be an object with a 'kind'.")
    kind = item.get("kind")
    if kind == "cell":
        _only(item, ("kind", "artifactId", "cellId", "expectedSourceHash"))
        return {"kind": kind, **_cell_fields(item, "A cell reference")}
    if kind == "variable":
        _only(item, ("kind", "name"))
        return {"kind": kind, "name": _string(item, "name", "A variable reference", _ID_CHARS)}
    if kind == "file":
        _only(item, ("kind", "path"))
        path = _string(item, "path", "A file reference", _PATH_CHARS)
        if not path.strip("/"):
            raise _invalid("A file reference must name a file.")
        return {"kind": kind, "path": path}
    if kind == "error":
        _only(
            item,
            (
                "kind",
                "artifactId",
                "cellId",
                "expectedSourceHash",
                "ename",
                "evalue",
                "traceback",
                "omitted",
            ),
        )
        cell = _cell_fields(item, "An error reference")
        error = {
            key: _string(item, key, "An error reference", MAX_ERROR_BYTES)
            for key in ("ename", "evalue", "traceback")
        }
        if sum(len(v.encode("utf-8", "surrogatepass")) for v in error.values()) > MAX_ERROR_BYTES:
            raise Refusal("over-budget", "The attached error is too large to send.")
        omitted = item.get("omitted")
        if omitted is not None and not (
            isinstance(omitted, dict)
            and set(omitted) <= {"reason", "tracebackBytes", "budgetBytes", "linesOmitted"}
            and omitted.get("reason") == "over-budget"
            and all(isinstance(v, int) for k, v in omitted.items() if k != "reason")
        ):
            raise _invalid(
                "An error reference's 'omitted' must be null or "
                '{"reason": "over-budget", "tracebackBytes", "budgetBytes", "linesOmitted"}.'
            )
        return {"kind": kind, **cell, **error, "omitted": omitted}
    raise _invalid(f"{what}'s 'kind' must be cell, variable, file or error.")


def message(body: dict[str, Any]) -> Message:
    """The body of ``POST conversations/<id>/messages``."""
    _only(body, ("text", "pageId", "attachment", "references"))
    text = body.get("text")
    if not isinstance(text, str) or not text.strip():
        raise _invalid("'text' must be a non-empty string.")
    if len(text) > MAX_MESSAGE_CHARS:
        raise _invalid(f"'text' is longer than {MAX_MESSAGE_CHARS} characters.")
    page_id = body.get("pageId")
    if page_id is not None and (not isinstance(page_id, str) or len(page_id) > _ID_CHARS):
        raise _invalid("'pageId' must be a string.")
    attachment = body.get("attachment")
    if attachment is not None:
        keys = ("artifactId", "cellId", "expectedSourceHash")
        if (
            not isinstance(attachment, dict)
            or set(attachment) != set(keys)
            or not all(isinstance(attachment[k], str) and attachment[k] for k in keys)
            or any(len(attachment[k]) > _ID_CHARS for k in keys)
        ):
            raise _invalid(
                "'attachment' must be null or {artifactId, cellId, expectedSourceHash} strings."
            )
    references = body.get("references")
    if references is None:
        references = []
    if not isinstance(references, list) or len(references) > MAX_REFERENCES:
        raise _invalid(f"'references' must be a list of at most {MAX_REFERENCES} items.")
    return Message(text, page_id, attachment, tuple(reference(r) for r in references))


@dataclass(frozen=True)
class Decision:
    """A person's answer to an approval card: allow, deny, or one of the agent's options."""

    allow: bool | None = None
    option_id: str | None = None


def decision(body: Any) -> Decision:
    """``{"decision": "allow" | "deny"}`` or ``{"optionId": "..."}``."""
    if not isinstance(body, dict):
        body = {}
    if set(body) == {"decision"} and body["decision"] in ("allow", "deny"):
        return Decision(allow=body["decision"] == "allow")
    if set(body) == {"optionId"}:
        option = body["optionId"]
        if isinstance(option, str) and 0 < len(option) <= _ID_CHARS:
            return Decision(option_id=option)
    raise _invalid('The body must be {"decision": "allow" | "deny"} or {"optionId": "<id>"}.')


def file_decision(body: dict[str, Any]) -> str:
    """``{"decision": "keep" | "undo"}`` on a file review."""
    if set(body) != {"decision"} or body["decision"] not in ("keep", "undo"):
        raise _invalid('The body must be {"decision": "keep" | "undo"}.')
    return str(body["decision"])
