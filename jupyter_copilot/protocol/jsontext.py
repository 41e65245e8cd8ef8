"""JSON from clients, parsed within bounds: a body too deep to walk is bad input, not a crash.

``json.loads`` raises ``RecursionError`` on a deeply nested document (about 1,000 levels
here), and code that later walks a parsed value (schema validation, ``json.dumps``) can hit
the same limit on a shallower one. Every JSON entry point parses with :func:`parse`, which
refuses both with :class:`BadJson`. No body of the contract nests deeper than a few levels.
"""

from __future__ import annotations

import json
from typing import Any

#: The deepest nesting accepted in a client's JSON (objects and arrays).
MAX_DEPTH = 64


class BadJson(ValueError):
    """The text is not JSON, or nests deeper than :data:`MAX_DEPTH`; says which, for a person."""


def parse(text: str | bytes) -> Any:
    """The JSON value of ``text``; raises :class:`BadJson` for invalid or too deep JSON."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise BadJson(f"The JSON nests deeper than {MAX_DEPTH} levels.") from None
    except ValueError:
        raise BadJson("The body is not valid JSON.") from None
    if depth(value) > MAX_DEPTH:
        raise BadJson(f"The JSON nests deeper than {MAX_DEPTH} levels.")
    return value


def depth(value: Any) -> int:
    """How deeply ``value`` nests (a scalar is 0), without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, level + 1)
        if deepest > MAX_DEPTH:
            return deepest
        stack.extend((child, level + 1) for child in children)
    return deepest
