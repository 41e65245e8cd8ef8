"""Pages of cells for ``notebook_read_cells``: every page within the byte budget.

Pure functions. The page reports a run of raw cells from its live model (and the id of the
cell after them); :func:`build_page` keeps as many as fit the budget, measured exactly as the
answer is serialized. A cell that cannot fit even alone comes back as metadata with a
reason; source is never cut.
"""

from __future__ import annotations

import re
from typing import Any

from ..protocol.refusals import Refusal
from .context import entry_size, source_hash

#: Cursors are ``<artifactId>/<cellId>``: opaque to callers, readable in a bug report.
_CURSOR = re.compile(r"^(?P<artifact>[^/]{1,128})/(?P<cell>[^/]{1,128})$")


def make_cursor(artifact_id: str, cell_id: str) -> str:
    """The cursor that starts a page at ``cell_id``."""
    return f"{artifact_id}/{cell_id}"


def parse_cursor(cursor: str) -> tuple[str, str]:
    """Split a cursor into ``(artifactId, cellId)``, refusing anything else."""
    match = _CURSOR.match(cursor)
    if match is None:
        raise Refusal(
            "invalid-input", "The cursor is not one this server gave out; start from the top."
        )
    return match["artifact"], match["cell"]


def cell_entry(index: int, cell: dict[str, Any], include_outputs: bool) -> dict[str, Any]:
    """A cell as a page lists it, with its complete source and hash."""
    entry: dict[str, Any] = {
        "index": index,
        "cellId": cell["cellId"],
        "cellType": cell["cellType"],
        "source": cell["source"],
        "expectedSourceHash": source_hash(cell["source"]),
    }
    if include_outputs and cell["cellType"] == "code":
        entry["outputs"] = cell.get("outputs", [])
    return entry


def _fallbacks(entry: dict[str, Any], budget: int) -> list[dict[str, Any]]:
    """Smaller forms of an entry that does not fit alone: without outputs, then metadata."""
    smaller: list[dict[str, Any]] = []
    if "outputs" in entry:
        outputs_bytes = entry_size(entry["outputs"])
        without = {k: v for k, v in entry.items() if k != "outputs"}
        without["outputsOmitted"] = {
            "reason": "over-budget",
            "outputsBytes": outputs_bytes,
            "budgetBytes": budget,
        }
        smaller.append(without)
    metadata = {k: entry[k] for k in ("index", "cellId", "cellType")}
    metadata["omitted"] = {
        "reason": "over-budget",
        "sourceBytes": len(entry["source"].encode("utf-8")),
        "budgetBytes": budget,
    }
    smaller.append(metadata)
    return smaller


def _unencodable(entry: dict[str, Any], budget: int) -> dict[str, Any]:
    metadata = {k: entry[k] for k in ("index", "cellId", "cellType")}
    metadata["omitted"] = {"reason": "unencodable", "sourceBytes": None, "budgetBytes": budget}
    return metadata


def build_page(
    raw: dict[str, Any], artifact_id: str, budget: int, include_outputs: bool
) -> dict[str, Any]:
    """Build one ``notebook_read_cells`` page from the page's read-cells answer.

    The answer, serialized compactly as UTF-8 JSON, is at most ``budget`` bytes. Cells are
    taken in order while the page still fits; ``nextCursor`` starts the next page at the
    first cell left out, and is null after the last cell.
    """
    cells = raw["cells"]
    start = raw["startIndex"]
    ids_after = [c["cellId"] for c in cells[1:]] + [raw.get("nextCellId")]

    def skeleton(next_id: str | None) -> dict[str, Any]:
        return {
            "artifactId": artifact_id,
            "cellCount": raw["cellCount"],
            "startIndex": start,
            "budgetBytes": budget,
            "nextCursor": make_cursor(artifact_id, next_id) if next_id else None,
            "cells": [],
        }

    taken: list[dict[str, Any]] = []
    taken_bytes = 0
    for offset, cell in enumerate(cells):
        entry = cell_entry(start + offset, cell, include_outputs)
        if entry["expectedSourceHash"] is None:
            entry = _unencodable(entry, budget)
        next_id = ids_after[offset]
        candidates = [entry] if taken else [entry, *_fallbacks(entry, budget)]
        if "omitted" in entry:
            candidates = [entry]
        fitted = None
        for candidate in candidates:
            size = entry_size(candidate)
            # One comma between list items; the skeleton's "[]" holds the list.
            total = entry_size(skeleton(next_id)) + taken_bytes + size + len(taken)
            if total <= budget:
                fitted = (candidate, size)
                break
        if fitted is None and not taken:
            # Metadata always fits the smallest budget allowed; never return an empty page.
            fitted = (candidates[-1], entry_size(candidates[-1]))
        if fitted is None:
            # The page is full: this cell starts the next one.
            page = skeleton(cell["cellId"])
            page["cells"] = taken
            return page
        taken.append(fitted[0])
        taken_bytes += fitted[1]
    page = skeleton(ids_after[-1] if cells else None)
    page["cells"] = taken
    return page


def served_cells(page: dict[str, Any]) -> list[dict[str, Any]]:
    """The cells of a page that carry source and a hash (for the served-type record)."""
    return [c for c in page["cells"] if "omitted" not in c]
