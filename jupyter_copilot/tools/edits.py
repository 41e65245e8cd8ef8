"""The proposal tools' pure parts: input checks, the live-document checks and call memory.

Nothing here does I/O. :class:`ProposalCalls` remembers every invoke of a proposal tool by
callId (docs/protocol.md section 4.2) so that a repeat returns the first result, an abort
finds its call and a Keep can be judged; :class:`~.proposals.ProposalTool` does the talking.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..page.context import source_hash
from ..protocol.refusals import Refusal
from ..protocol.vocabulary import REVIEW_DECISIONS

#: How long a call that is over is remembered (docs/protocol.md section 4.2: at least 10 minutes).
CALL_MEMORY_SECONDS = 11 * 60

#: Review decisions a page may report (docs/protocol.md section 6; vocabulary ``reviewDecisions``).
DECISIONS = REVIEW_DECISIONS


#: Keywords :func:`simple_object_check` understands; descriptions do not constrain.
_OBJECT_KEYWORDS = frozenset({"type", "additionalProperties", "required", "properties"})
_STRING_KEYWORDS = frozenset({"type", "pattern", "description", "title"})


def simple_object_check(schema: dict[str, Any]) -> Callable[[Any], bool] | None:
    """A fast yes/no check for a flat object schema of string properties, or None.

    Tool parameters are such schemas. jsonschema's general machinery costs about 0.2 ms a
    call; this check answers the common, valid case in microseconds, and the caller asks
    jsonschema only when it says no (for the message). None when the schema uses anything
    else, so that jsonschema always decides.
    """
    props = schema.get("properties", {})
    if (
        not set(schema) <= _OBJECT_KEYWORDS | {"description", "title"}
        or schema.get("type") != "object"
        or schema.get("additionalProperties", True) not in (True, False)
        or not all(
            isinstance(p, dict) and set(p) <= _STRING_KEYWORDS and p.get("type") == "string"
            for p in props.values()
        )
    ):
        return None
    closed = schema.get("additionalProperties") is False
    required = frozenset(schema.get("required", ()))
    # jsonschema applies `pattern` with re.search, so this does too.
    patterns = {k: re.compile(p["pattern"]) for k, p in props.items() if "pattern" in p}

    def check(data: Any) -> bool:
        if not isinstance(data, dict) or not required <= data.keys():
            return False
        if closed and not data.keys() <= props.keys():
            return False
        for key, value in data.items():
            if key in props and not isinstance(value, str):
                return False
            pattern = patterns.get(key)
            if pattern is not None and pattern.search(value) is None:
                return False
        return True

    return check


def check_new_source(new_source: str, budget_bytes: int, field: str = "newSource") -> int:
    """Step 5: the proposal's size. Returns its UTF-8 size in bytes.

    ``field`` names the input that holds the source, for the messages.
    """
    try:
        size = len(new_source.encode("utf-8"))
    except UnicodeEncodeError:
        raise Refusal("invalid-input", f"{field} is not valid Unicode text.") from None
    if size > budget_bytes:
        raise Refusal(
            "over-budget",
            f"The proposed source is {size} bytes; the limit is {budget_bytes} bytes.",
        )
    if size == 0:
        raise Refusal("invalid-input", f"{field} is empty; give the complete new source.")
    return size


def check_live_cell(
    cell: dict[str, Any] | None, expected_type: str | None, expected_hash: str
) -> None:
    """Steps 6 and 7 against a cell of a live document (real-time collaboration).

    ``cell`` is the cell as plain data (``cell_type``, ``source``, ``metadata``) or None
    when the document has no cell with that id.
    """
    if cell is None:
        raise Refusal("cell-not-found", "The notebook has no cell with that cellId.")
    metadata = cell.get("metadata") or {}
    if metadata.get("editable") is False:
        raise Refusal("cell-locked", "The cell is locked against editing.")
    if expected_type is not None and cell.get("cell_type") != expected_type:
        raise Refusal("cell-type-mismatch", "The cell is no longer of the type you read.")
    if live_source_hash(cell) != expected_hash:
        raise Refusal(
            "stale-source",
            "The cell changed since you read it; read the context again and retry.",
        )


def live_source_hash(cell: dict[str, Any]) -> str | None:
    """The hash of a live document cell's complete source (a list of lines is joined)."""
    source = cell.get("source", "")
    if isinstance(source, list):
        source = "".join(source)
    return source_hash(source)


def input_fingerprint(data: dict[str, Any]) -> bytes:
    """A digest of a call's input, to tell a repeat from a different call with the same id."""
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def edit_result(artifact_id: str, cell_id: str, source_hash_after: str | None) -> dict[str, Any]:
    """The success result of ``edit-cell.invoke`` (docs/protocol.md section 4.2)."""
    return {
        "success": True,
        "artifactId": artifact_id,
        "cellId": cell_id,
        "operation": "whole-cell-diff",
        "diffReviewOpened": True,
        "sourceHashAfter": source_hash_after,
    }


#: Rebuilds a success result from (artifactId, cellId, sourceHashAfter) of a settled call.
ResultOf = Callable[[str, str, "str | None"], dict[str, Any]]


