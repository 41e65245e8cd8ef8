"""Context entries and the byte budget, as pure functions."""

from __future__ import annotations

from jupyter_copilot.page.context import (
    SELECTED_CELL_DESCRIPTION,
    ServedCells,
    build_context,
    entry_size,
    selected_cell_entry,
    source_hash,
)
from tests.pages import context_answer


def active(source: str | None = "x = 1\n", **kwargs) -> dict:
    return context_answer(source=source, **kwargs)["activeNotebook"]


def test_one_selected_cell_gives_view_state_and_the_whole_cell() -> None:
    entries = build_context(active("x = 1\n"), "art-1", may_write=True, budget_bytes=8192)
    assert [e["name"] for e in entries] == ["notebook_view_state", "notebook_selected_cell"]
    view, cell = entries
    assert view["value"] == {
        "artifactId": "art-1",
        "viewType": "notebook",
        "permissionMode": "edit",
        "selectedCellCount": 1,
        "kernelLanguage": "python",
    }
    assert cell["value"] == {
        "artifactId": "art-1",
        "cellId": "c1",
        "cellType": "code",
        "language": "python",
        "source": "x = 1\n",
        "expectedSourceHash": source_hash("x = 1\n"),
    }
    assert cell["reference"]["label"] == "Selected python cell"
    assert cell["description"] == SELECTED_CELL_DESCRIPTION


def test_permission_is_edit_only_when_page_and_server_both_allow_it() -> None:
    def mode(writable: bool, may_write: bool) -> str:
        entries = build_context(
            active(writable=writable), "a", may_write=may_write, budget_bytes=8192
        )
        return entries[0]["value"]["permissionMode"]

    assert mode(True, True) == "edit"
    assert mode(False, True) == "read-only"
    assert mode(True, False) == "read-only"


def test_several_or_no_selected_cells_give_no_cell_entry() -> None:
    for selected in ([], ["c1", "c2"]):
        entries = build_context(
            active(None, selected=selected), "a", may_write=True, budget_bytes=8192
        )
        assert [e["name"] for e in entries] == ["notebook_view_state"]
        assert entries[0]["value"]["selectedCellCount"] == len(selected)


def test_no_notebook_or_unknown_artifact_gives_no_entries() -> None:
    assert build_context(None, "a", may_write=True, budget_bytes=8192) == []
    assert build_context(active(), None, may_write=True, budget_bytes=8192) == []


def test_an_entry_exactly_at_the_budget_keeps_its_source() -> None:
    cell = {"cellId": "c1", "cellType": "code", "source": "y" * 100}
    size = entry_size(selected_cell_entry(cell, "a", "python", 10**6))
    assert selected_cell_entry(cell, "a", "python", size)["value"]["source"] == "y" * 100
    over = selected_cell_entry(cell, "a", "python", size - 1)
    assert "source" not in over["value"] and "expectedSourceHash" not in over["value"]
    assert over["omitted"] == {"reason": "over-budget", "sourceBytes": 100, "budgetBytes": size - 1}


def test_over_budget_source_is_omitted_whole_never_truncated() -> None:
    source = "é" * 5000  # 10,000 UTF-8 bytes
    entries = build_context(active(source), "a", may_write=True, budget_bytes=8192)
    cell = entries[1]
    assert cell["omitted"] == {"reason": "over-budget", "sourceBytes": 10000, "budgetBytes": 8192}
    assert "é" not in repr(cell)
    assert entry_size(cell) < 8192
    assert cell["value"]["cellId"] == "c1"


def test_budget_counts_utf8_bytes_of_the_whole_entry() -> None:
    cell = {"cellId": "c1", "cellType": "code", "source": "🐍" * 10}
    entry = selected_cell_entry(cell, "a", "python", 10**6)
    assert entry_size(entry) == len(
        __import__("json").dumps(entry, separators=(",", ":"), ensure_ascii=False).encode()
    )
    assert entry_size(entry) > 40 + len(str(entry["description"]))


def test_unencodable_source_is_never_attached() -> None:
    entries = build_context(active("a\ud800b"), "a", may_write=True, budget_bytes=8192)
    cell = entries[1]
    assert cell["omitted"]["reason"] == "unencodable"
    assert cell["omitted"]["sourceBytes"] is None
    assert "source" not in cell["value"]


def test_labels_name_the_cell_kind_and_never_the_source() -> None:
    for cell_type, label in (("markdown", "Selected markdown cell"), ("raw", "Selected raw cell")):
        entries = build_context(
            active("# secret title", cell_type=cell_type), "a", may_write=True, budget_bytes=8192
        )
        assert entries[1]["reference"]["label"] == label
        assert "secret" not in entries[1]["reference"]["label"]


def test_the_first_type_served_for_a_cell_and_hash_is_the_expected_one() -> None:
    served = ServedCells(capacity=2)
    served.served("nb", "c1", "sha256:a", "code")
    # The panel's refresh after the person changed the type serves it again.
    served.served("nb", "c1", "sha256:a", "markdown")
    assert served.type_of("nb", "c1", "sha256:a") == "code"
    served.served("nb", "c2", "sha256:b", "raw")
    served.served("nb", "c3", "sha256:c", "code")
    # Bounded: the least recently served entry goes first.
    assert served.type_of("nb", "c1", "sha256:a") is None
    assert served.type_of("nb", "c2", "sha256:b") == "raw"
