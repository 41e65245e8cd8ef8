"""The tool registry (``toolspecs.py``): every spec is complete, and Python spells each tool
name in one place (docs/protocol.md section 14, "Adding a tool")."""

from __future__ import annotations

import ast
import copy
import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

import jupyter_copilot
from jupyter_copilot.admin.switches import FEATURE, TOOLS, UNGATED
from jupyter_copilot.mcp.tools import CopilotTools, ToolsHost
from jupyter_copilot.protocol import vocabulary
from jupyter_copilot.protocol.registry import load_registry
from jupyter_copilot.tools import toolspecs
from jupyter_copilot.tools.service import ToolService
from jupyter_copilot.tools.spec import Card, PageTool, ToolSpec, tool_action

PACKAGE = Path(jupyter_copilot.__file__).parent
#: Where Python may spell a tool name or a tool's action: the registry, and the demo agent,
#: an MCP client in its own process that calls the tools by name as any agent does.
ALLOWED = {PACKAGE / "tools" / "toolspecs.py", *(PACKAGE / "demo_agent").glob("*.py")}
#: The members of a tool's service, from the protocol that :class:`ProposalTool` composes.
SERVICE_MEMBERS = sorted(
    {n for n, v in vars(ToolService).items() if callable(v) and not n.startswith("_")}
    | set(ToolService.__annotations__)
)


def spec_problems(spec: ToolSpec) -> list[str]:
    """What a spec lacks or gets wrong; empty for a complete spec."""
    problems = []
    if spec.name not in vocabulary.TOOLS:
        problems.append(f"{spec.name!r} is not a tool of schemas/vocabulary.json")
    if not spec.title:
        problems.append("no MCP title")
    if spec.gate not in (UNGATED, FEATURE, TOOLS):
        problems.append(f"gate {spec.gate!r} is none of the switches' gates")
    page = spec.page
    if page is None:
        return problems
    if spec.gate != UNGATED:
        problems.append("a page's tool checks its input first: its MCP gate must be UNGATED")
    for kind in ("invoke", "abort"):
        try:
            tool_action(spec.name, kind)
        except KeyError:
            problems.append(f"the vocabulary has no {kind} action for it")
    if page.card.kind not in vocabulary.names("approvalKinds"):
        problems.append(f"card kind {page.card.kind!r} is not an approval kind")
    if not page.card.description:
        problems.append("the card says nothing")
    for event in ("edit_invoked", "edit_refused", "edit_aborted"):
        schema = yaml.safe_load((PACKAGE / "events" / f"{event}.yaml").read_text("utf-8"))
        if page.operation not in schema["properties"]["operation"]["enum"]:
            problems.append(f"operation {page.operation!r} is not in events/{event}.yaml")
    try:
        # What the server lends a service is only stored when it is built.
        service = page.service(None, None)  # type: ignore[arg-type]
    except TypeError:
        problems.append("its service is not built from (host, telemetry)")
    else:
        lacking = [m for m in SERVICE_MEMBERS if not hasattr(service, m)]
        if lacking:
            problems.append(f"its service lacks {', '.join(lacking)}")
    return problems


class _HalfService:
    def __init__(self, host: Any, telemetry: Any) -> None:
        self.settled_result = None

    def check(self) -> None:
        """Only one of the checks."""


