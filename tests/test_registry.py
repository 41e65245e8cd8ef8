"""The registry: shipped manifests validate, duplicates refuse to load, the URL matcher."""

from __future__ import annotations

import copy
import json

import pytest

from jupyter_copilot.protocol.registry import (
    MANIFEST_DIR,
    RegistryError,
    build_registry,
    first_error,
    load_registry,
    matches_page,
)
from tests.conftest import load_json
from tests.node_harness import run_node

TABLE = load_json("matcher_table.json")
PAGE = json.loads((MANIFEST_DIR / "pages" / "notebook-editor.json").read_text())
TOOL = json.loads((MANIFEST_DIR / "tools" / "notebook_edit_cell.json").read_text())


def test_shipped_registry_holds_the_contract_names() -> None:
    registry = load_registry()
    assert [p["name"] for p in registry.pages] == ["jupyter_copilot.notebook-editor"]
    assert [p["pageType"] for p in registry.pages] == ["notebook-editor"]
    assert [t["name"] for t in registry.tools] == [
        "notebook_edit_cell",
        "notebook_insert_cell",
        "notebook_run_cell",
    ]
    assert registry.actions == {
        "jupyter_copilot.notebook.get-context",
        "jupyter_copilot.notebook.edit-cell.invoke",
        "jupyter_copilot.notebook.edit-cell.abort",
        "jupyter_copilot.notebook.insert-cell.invoke",
        "jupyter_copilot.notebook.insert-cell.abort",
        "jupyter_copilot.notebook.run-cell.invoke",
        "jupyter_copilot.notebook.run-cell.abort",
    }


def test_tool_parameters_are_a_usable_json_schema() -> None:
    import jsonschema

    schema = TOOL["parameters"]
    good = {
        "artifactId": "a",
        "cellId": "c",
        "expectedSourceHash": "sha256:" + "0" * 64,
        "newSource": "x",
    }
    jsonschema.validate(good, schema)
    for bad in (
        {**good, "extra": 1},
        {**good, "expectedSourceHash": "md5:x"},
        {k: v for k, v in good.items() if k != "newSource"},
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


@pytest.mark.parametrize(
    ("what", "change"),
    [
        ("page name", lambda p, t: p.update(pageType="other")),
        ("pageType", lambda p, t: p.update(name="jupyter_copilot.other")),
        ("action", lambda p, t: p.update(name="jupyter_copilot.other", pageType="other")),
    ],
)
def test_a_duplicate_page_refuses_to_load_and_names_it(what: str, change) -> None:
    second = copy.deepcopy(PAGE)
    change(second, None)
    with pytest.raises(RegistryError, match=f"duplicate {what}") as err:
        build_registry([("a.json", PAGE), ("b.json", second)], [("t.json", TOOL)])
    assert "a.json" in str(err.value) and "b.json" in str(err.value)


def test_a_duplicate_tool_name_refuses_to_load() -> None:
    second = copy.deepcopy(TOOL)
    second["invoke"]["action"] = "jupyter_copilot.other.invoke"
    second["abort"]["action"] = "jupyter_copilot.other.abort"
    with pytest.raises(RegistryError, match="duplicate tool name 'notebook_edit_cell'"):
        build_registry([("p.json", PAGE)], [("t1.json", TOOL), ("t2.json", second)])


def test_a_tool_action_that_repeats_a_page_action_refuses_to_load() -> None:
    second = copy.deepcopy(TOOL)
    second["name"] = "other_tool"
    second["invoke"]["action"] = PAGE["getContext"]["action"]
    second["abort"]["action"] = "jupyter_copilot.other.abort"
    with pytest.raises(RegistryError, match="duplicate action"):
        build_registry([("p.json", PAGE)], [("t1.json", TOOL), ("t2.json", second)])


def test_an_invalid_manifest_refuses_to_load_with_the_reason() -> None:
    broken = {k: v for k, v in PAGE.items() if k != "getContext"}
    with pytest.raises(RegistryError, match="getContext"):
        build_registry([("p.json", broken)], [])
    assert first_error("tool-definition", {**TOOL, "invoke": {"action": "x"}}) is not None


def test_a_matcher_that_does_not_compile_refuses_to_load() -> None:
    with pytest.raises(RegistryError, match="does not compile"):
        build_registry([("p.json", {**PAGE, "match": "^(unclosed$"})], [])


def test_matcher_table_covers_the_contract_cases() -> None:
    assert len(TABLE["accept"]) + len(TABLE["reject"]) >= 25
    for required in (
        "lab",
        "lab/tree/x.py",
        "tree/",
        "edit/x.ipynb",
        "lab/tree/x.ipynb.bak",
        "api/contents/x.ipynb",
    ):
        assert required in TABLE["reject"]
    prefixes = {
        u.split("/")[0] + ("/workspaces" if "/workspaces/" in u else "") for u in TABLE["accept"]
    }
    assert prefixes == {"lab", "lab/workspaces", "doc", "doc/workspaces", "notebooks"}


@pytest.mark.parametrize("path", TABLE["accept"])
def test_matcher_accepts_notebook_pages(path: str) -> None:
    assert matches_page(PAGE["match"], path)


@pytest.mark.parametrize("path", TABLE["reject"])
def test_matcher_rejects_everything_else(path: str) -> None:
    assert not matches_page(PAGE["match"], path)


def test_javascript_reads_the_matcher_exactly_as_python_does() -> None:
    script = """
const { compileMatcher, matchesPage } = await import(LIB + '/matcher.js');
const re = compileMatcher(input.match);
process.stdout.write(JSON.stringify(input.paths.map(p => matchesPage(re, p))));
"""
    paths = TABLE["accept"] + TABLE["reject"]
    got = run_node(script, {"match": PAGE["match"], "paths": paths})
    assert got == [matches_page(PAGE["match"], p) for p in paths]
    assert got == [True] * len(TABLE["accept"]) + [False] * len(TABLE["reject"])
