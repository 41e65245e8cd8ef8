"""The demo agent's rules: deterministic whole-cell transforms and explanations, no I/O.

Each transform takes a cell's complete source and returns the complete new source, or
``None`` when there is nothing to change or the source is not Python. Everything the rule
does not touch stays byte-identical: comments, blank lines and line endings (CRLF too).
A notebook cell often starts with IPython magics (``%matplotlib inline``, ``!pip ...``);
when the source does not parse as it is, those lines are read as ``pass`` so that the rest
of the cell can still be worked on, and the lines themselves are kept as they were.
"""

from __future__ import annotations

import ast
import re

INTENTS = ("docstrings", "sort-imports", "add-note", "run", "explain", "echo", "help")

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_EOL = re.compile(r"\r\n|\r|\n")
_FINAL_EOL = re.compile(r"(?:\r\n|\r|\n)\Z")
_MAGIC = re.compile(r"^([ \t]*)[%!]")
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[^\W\d_A-Z]+|[A-Z]+|\d+|[^\W_]+")
_ECHO = re.compile(r"reply with the word (\w+)", re.IGNORECASE)
_DUNDERS = {
    "__init__": "Initialize the instance.",
    "__repr__": "Return a printable representation.",
    "__str__": "Return the string form.",
    "__call__": "Call the instance.",
    "__len__": "Return the number of items.",
    "__iter__": "Iterate over the items.",
    "__eq__": "Compare for equality.",
    "__enter__": "Enter the context.",
    "__exit__": "Exit the context.",
}
_PLOTTERS = {"plt", "sns", "px", "go", "alt", "matplotlib", "seaborn", "plotly", "altair"}
_PLOT_METHODS = {"plot", "hist", "scatter", "imshow", "bar", "barh", "boxplot", "show"}
_READERS = {"open", "read_csv", "read_excel", "read_json", "read_parquet", "read_sql", "load"}

# -- shared helpers ---------------------------------------------------------------------------


def split_lines(source: str) -> list[str]:
    """Split ``source`` into lines that keep their endings, counting lines as ``ast`` does."""
    return _LINE.findall(source)


def _parse(source: str) -> ast.Module | None:
    """Parse a cell; IPython magic lines count as ``pass`` when the plain parse fails."""
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        pass
    masked = "".join(_MAGIC.sub(r"\1pass #", line) for line in split_lines(source))
    try:
        return ast.parse(masked)
    except (SyntaxError, ValueError, RecursionError):
        return None


def _words(name: str) -> list[str]:
    """The words of a snake_case or CamelCase name; acronyms keep their capitals."""
    words = [w for part in name.split("_") for w in _WORD.findall(part)]
    return [w if w.isupper() and len(w) > 1 else w.lower() for w in words]