def test_every_shipped_spec_is_complete() -> None:
    assert {s.name: spec_problems(s) for s in toolspecs.TOOL_SPECS} == {
        s.name: [] for s in toolspecs.TOOL_SPECS
    }
    # Each vocabulary tool has one spec (the page tools' come from their spec files).
    names = [s.name for s in toolspecs.TOOL_SPECS]
    assert sorted(names) == sorted(vocabulary.TOOLS) and len(set(names)) == len(names)


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"name": "notebook_delete_cell"}, "is not a tool of schemas/vocabulary.json"),
        ({"title": ""}, "no MCP title"),
        ({"gate": "sometimes"}, "none of the switches' gates"),
        ({"gate": TOOLS}, "its MCP gate must be UNGATED"),
        ({"card": Card("delete", "Delete a cell")}, "is not an approval kind"),
        ({"card": Card("edit", "")}, "the card says nothing"),
        ({"operation": "delete-cell"}, "is not in events/edit_invoked.yaml"),
        ({"service": object}, "its service is not built from (host, telemetry)"),
        (
            {"service": _HalfService},
            "its service lacks answered, card_details, page_timeout, permitted, proposed_source,"
            " request_data",
        ),
    ],
)
def test_an_incomplete_spec_is_found_out(change: dict[str, Any], problem: str) -> None:
    spec = toolspecs.PAGE_TOOLS[0]
    assert spec.page is not None
    page_fields = {
        k: v for k, v in change.items() if k in {f.name for f in dataclasses.fields(PageTool)}
    }
    spec_fields = {k: v for k, v in change.items() if k not in page_fields}
    broken = dataclasses.replace(
        spec, page=dataclasses.replace(spec.page, **page_fields), **spec_fields
    )
    assert any(problem in p for p in spec_problems(broken)), spec_problems(broken)


def test_every_tool_has_a_definition_and_a_call() -> None:
    definitions = toolspecs.mcp_definitions(load_registry())
    assert [d["name"] for d in definitions] == [s.name for s in toolspecs.TOOL_SPECS]
    assert sorted(d["name"] for d in definitions) == sorted(vocabulary.TOOLS)
    for spec, definition in zip(toolspecs.TOOL_SPECS, definitions, strict=True):
        assert definition["description"] and definition["inputSchema"]["type"] == "object"
        assert definition["readOnly"] is (spec.name in vocabulary.READ_TOOLS)
    listed = json.loads(toolspecs.MCP_DEFINITIONS_PATH.read_text("utf-8"))
    assert {d["name"] for d in listed}.isdisjoint(s.name for s in toolspecs.NOTEBOOK_TOOLS)
    # A tool no page serves needs its reader in CopilotTools: building the list finds out.
    proposals: Any = {s.name: object() for s in toolspecs.NOTEBOOK_TOOLS}
    host = ToolsHost(switches=None, skills=lambda: None)  # type: ignore[arg-type]
    tools = CopilotTools(definitions, None, proposals, host)  # type: ignore[arg-type]
    assert [d["name"] for d in tools.definitions] == [s.name for s in toolspecs.TOOL_SPECS]
    with pytest.raises(KeyError, match="notebook_peek"):
        CopilotTools(
            [*definitions, {**definitions[0], "name": "notebook_peek"}],
            None,  # type: ignore[arg-type]
            proposals,
            host,
        )


def test_a_definition_file_that_names_other_actions_refuses_to_build() -> None:
    from jupyter_copilot.protocol.registry import CopilotRegistry, RegistryError

    registry = load_registry()
    tools = tuple(
        {**t, "abort": {**t["abort"], "action": "jupyter_copilot.notebook.other.abort"}}
        if t["name"] == toolspecs.PAGE_TOOLS[-1].name
        else t
        for t in registry.tools
    )
    wrong = CopilotRegistry(registry.pages, tools, registry.actions)
    with pytest.raises(RegistryError, match="notebook_run_cell: its definition's abort action"):
        toolspecs.build_proposal_tools(wrong, None, None, None, None, None)  # type: ignore[arg-type]


# -- names spelled once ---------------------------------------------------------------------


def spelled_names(path: Path, names: set[str], root: Path = PACKAGE.parent) -> list[str]:
    """``file:line name`` for each string literal in ``path`` that is exactly one of ``names``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names
    ]
    return [f"{path.relative_to(root).as_posix()}:{line} {name}" for line, name in sorted(found)]


def tool_names() -> set[str]:
    """Every tool's name and the page actions that invoke and abort a tool."""
    actions = {
        a
        for a, about in vocabulary.VOCABULARY["actions"].items()
        if about["kind"] in ("invoke", "abort")
    }
    return set(vocabulary.TOOLS) | actions


