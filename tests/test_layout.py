"""The package's layout: modules grouped in subpackages, and no import cycle.

No module of jupyter_copilot imports, directly or not, itself. The import graph is read from
the source (the AST), not from ``sys.modules``: imports at module level, inside functions
and under ``if TYPE_CHECKING:`` all count (a lazy import only hides a cycle, and a cycle of
type-only imports is still two modules that cannot be understood one without the other).
Only ``__init__.py`` and ``_version.py`` stand at the package root; every other module
lives in the subpackage of its responsibility, and no module only hands on names imported
from another (a shim keeping an old path alive). Run this file as a script
(``python -m tests.test_layout``) to print the graph.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import jupyter_copilot

PACKAGE = "jupyter_copilot"
ROOT = Path(jupyter_copilot.__file__).parent
#: The lab extension's TypeScript sources.
TS_SOURCE = ROOT.parent / "labextension" / "src"


def module_name(path: Path, root: Path = ROOT) -> str:
    """``jupyter_copilot/agents/host.py`` -> ``jupyter_copilot.agents.host``."""
    parts = [PACKAGE, *path.relative_to(root).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


#: The modules that stand at the package root: the package's face and its version.
ROOT_MODULES = {"__init__.py", "_version.py"}


def _imports(tree: ast.AST) -> Iterable[ast.Import | ast.ImportFrom]:
    """Every import statement, at any depth, ``if TYPE_CHECKING:`` blocks included."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base.pop()
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Each module of the package and the package modules it imports."""
    paths = {module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    known = set(paths)

    def target(name: str) -> str | None:
        # ``from .agents import bodies`` names a module; ``from .x import y`` names x.
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, path in paths.items():
        is_package = path.name == "__init__.py"
        edges: set[str] = set()
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                source = _resolve(module, is_package, node)
                names = [f"{source}.{alias.name}" for alias in node.names] or [source]
            for name in names:
                if name.split(".")[0] != PACKAGE:
                    continue
                found = target(name)
                if found is not None and found != module and not module.startswith(found + "."):
                    # Importing a submodule runs its package's __init__, which is no edge back.
                    edges.add(found)
        graph[module] = edges
    # A page tool's spec file names its service (``module:Class``), which the specs import.
    specs = f"{PACKAGE}.tools.toolspecs"
    if specs in graph:
        for path in sorted((root / "manifests" / "tools").glob("*.json")):
            service = json.loads(path.read_text(encoding="utf-8")).get("spec", {}).get("service")
            if isinstance(service, str) and service.partition(":")[0] in known:
                graph[specs].add(service.partition(":")[0])
    return graph


def find_cycle(graph: Mapping[str, Iterable[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a path ``[a, b, ..., a]``, or None when there is none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found is not None:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found is not None:
                return found
    return None


def describe(graph: Mapping[str, Iterable[str]]) -> str:
    """The graph as text: one line per module with what it imports."""
    short = len(PACKAGE) + 1
    lines = []
    for module in sorted(graph):
        targets = ", ".join(t[short:] or PACKAGE for t in sorted(graph[module]))
        lines.append(f"{module[short:] or PACKAGE} -> {targets or '-'}")
    return "\n".join(lines)


# -- the cycle finder itself -------------------------------------------------------------------


def test_find_cycle_finds_a_cycle_of_three() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]


def test_find_cycle_finds_a_self_loop_and_none_in_a_diamond() -> None:
    assert find_cycle({"a": {"a"}}) == ["a", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"d"}, "c": {"d"}, "d": set()}) is None


def test_import_graph_counts_lazy_and_type_checking_imports(tmp_path: Path) -> None:
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "__init__.py").write_text("")
    (tmp_path / "a.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from .b import B\n"
        "def f():\n"
        "    from .sub import c\n"
    )
    (tmp_path / "b.py").write_text("from . import a\n")
    (tmp_path / "sub" / "c.py").write_text("from ..b import x\nimport jupyter_copilot.a\n")
    graph = import_graph(tmp_path)
    assert graph[f"{PACKAGE}.a"] == {f"{PACKAGE}.b", f"{PACKAGE}.sub.c"}
    assert graph[f"{PACKAGE}.b"] == {f"{PACKAGE}.a"}
    assert graph[f"{PACKAGE}.sub.c"] == {f"{PACKAGE}.b", f"{PACKAGE}.a"}
    assert find_cycle(graph) == [f"{PACKAGE}.a", f"{PACKAGE}.b", f"{PACKAGE}.a"]


# -- the package -------------------------------------------------------------------------------


def test_the_package_has_no_import_cycle() -> None:
    graph = import_graph()
    assert f"{PACKAGE}.server.handlers" in graph and f"{PACKAGE}.server.agent_handlers" in graph
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_nothing_outside_the_server_folder_imports_it() -> None:
    """The server folder is the top: the app, the HTTP layer and the adapters; the package's
    face loads the app from it, and nothing else reaches up into it."""
    graph = import_graph()
    server = f"{PACKAGE}.server"
    for module, targets in graph.items():
        if module in (PACKAGE, server) or module.startswith(server + "."):
            continue
        assert not {t for t in targets if t.startswith(server + ".")}, module


#: The package's folders from the bottom up: each imports only the folders before it.
LAYERS = [
    "protocol",
    "demo_agent",
    "model_agent",
    "admin",
    "page",
    "tools",
    "agents",
    "mcp",
    "server",
]


def test_each_folder_imports_only_the_folders_below_it() -> None:
    def layer(module: str) -> int | None:
        folder = module.removeprefix(f"{PACKAGE}.").split(".")[0]
        return LAYERS.index(folder) if folder in LAYERS else None

    for module, targets in sorted(import_graph().items()):
        own = layer(module)
        if own is None:
            continue
        above = sorted(t for t in targets if (layer(t) or 0) > own)
        assert not above, f"{module} imports {above}, above its folder (README.md)"


def test_services_do_not_import_the_http_layer() -> None:
    graph = import_graph()
    http = {f"{PACKAGE}.server.{name}" for name in ("actions", "handlers", "routes", "web", "app")}
    services = ["tools.edit_tool", "page.notebook", "page.dispatcher", "protocol.callers"]
    services += ["admin.switches", "server.pages"]
    services += [m.removeprefix(f"{PACKAGE}.") for m in graph if m.startswith(f"{PACKAGE}.mcp.")]
    for service in services:
        assert not graph[f"{PACKAGE}.{service}"] & http, service


def only_hands_on_names(tree: ast.Module) -> bool:
    """Whether a module's body is imports alone (beside a docstring and ``__all__``)."""
    body = [
        n for n in tree.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))
    ]
    imports = [n for n in body if isinstance(n, (ast.Import, ast.ImportFrom))]
    rest = [
        n
        for n in body
        if n not in imports
        and not (
            isinstance(n, ast.Assign)
            and all(isinstance(t, ast.Name) and t.id == "__all__" for t in n.targets)
        )
    ]
    real = [n for n in imports if not (isinstance(n, ast.ImportFrom) and n.module == "__future__")]
    return bool(real) and not rest