@dataclass
class ProposalCall:
    """One invoke of a proposal tool, from its arrival to the person's decision."""

    call_id: str
    fingerprint: bytes
    #: Opaque id for events; the client's callId never leaves this object.
    ref: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    started: float = field(default_factory=time.monotonic)
    outcome: asyncio.Future[dict[str, Any]] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    #: Set when an abort arrives; wakes an invoke that is still waiting for its page.
    abort_requested: asyncio.Event = field(default_factory=asyncio.Event)
    #: The page session the review was sent to, and the notebook's artifactId.
    page: Any = None
    artifact_id: str | None = None
    review_open: bool = False
    opened_at: float | None = None
    decision: str | None = None
    #: Milliseconds the server spent on its own checks, events left out.
    check_ms: float = 0.0
    aborted: bool = False
    finished_at: float | None = None

    @property
    def decided(self) -> bool:
        """Whether the review ended (a decision, or an abort)."""
        return self.decision is not None or self.aborted


class Settled(NamedTuple):
    """What is kept of a call that is over: enough to answer a repeat, nothing more.

    Strings, bytes and a float: no traceback, request or source is kept.
    """

    fingerprint: bytes
    settled_at: float
    #: The refusal code, or None for a review that was opened.
    code: str | None
    #: The refusal message, or the artifactId.
    first: str
    #: The cellId and the hash after the edit, for a review that was opened ("" and None
    #: for a tool whose result has neither).
    cell_id: str
    source_hash_after: str | None
    #: The whole first result, for a tool whose result cannot be rebuilt (a run's outputs).
    result: dict[str, Any] | None = None

    def outcome(self, result_of: ResultOf | None = edit_result) -> dict[str, Any]:
        """The first call's result (kept whole, or rebuilt by ``result_of``), or its refusal
        raised again."""
        if self.code is not None:
            raise Refusal(self.code, self.first)
        if self.result is not None:
            return dict(self.result)
        # Only a tool that rebuilds its results keeps none whole.
        assert result_of is not None
        return result_of(self.first, self.cell_id, self.source_hash_after)


class ProposalCalls:
    """Every call of one proposal tool by callId: live ones whole, those that are over as
    :class:`Settled` for :data:`CALL_MEMORY_SECONDS`.

    A call is live while its invoke runs and while its review is open and undecided; only
    live calls can be aborted, kept or decided, so :meth:`get` finds only them.
    ``result_of`` rebuilds a success result from what :class:`Settled` keeps; None keeps
    each success result whole (a run's outputs cannot be rebuilt from ids and a hash).
    """

    def __init__(
        self,
        memory_seconds: float = CALL_MEMORY_SECONDS,
        result_of: ResultOf | None = edit_result,
    ) -> None:
        self._memory = memory_seconds
        self._result_of = result_of
        self._keep_results = result_of is None
        self._live: dict[str, ProposalCall] = {}
        #: In the order they settled, so the oldest are forgotten from the front.
        self._settled: dict[str, Settled] = {}

    def get(self, call_id: str) -> ProposalCall | None:
        """The live call with this id, if any."""
        return self._live.get(call_id)

    def start(self, call_id: str, data: dict[str, Any]) -> ProposalCall | None:
        """A new live call for ``call_id``; None on a repeat, whose outcome is
        :meth:`first_outcome`. A repeat with different data is ``invalid-input``."""
        self._forget_old()
        fingerprint = input_fingerprint(data)
        seen = self._live.get(call_id) or self._settled.get(call_id)
        if seen is not None:
            if seen.fingerprint != fingerprint:
                raise Refusal(
                    "invalid-input",
                    "This callId was already used for a different call; use a new callId.",
                )
            return None
        call = ProposalCall(call_id=call_id, fingerprint=fingerprint)
        self._live[call_id] = call
        return call

    async def first_outcome(self, call_id: str) -> dict[str, Any]:
        """The result of the first call with this id, waiting for it if it still runs."""
        live = self._live.get(call_id)
        if live is not None:
            return await asyncio.shield(live.outcome)
        return self._settled[call_id].outcome(self._result_of)

    def finish(self, call: ProposalCall, outcome: dict[str, Any] | Refusal) -> None:
        """The call's invoke answered ``outcome`` (its review may still be open)."""
        if isinstance(outcome, Refusal):
            # A fresh refusal: the raised one holds the request in its traceback.
            call.outcome.set_exception(Refusal(outcome.code, outcome.message))
            call.outcome.exception()  # retrieved: repeats re-raise it, nobody else waits
        else:
            call.outcome.set_result(outcome)
        call.finished_at = time.monotonic()
        self.settle(call)

    def settle(self, call: ProposalCall) -> None:
        """Keep only a :class:`Settled` record once the call is over: answered, and its
        review (if one opened) decided. Calling it early or twice does nothing."""
        over = call.finished_at is not None and (not call.review_open or call.decided)
        if not over or self._live.get(call.call_id) is not call:
            return
        del self._live[call.call_id]
        error = call.outcome.exception()
        if isinstance(error, Refusal):
            record = Settled(call.fingerprint, time.monotonic(), error.code, error.message, "", "")
        else:
            result = call.outcome.result()
            record = Settled(
                call.fingerprint,
                time.monotonic(),
                None,
                sys.intern(result.get("artifactId", "")),
                sys.intern(result.get("cellId", "")),
                result.get("sourceHashAfter"),
                result if self._keep_results else None,
            )
        self._settled[call.call_id] = record

    def open_reviews(self) -> list[ProposalCall]:
        """Calls whose review is open and undecided."""
        return [c for c in self._live.values() if c.review_open and not c.decided]

    def __len__(self) -> int:
        return len(self._live) + len(self._settled)

    def _forget_old(self) -> None:
        cutoff = time.monotonic() - self._memory
        while self._settled:
            oldest = next(iter(self._settled))
            if self._settled[oldest].settled_at >= cutoff:
                return
            del self._settled[oldest]