def docstring_for(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> str:
    """The one-line docstring text generated from a definition's name."""
    if node.name in _DUNDERS:
        return _DUNDERS[node.name]
    words = _words(node.name)
    if isinstance(node, ast.ClassDef):
        if not words:
            return f"The class {node.name}."
        article = "An" if words[0][0].lower() in "aeiou" else "A"
        return f"{article} {' '.join(words)}."
    if not words:
        return f"The function {node.name}."
    return f"{words[0][:1].upper()}{words[0][1:]} {' '.join(words[1:])}".rstrip() + "."


# -- docstrings -------------------------------------------------------------------------------


def _starts_line(lines: list[str], stmt: ast.stmt) -> bool:
    """Whether ``stmt`` is the first thing on its line (not ``def f(): return 1``)."""
    decorators = getattr(stmt, "decorator_list", None) or []
    first = min([stmt, *decorators], key=lambda n: (n.lineno, n.col_offset))
    prefix = lines[first.lineno - 1][: first.col_offset].strip()
    return prefix == ("@" if first is not stmt else "")


def _is_code(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def add_docstrings(source: str) -> str | None:
    """Add a one-line docstring to every function, async function and class without one.

    The docstring goes right after the definition's header, indented like its body, and is
    made from the name: ``def load_data(path)`` gets ``\"\"\"Load data.\"\"\"``, ``class
    DataLoader`` gets ``\"\"\"A data loader.\"\"\"``. A body on the header's own line
    (``def f(): return 1``) is left alone. ``None`` when nothing changes or the source does
    not parse.
    """
    tree = _parse(source)
    if tree is None:
        return None
    lines = split_lines(source)
    inserts: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if ast.get_docstring(node, clean=False) is not None:
            continue
        first = node.body[0]
        if not _starts_line(lines, first):
            continue
        decorators = getattr(first, "decorator_list", None) or []
        body_line = min([first.lineno, *(d.lineno for d in decorators)]) - 1
        indent = lines[body_line][: len(lines[body_line]) - len(lines[body_line].lstrip())]
        # Above the body's comments and blank lines, right under the header.
        at = body_line
        while at - 1 >= node.lineno and not _is_code(lines[at - 1]):
            at -= 1
        match = _EOL.search(lines[at - 1])
        eol = match.group() if match else "\n"
        inserts.append((at, f'{indent}"""{docstring_for(node)}"""{eol}'))
    if not inserts:
        return None
    for at, text in sorted(inserts, reverse=True):
        lines.insert(at, text)
    result = "".join(lines)
    return result if _parse(result) is not None else None


# -- sorted imports ---------------------------------------------------------------------------


_Key = tuple[bool, str, bool, str]


def _import_key(stmt: ast.stmt, text: str) -> _Key:
    """Absolute before relative, then by module name ignoring case, ``import`` before
    ``from``, then by the statement's text."""
    if isinstance(stmt, ast.ImportFrom):
        return (stmt.level > 0, (stmt.module or "").lower(), True, text.lower())
    assert isinstance(stmt, ast.Import)
    return (False, stmt.names[0].name.lower(), False, text.lower())


def _is_preamble(index: int, stmt: ast.stmt, lines: list[str]) -> bool:
    """A docstring, a ``from __future__`` import or an IPython magic at the top of a cell."""
    if index == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
        return isinstance(stmt.value.value, str)
    if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
        return True
    return isinstance(stmt, ast.Pass) and _MAGIC.match(lines[stmt.lineno - 1]) is not None


def sort_imports(source: str) -> str | None:
    """Sort the leading block of top-level imports.

    The block is the run of ``import``/``from`` statements at the top of the cell, after a
    docstring, ``from __future__`` imports, comments and magics. Its blank-line separated
    groups are sorted each on their own: absolute before relative imports, by module name
    ignoring case, ``import x`` before ``from x import y``. Comment lines right above an
    import move with it; a repeated identical import is dropped. ``None`` when nothing
    changes, the source does not parse, or two statements share a line.
    """
    tree = _parse(source)
    if tree is None:
        return None
    lines = split_lines(source)
    body = tree.body
    start = 0
    while start < len(body) and _is_preamble(start, body[start], lines):
        start += 1
    end = start
    while end < len(body) and isinstance(body[end], (ast.Import, ast.ImportFrom)):
        end += 1
    run = body[start:end]
    if len(run) < 2:
        return None
    neighbours = body[max(start - 1, 0) : end + 1]
    for before, after in zip(neighbours, neighbours[1:], strict=False):
        if (before.end_lineno or before.lineno) >= after.lineno:
            return None
    first, last = run[0].lineno - 1, (run[-1].end_lineno or run[-1].lineno)
    region = lines[first:last]
    missing_eol = not _EOL.search(region[-1])
    eol = _dominant_eol(source)
    if missing_eol:
        region[-1] += eol
    by_line = {stmt.lineno - 1 - first: stmt for stmt in run}
    out: list[str] = []
    seen: set[str] = set()
    units: list[tuple[_Key, list[str]]] = []
    pending: list[str] = []
    index = 0
    while index < len(region):
        line = region[index]
        stmt = by_line.get(index)
        if stmt is not None:
            stop = (stmt.end_lineno or stmt.lineno) - first
            text = "".join(region[index:stop])
            key = " ".join(text.split())
            if key not in seen or pending:
                seen.add(key)
                units.append((_import_key(stmt, text), [*pending, text]))
            pending = []
            index = stop
            continue
        if line.strip():
            pending.append(line)
        else:
            out.extend(_flush(units, pending, line))
            units, pending = [], []
        index += 1
    out.extend(_flush(units, pending, ""))
    if missing_eol:
        out[-1] = _FINAL_EOL.sub("", out[-1])
    result = "".join([*lines[:first], *out, *lines[last:]])
    return None if result == source or _parse(result) is None else result


def _flush(units: list[tuple[_Key, list[str]]], tail: list[str], blank: str) -> list[str]:
    """One sorted group: its imports in order, then comments that belong to no import."""
    ordered = [text for _, unit in sorted(units, key=lambda u: u[0]) for text in unit]
    return [*ordered, *tail, *([blank] if blank else [])]


def _dominant_eol(source: str) -> str:
    endings = _EOL.findall(source)
    return max(set(endings), key=endings.count) if endings else "\n"


# -- explanations -----------------------------------------------------------------------------


def _code(text: str) -> str:
    """``text`` as a Markdown code span, also when it holds backticks."""
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def _names(items: list[str], limit: int = 6) -> str:
    """``a``, ``b`` and ``c`` in Markdown code, with "and N more" past ``limit``."""
    shown = [f"`{item}`" for item in dict.fromkeys(items)]
    if len(shown) > limit:
        shown = [*shown[:limit], f"{len(shown) - limit} more"]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"


def _callee(call: ast.Call) -> tuple[str | None, str | None]:
    """The called name and, for ``a.b(...)``, the name ``a`` it is looked up on."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id, None
    if isinstance(func, ast.Attribute):
        base = func.value
        while isinstance(base, ast.Attribute):
            base = base.value
        return func.attr, base.id if isinstance(base, ast.Name) else None
    return None, None


def _definitions(tree: ast.Module) -> list[str]:
    facts = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            kind = "async function" if isinstance(node, ast.AsyncFunctionDef) else "function"
            args = ", ".join(a.arg for a in [*node.args.posonlyargs, *node.args.args])
            facts.append(f"Defines the {kind} `{node.name}({args})`.")
        elif isinstance(node, ast.ClassDef):
            methods = [
                n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            ]
            extra = f" with the methods {_names(methods)}" if methods else ""
            facts.append(f"Defines the class `{node.name}`{extra}.")
    return facts


def _imports(tree: ast.Module) -> list[str]:
    modules = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules += [a.name + (f" as {a.asname}" if a.asname else "") for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            modules.append("." * node.level + (node.module or ""))
    return [f"Imports {_names(modules)}."] if modules else []


def _actions(tree: ast.Module, source: str) -> list[str]:
    calls = [_callee(n) for n in ast.walk(tree) if isinstance(n, ast.Call)]
    facts = []
    assigned = [
        t.id
        for node in tree.body
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign))
        for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(t, ast.Name)
    ]
    if assigned:
        facts.append(f"Sets {_names(assigned)}.")
    readers = [name for name, _ in calls if name in _READERS]
    if readers:
        facts.append(f"Reads data with {_names(readers)}.")
    if any(isinstance(n, (ast.For, ast.AsyncFor, ast.While)) for n in ast.walk(tree)):
        facts.append("Runs a loop.")
    if any(name == "print" and base is None for name, base in calls):
        facts.append("Prints output.")
    if any(base in _PLOTTERS or name in _PLOT_METHODS for name, base in calls):
        facts.append("Draws a plot.")
    last = tree.body[-1] if tree.body else None
    if isinstance(last, ast.Expr) and not isinstance(last.value, ast.Constant):
        name, base = _callee(last.value) if isinstance(last.value, ast.Call) else (None, None)
        if not (name == "print" and base is None):
            text = " ".join((ast.get_source_segment(source, last) or "").split())
            text = text if len(text) <= 60 else text[:57] + "..."
            facts.append(f"Its last expression, {_code(text)}, is shown as the cell's output.")
    return facts


def _error_line(error: Exception, lines: list[str]) -> str:
    """Where and why a cell does not parse: ``line 2 (`def f(:`): invalid syntax``."""
    message = getattr(error, "msg", None) or str(error)
    lineno = getattr(error, "lineno", None)
    if not lineno:
        return message
    text = " ".join(lines[lineno - 1].split()) if 0 < lineno <= len(lines) else ""
    text = text if len(text) <= 60 else text[:57] + "..."
    return f"line {lineno} ({_code(text)}): {message}" if text else f"line {lineno}: {message}"


def parses(source: str) -> bool:
    """Whether the rules can read ``source`` as Python (magic lines allowed)."""
    return _parse(source) is not None


def explain(source: str, cell_type: str = "code") -> str:
    """A short Markdown explanation of a cell, built from what its syntax tree shows."""
    lines = split_lines(source)
    count = f"{len(lines)} line{'s' if len(lines) != 1 else ''}"
    if not source.strip():
        return "This cell is empty."
    if cell_type != "code":
        kind = "Markdown" if cell_type == "markdown" else cell_type
        headings = [line.strip().lstrip("#").strip() for line in lines if line.startswith("#")]
        extra = f" Its headings: {_names(headings)}." if headings else ""
        return f"This is a {kind} cell of {count}; it is text, not code.{extra}"
    tree = _parse(source)
    if tree is None:
        try:
            ast.parse(source)
        except (SyntaxError, ValueError, RecursionError) as error:
            return f"This cell does not parse as Python: {_error_line(error, lines)}."
    assert tree is not None
    facts = [*_imports(tree), *_definitions(tree), *_actions(tree, source)]
    magics = [m.group().strip() for line in lines if (m := re.match(r"\s*[%!]+\w*", line))]
    if magics:
        facts.insert(0, f"Uses the IPython commands {_names(magics)}.")
    if not facts:
        facts = ["It has no imports, definitions or calls that I recognise."]
    bullets = "\n".join(f"- {fact}" for fact in facts)
    return f"**This cell** has {count} of Python.\n\n{bullets}\n"


def note_for(source: str, cell_type: str = "code") -> str:
    """The source of a new Markdown cell that describes the cell it follows."""
    text = explain(source, cell_type)
    for this, above in _THIS_CELL:
        if text.startswith(this):
            text = above + text[len(this) :]
            break
    return f"### About the cell above\n\n{text.rstrip()}\n"


#: How an explanation starts, and how a note below the cell says it.
_THIS_CELL = (
    ("**This cell**", "The cell above"),
    ("This cell", "The cell above"),
    ("This is a", "The cell above is a"),
)


# -- what the person asks ---------------------------------------------------------------------


def echo_word(text: str) -> str | None:
    """The word of "reply with the word X", or ``None``."""
    match = _ECHO.search(text)
    return match.group(1) if match else None


def intent(text: str) -> str:
    """What the person asks for: one of :data:`INTENTS`.

    "Reply with the word X" is ``echo``; a mention of docstrings is ``docstrings``; "sort"
    with "import" is ``sort-imports``; "add" (or "insert") a "cell" or "note" that
    describes, explains or notes is ``add-note``; "run" or "execute" is ``run``; "explain"
    or "what does" is ``explain``; anything else gets ``help``.
    """
    if echo_word(text) is not None:
        return "echo"
    lowered = text.lower()
    if "docstring" in lowered:
        return "docstrings"
    if "sort" in lowered and "import" in lowered:
        return "sort-imports"
    adds = re.search(r"\b(add|insert)\b", lowered) is not None
    if adds and re.search(r"\b(note|describ\w*|explain\w*|markdown)\b", lowered):
        return "add-note"
    if re.search(r"\b(run|execute)\b", lowered):
        return "run"
    if "explain" in lowered or "what does" in lowered:
        return "explain"
    return "help"