def test_only_the_face_and_the_version_stand_at_the_package_root() -> None:
    modules = {p.name for p in ROOT.glob("*.py")}
    assert modules == ROOT_MODULES, (
        f"modules at the package root: {sorted(modules - ROOT_MODULES)}; "
        "place each in the subpackage of its responsibility"
    )


def test_no_module_only_hands_on_names_from_another() -> None:
    for path in sorted(ROOT.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        name = module_name(path)
        if path.name == "__init__.py" and path.parent != ROOT:
            # A subpackage's face says what the folder holds; importers name the module.
            assert not list(_imports(tree)), f"{name} imports: import from its modules instead"
        else:
            assert not only_hands_on_names(tree), f"{name} only re-exports names"


def test_only_hands_on_names_tells_a_shim_from_a_module() -> None:
    shim = ast.parse('"""Old path."""\nfrom __future__ import annotations\nfrom .a import b\n')
    assert only_hands_on_names(shim)
    assert only_hands_on_names(ast.parse("from .a import b\n__all__ = ['b']\n"))
    assert not only_hands_on_names(ast.parse("from .a import b\n\ndef c() -> None:\n    b()\n"))
    assert not only_hands_on_names(ast.parse('"""Only a docstring."""\n'))


# -- the lab extension's TypeScript ---------------------------------------------------------------

#: A string (kept, group 1) or a comment (dropped), so that an import in a comment is no import.
_TS_NOISE = re.compile(
    r"""("(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`)|//[^\n]*|/\*.*?\*/""",
    re.S,
)
#: ``import ... from './x'`` and ``export ... from './x'``: the clause, then the path.
_TS_FROM = re.compile(r"""\b(?:import|export)\b([^;'"]*?)\bfrom\s*['"](\.[^'"]*)['"]""")
#: ``import './x'`` and ``import('./x')``: loaded for its effect, or lazily.
_TS_BARE = re.compile(r"""\bimport\s*(?:\(\s*)?['"](\.[^'"]*)['"]""")


def _ts_type_only(clause: str) -> bool:
    """``import type {...}``, or braces whose every name is ``type X``: the compiler erases it."""
    clause = clause.strip()
    if clause.startswith(("type ", "type{")):
        return True
    braces = re.fullmatch(r"\{(.*)\}", clause, re.S)
    if braces is None:
        return False
    names = [n.strip() for n in braces.group(1).split(",") if n.strip()]
    return bool(names) and all(n.startswith("type ") for n in names)


def ts_import_graph(src: Path = TS_SOURCE) -> dict[str, set[str]]:
    """Each TypeScript file under ``src`` and the files of ``src`` it imports.

    Imports of values count, lazy ``import('./x')`` included (it only hides a cycle);
    ``import type`` does not (the compiler erases it, so nothing of it runs).
    """
    files = {
        p.relative_to(src).as_posix(): p
        for p in sorted(src.rglob("*.ts"))
        if not p.name.endswith(".d.ts")
    }
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        text = _TS_NOISE.sub(lambda m: m.group(1) or " ", path.read_text(encoding="utf-8"))
        specs = [spec for clause, spec in _TS_FROM.findall(text) if not _ts_type_only(clause)]
        specs += _TS_BARE.findall(text)
        edges: set[str] = set()
        for spec in specs:
            base = Path(name).parent / spec
            stem = base.with_suffix("") if base.suffix == ".js" else base
            for candidate in (f"{stem.as_posix()}.ts", f"{stem.as_posix()}/index.ts"):
                normal = Path(candidate).as_posix()
                parts: list[str] = []
                for part in normal.split("/"):
                    if part == "..":
                        if parts:
                            parts.pop()
                    elif part != ".":
                        parts.append(part)
                resolved = "/".join(parts)
                if resolved in files:
                    edges.add(resolved)
                    break
        graph[name] = edges - {name}
    return graph


def test_ts_import_graph_counts_values_and_lazy_imports_not_types(tmp_path: Path) -> None:
    (tmp_path / "review").mkdir()
    (tmp_path / "a.ts").write_text(
        "import type { B } from './b';\n"
        "import { type C } from './c';\n"
        "// import { d } from './d';\n"
        "import { e } from './review/e';\n"
        "import '../outside.css';\n"
        "export const load = () => import('./d');\n"
    )
    for name in ("b.ts", "c.ts", "d.ts"):
        (tmp_path / name).write_text("export const x = 1;\n")
    (tmp_path / "review" / "e.ts").write_text(
        "import {\n  a,\n  type A\n} from '../a';\nexport { x } from '../b';\n"
    )
    graph = ts_import_graph(tmp_path)
    assert graph["a.ts"] == {"review/e.ts", "d.ts"}
    assert graph["review/e.ts"] == {"a.ts", "b.ts"}
    assert find_cycle(graph) == ["a.ts", "review/e.ts", "a.ts"]


def test_the_lab_extension_has_no_import_cycle() -> None:
    graph = ts_import_graph()
    assert "index.ts" in graph and graph["index.ts"], "no TypeScript sources found"
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle in labextension/src: " + " -> ".join(cycle or [])


if __name__ == "__main__":
    print(describe(import_graph()))
    print()
    for source, targets in sorted(ts_import_graph().items()):
        print(f"{source} -> {', '.join(sorted(targets)) or '-'}")
