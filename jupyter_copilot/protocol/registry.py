"""The registry: page manifests and tool definitions, shipped as data and checked at start.

Manifests live in ``manifests/pages/*.json`` and ``manifests/tools/*.json``; their JSON
Schemas live in ``schemas/``. :func:`load_registry` validates every file and refuses to load
on any duplicate name, pageType, action or tool name, naming the duplicate.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
from referencing import Registry, Resource

from .vocabulary import vocabulary_schema

PACKAGE_DIR = Path(__file__).parents[1]
SCHEMA_DIR = PACKAGE_DIR / "schemas"
MANIFEST_DIR = PACKAGE_DIR / "manifests"

#: The page manifest's action (docs/protocol.md section 1) and the page's own read. Each
#: tool's invoke and abort actions are its spec's (``toolspecs.py``, from the vocabulary).
GET_CONTEXT = "jupyter_copilot.notebook.get-context"
READ_CELLS = "jupyter_copilot.notebook.read-cells"


class RegistryError(Exception):
    """The registry data is invalid or names something twice; the extension must not load."""


@cache
def schema_registry() -> Registry:
    """All JSON Schemas shipped in the package, addressable by their ``$id``."""
    # The vocabulary's lists as enums, referenced by the bridge schemas (docs/protocol.md).
    vocabulary = vocabulary_schema()
    resources = [(vocabulary["$id"], Resource.from_contents(vocabulary))]
    for path in sorted(SCHEMA_DIR.glob("*.schema.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        resources.append((schema["$id"], Resource.from_contents(schema)))
    return Registry().with_resources(resources)


@cache
def validator(schema_name: str, definition: str | None = None) -> jsonschema.Draft202012Validator:
    """A validator for ``schemas/<schema_name>.schema.json``, or one of its ``$defs``."""
    schema_id = f"urn:jupyter-copilot:schema:{schema_name}"
    schema: dict[str, Any] = {"$ref": schema_id}
    if definition is not None:
        schema = {"$ref": f"{schema_id}#/$defs/{definition}"}
    return jsonschema.Draft202012Validator(schema, registry=schema_registry())


def first_error(schema_name: str, instance: Any, definition: str | None = None) -> str | None:
    """A short description of the first way ``instance`` breaks the schema, or None."""
    return schema_problem(validator(schema_name, definition), instance)


def schema_problem(schema_validator: jsonschema.protocols.Validator, instance: Any) -> str | None:
    """A short description of the first way ``instance`` breaks a validator's schema, or None.

    The description names the place and the rule, never the offending value: instances can
    hold cell source, and these messages travel back to pages, agents and into logs.
    """
    error = jsonschema.exceptions.best_match(schema_validator.iter_errors(instance))
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
    if error.validator == "required":
        return f"{where}: {error.message}"
    return f"{where}: breaks the '{error.validator}' rule"


@dataclass(frozen=True)
class CopilotRegistry:
    """The validated page manifests and tool definitions, in a stable order."""

    pages: tuple[dict[str, Any], ...] = ()
    tools: tuple[dict[str, Any], ...] = ()
    actions: frozenset[str] = field(default_factory=frozenset)

    def manifest(self) -> dict[str, list[dict[str, Any]]]:
        """The body of ``GET copilot/api/manifest``."""
        return {"pages": list(self.pages), "tools": list(self.tools)}

    def tool(self, name: str) -> dict[str, Any]:
        """The tool definition with that name; KeyError if there is none."""
        for tool in self.tools:
            if tool["name"] == name:
                return tool
        raise KeyError(name)


def _actions_of(kind: str, item: dict[str, Any]) -> Iterable[str]:
    if kind == "page":
        yield item["getContext"]["action"]
    else:
        yield item["invoke"]["action"]
        yield item["abort"]["action"]


def build_registry(
    pages: Iterable[tuple[str, dict[str, Any]]], tools: Iterable[tuple[str, dict[str, Any]]]
) -> CopilotRegistry:
    """Validate ``(origin, item)`` pairs and check that nothing is named twice.

    ``origin`` names where an item came from (a file name) so that an error can say which
    two places clash.
    """
    seen: dict[tuple[str, str], str] = {}

    def claim(kind: str, value: str, origin: str) -> None:
        key = (kind, value)
        if key in seen:
            raise RegistryError(
                f"duplicate {kind} {value!r} in {seen[key]} and {origin}: "
                "every page name, pageType, action and tool name must be unique"
            )
        seen[key] = origin

    checked: dict[str, list[dict[str, Any]]] = {"page": [], "tool": []}
    for kind, items, schema in (
        ("page", pages, "page-manifest"),
        ("tool", tools, "tool-definition"),
    ):
        for origin, given in items:
            # A page tool's spec file also holds its spec (tools/spec.py), which is not served.
            item = {k: v for k, v in given.items() if k != "spec"} if kind == "tool" else given
            problem = first_error(schema, item)
            if problem is not None:
                raise RegistryError(f"{origin} is not a valid {kind} definition: {problem}")
            if kind == "page":
                claim("page name", item["name"], origin)
                claim("pageType", item["pageType"], origin)
                compile_matcher(item["match"])
            else:
                claim("tool name", item["name"], origin)
            for action in _actions_of(kind, item):
                claim("action", action, origin)
            checked[kind].append(item)
    actions = frozenset(value for (kind, value) in seen if kind == "action")
    return CopilotRegistry(tuple(checked["page"]), tuple(checked["tool"]), actions)


def _read_dir(folder: Path) -> list[tuple[str, dict[str, Any]]]:
    items = []
    for path in sorted(folder.glob("*.json")):
        try:
            items.append((path.name, json.loads(path.read_text(encoding="utf-8"))))
        except (OSError, ValueError) as e:
            raise RegistryError(f"{path.name} cannot be read: {e}") from e
    return items


def load_registry(manifest_dir: Path = MANIFEST_DIR) -> CopilotRegistry:
    """Load and check the registry shipped in the package."""
    return build_registry(_read_dir(manifest_dir / "pages"), _read_dir(manifest_dir / "tools"))


@cache
def compile_matcher(source: str) -> re.Pattern[str]:
    """Compile a page manifest's ``match`` expression."""
    try:
        return re.compile(source)
    except re.error as e:
        raise RegistryError(f"match expression does not compile: {e}") from e


def matches_page(source: str, path: str) -> bool:
    """Whether a page path (``{base}`` stripped, no leading slash) matches ``source``.

    ``fullmatch`` makes Python's ``$`` behave as JavaScript's does without the ``m`` flag: it
    does not accept a trailing newline.
    """
    return compile_matcher(source).fullmatch(path) is not None