def test_python_spells_tool_names_only_in_the_registry() -> None:
    found = [
        hit
        for path in sorted(PACKAGE.rglob("*.py"))
        if path not in ALLOWED
        for hit in spelled_names(path, tool_names())
    ]
    assert found == [], "tool names spelled outside toolspecs.py:\n" + "\n".join(found)
    # The registry spells each name of a tool no page serves once; a page tool's name is
    # spelled only in its spec file.
    counted = spelled_names(PACKAGE / "tools" / "toolspecs.py", tool_names())
    page_tools = {s.name for s in toolspecs.PAGE_TOOLS}
    assert sorted(hit.split(" ")[1] for hit in counted) == sorted(
        set(vocabulary.TOOLS) - page_tools
    )


def test_the_name_scan_finds_a_spelled_name(tmp_path: Path) -> None:
    module = tmp_path / "gates.py"
    module.write_text(
        'GATES = {"notebook_run_cell": "ungated"}\n'
        'ACTION = "jupyter_copilot.notebook.run-cell.abort"\n'
        'NOTE = "call notebook_run_cell to run it"\n'
    )
    assert spelled_names(module, tool_names(), tmp_path) == [
        "gates.py:1 notebook_run_cell",
        "gates.py:2 jupyter_copilot.notebook.run-cell.abort",
    ]


# -- the spec file of a tool that a page serves ---------------------------------------------


def shipped_spec_file(index: int = -1) -> dict[str, Any]:
    """One shipped spec file (the last by name: the run tool's)."""
    return vocabulary.read_page_tools()[index]


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda d: d.pop("spec"), "has no spec part"),
        (lambda d: d["spec"].pop("title"), "is not valid"),
        (lambda d: d["spec"].update(gate="tools"), "['gate']"),
        (lambda d: d["spec"]["card"].update(colour="red"), "['colour']"),
        (lambda d: d["spec"].update(opensReview="no"), "is not valid"),
        (lambda d: d["spec"]["card"].update(always=1), "is not valid"),
        (lambda d: d["spec"].update(service="os:system"), "is not a class of jupyter_copilot"),
        (
            lambda d: d["spec"].update(service="jupyter_copilot.tools.run_tool:Nothing"),
            "cannot be found",
        ),
        (
            lambda d: d["spec"].update(service="jupyter_copilot.tools.run_tool:__doc__"),
            "is not a class",
        ),
    ],
)
def test_a_spec_file_with_a_missing_unknown_or_mistyped_key_refuses_to_load(
    change: Any, problem: str
) -> None:
    from jupyter_copilot.protocol.registry import RegistryError
    from jupyter_copilot.tools.spec import page_spec

    definition = copy.deepcopy(shipped_spec_file())
    assert page_spec(copy.deepcopy(definition)).page is not None
    change(definition)
    with pytest.raises(RegistryError, match=re.escape(problem)):
        page_spec(definition)


def test_the_spec_part_is_not_served_and_its_names_join_the_vocabulary() -> None:
    registry = load_registry()
    for spec in toolspecs.PAGE_TOOLS:
        served = registry.tool(spec.name)
        assert "spec" not in served
        assert (served["invoke"]["action"], served["abort"]["action"]) == (
            spec.invoke_action,
            spec.abort_action,
        )
        assert spec.name in vocabulary.WRITE_TOOLS
    # A new spec file adds its tool and both actions; a name spelled twice is refused.
    new = {**shipped_spec_file(), "name": "notebook_other_cell"}
    new["invoke"] = {**new["invoke"], "action": "jupyter_copilot.notebook.other-cell.invoke"}
    new["abort"] = {**new["abort"], "action": "jupyter_copilot.notebook.other-cell.abort"}
    merged = vocabulary.with_page_tools(vocabulary.VOCABULARY, [new])
    assert merged["tools"]["notebook_other_cell"] == {"readOnly": False}
    assert merged["actions"]["jupyter_copilot.notebook.other-cell.abort"] == {
        "kind": "abort",
        "tool": "notebook_other_cell",
    }
    with pytest.raises(ValueError, match="notebook_run_cell is in vocabulary.json"):
        vocabulary.with_page_tools(vocabulary.VOCABULARY, [shipped_spec_file()])
