"""What runs inside the person's kernel to list and describe its variables.

This module is never imported by the server: its source is sent to a Python kernel and run
there by :mod:`.kernelvars` (docs/protocol.md section 11.3), so it uses the standard library
only and must stay safe to run in someone else's namespace:

- it is evaluated as a ``user_expressions`` entry of a silent execute request
  (``silent=True``, ``store_history=False``): no execution count, no ``In``/``Out`` entry, no
  ``_``; its own names live in a fresh dictionary, never in the person's namespace;
- it never runs code an agent supplied: the only input is a JSON request whose variable name
  the server has checked to be a dotted path of identifiers, resolved here by dictionary
  look-up and :func:`inspect.getattr_static` (a property is never run);
- listing calls no code of the person's objects (lengths of built-in containers, shapes of
  NumPy arrays and pandas objects through the libraries' own descriptors); describing calls
  ``repr`` and pandas' own methods, under a time limit (``SIGALRM`` in the kernel's main
  thread) that also stops a ``repr`` that hangs;
- its answer, compact JSON, fits the byte budget, and whatever it leaves out to fit is
  counted in the answer (``omitted``, ``headRowsOmitted``, ``columnsOmitted``,
  ``reprOmittedChars``), never cut silently.

:func:`answer` is the entry point: a JSON request in, a JSON answer out.
"""

from __future__ import annotations

import inspect
import json
import keyword
import math
import reprlib
import signal
import sys
import threading
import time
from typing import Any

#: Names IPython puts in every namespace; they are the kernel's, not the person's variables.
_KERNEL_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython", "open"})
#: Built-in types whose length and size Python itself computes (no code of the object runs).
_SIZED = (str, bytes, bytearray, list, tuple, dict, set, frozenset, range)
_SCALARS = (bool, int, float, complex, type(None))
#: Rows of a DataFrame head, before the byte budget takes any away.
_HEAD_ROWS = 5
#: Characters of one value in a head.
_CELL_CHARS = 80
#: Longest column whose nulls are counted: counting scans every value (about 10 ms per
#: million on an idle machine), and a description answers within 100 ms.
NULL_ROWS = 1_000_000


class _TimeLimit(BaseException):
    """The time limit passed (a BaseException, so an object's ``except Exception`` in its
    own ``repr`` does not swallow it)."""


def _size(data: Any) -> int:
    return len(json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def _type_name(cls: type) -> str:
    module = getattr(cls, "__module__", None)
    qualname = getattr(cls, "__qualname__", None) or cls.__name__
    if not isinstance(module, str) or module == "builtins":
        return str(qualname)
    # pandas.core.frame.DataFrame reads better as the name people import.
    top = module.split(".")[0]
    if top in ("pandas", "numpy") and getattr(sys.modules.get(top), cls.__name__, None) is cls:
        return f"{top}.{cls.__name__}"
    return f"{module}.{qualname}"


def _library_class(module: str, name: str) -> type | None:
    """A class of a library the kernel has already imported (never imported here)."""
    loaded = sys.modules.get(module)
    cls = getattr(loaded, name, None) if loaded is not None else None
    return cls if isinstance(cls, type) else None


def _kind(obj: Any) -> str:
    cls = type(obj)
    for kind, module, name in (
        ("dataframe", "pandas", "DataFrame"),
        ("series", "pandas", "Series"),
        ("array", "numpy", "ndarray"),
    ):
        known = _library_class(module, name)
        if known is not None and issubclass(cls, known):
            return kind
    return "object"


def _shape_and_bytes(obj: Any, kind: str) -> tuple[list[int] | None, int | None, int | None]:
    """Shape, length and size in bytes, through code of Python or the library only."""
    if kind == "array":
        ndarray = _library_class("numpy", "ndarray")
        assert ndarray is not None
        shape = [int(n) for n in ndarray.shape.__get__(obj)]  # type: ignore[attr-defined]
        return shape, (shape[0] if shape else None), int(ndarray.nbytes.__get__(obj))  # type: ignore[attr-defined]
    if kind in ("dataframe", "series"):
        cls = _library_class("pandas", "DataFrame" if kind == "dataframe" else "Series")
        assert cls is not None
        shape = [int(n) for n in cls.shape.fget(obj)]  # type: ignore[attr-defined]
        used = cls.memory_usage(obj, index=True, deep=False)  # type: ignore[attr-defined]
        total = int(used.sum()) if kind == "dataframe" else int(used)
        return shape, shape[0], total
    cls = type(obj)
    if cls in _SIZED:
        return None, len(obj), sys.getsizeof(obj)
    if cls in _SCALARS:
        return None, None, sys.getsizeof(obj)
    return None, None, None


def _listable(name: str, value: Any) -> bool:
    if name.startswith("_") or name in _KERNEL_NAMES:
        return False
    return not (inspect.ismodule(value) or isinstance(value, type) or inspect.isroutine(value))


def list_variables(ns: dict[str, Any], budget: int) -> dict[str, Any]:
    """The person's variables, by name, as many as fit ``budget`` (the rest counted).

    Only the entries that fit are looked at closely, so a namespace of thousands of names
    costs little more than one of a hundred.
    """
    names = sorted(n for n, v in list(ns.items()) if isinstance(n, str) and _listable(n, v))
    result: dict[str, Any] = {"variables": [], "total": len(names), "omitted": 0}
    used = _size(result) + 8  # room for the omitted count's digits
    for index, name in enumerate(names):
        value = ns.get(name)
        kind = _kind(value)
        try:
            shape, length, size = _shape_and_bytes(value, kind)
        except Exception:
            shape, length, size = None, None, None
        entry = {
            "name": name,
            "type": _type_name(type(value)),
            "kind": kind,
            "shape": shape,
            "length": length,
            "bytes": size,
        }
        cost = _size(entry) + 1
        if used + cost > budget:
            result["omitted"] = len(names) - index
            break
        result["variables"].append(entry)
        used += cost
    return result


def _resolve(ns: dict[str, Any], path: str) -> tuple[bool, Any, str]:
    """The object at ``path``: found, the object, and why not when not found."""
    parts = path.split(".")
    if not all(p.isidentifier() and not keyword.iskeyword(p) for p in parts):
        return False, None, "not a dotted path of Python names"
    if parts[0] not in ns:
        return False, None, "no variable by that name"
    obj = ns[parts[0]]
    for part in parts[1:]:
        try:
            found = inspect.getattr_static(obj, part)
        except AttributeError:
            return False, None, "no such attribute"
        if hasattr(type(found), "__get__") and (
            hasattr(type(found), "__set__") or hasattr(type(found), "__delete__")
        ):
            # A property or another computed attribute: reading it would run its code.
            return False, None, "a computed attribute (reading it would run code)"
        obj = found
    return True, obj, ""


def _bounded_repr(obj: Any, chars: int) -> dict[str, Any]:
    """``repr`` of ``obj`` in at most ``chars`` characters, with what was left out counted."""
    if type(obj) in _SIZED and not isinstance(obj, (str, bytes, bytearray, range)):
        # A large list's full repr would take long; reprlib abbreviates it and says so.
        shortened = reprlib.Repr()
        shortened.maxlist = shortened.maxtuple = shortened.maxset = 20
        shortened.maxfrozenset = shortened.maxdict = 20
        shortened.maxstring = shortened.maxother = 80
        text = shortened.repr(obj)
        abbreviated = True
    else:
        text = repr(obj)
        abbreviated = False
    if not isinstance(text, str):
        raise TypeError("__repr__ returned a non-string")
    out: dict[str, Any] = {"repr": text[:chars], "reprOmittedChars": max(0, len(text) - chars)}
    if abbreviated:
        out["reprAbbreviated"] = True
    return out


def _json_value(value: Any) -> Any:
    """One value of a head as JSON: numbers, text and booleans as they are, else a repr."""
    if value is None or isinstance(value, bool):
        return value
    if type(value) is int or (isinstance(value, int) and type(value).__module__ == "numpy"):
        return int(value)
    if isinstance(value, float):
        number = float(value)
        return number if math.isfinite(number) else repr(number)
    text = value if type(value) is str else repr(value)
    if len(text) > _CELL_CHARS:
        return {"text": text[:_CELL_CHARS], "omittedChars": len(text) - _CELL_CHARS}
    return text


def _describe_frame(obj: Any, out: dict[str, Any], budget: int, null_seconds: float) -> None:
    frame_cls = _library_class("pandas", "DataFrame")
    assert frame_cls is not None
    columns = list(frame_cls.columns.__get__(obj))  # type: ignore[attr-defined]
    dtypes = list(frame_cls.dtypes.fget(obj))  # type: ignore[attr-defined]
    described = [
        {"name": _json_value(c), "dtype": str(d), "nulls": None}
        for c, d in zip(columns, dtypes)  # noqa: B905 (kernels on Python 3.9 too)
    ]
    deadline = time.monotonic() + null_seconds
    counted = 0
    rows_total = int(frame_cls.shape.fget(obj)[0])  # type: ignore[attr-defined]
    for index, column in enumerate(described):
        if rows_total > NULL_ROWS or time.monotonic() > deadline:
            break
        series = frame_cls.iloc.fget(obj)[:, index]  # type: ignore[attr-defined]
        column["nulls"] = int(series.isna().sum())
        counted += 1
    out["nullsNotCounted"] = len(described) - counted
    head = frame_cls.head(obj, _HEAD_ROWS)  # type: ignore[attr-defined]
    rows = [[_json_value(v) for v in row] for row in head.itertuples(index=False, name=None)]
    index_values = [_json_value(v) for v in head.index]
    out["columns"] = described
    out["columnsOmitted"] = 0
    out["head"] = [{"index": i, "values": r} for i, r in zip(index_values, rows)]  # noqa: B905
    out["headRowsOmitted"] = 0
    # Fit the budget: rows go first (from the end), then the columns that no row shows.
    while _size(out) > budget and out["head"]:
        out["head"].pop()
        out["headRowsOmitted"] += 1
    while _size(out) > budget and out["columns"]:
        out["columns"].pop()
        out["columnsOmitted"] += 1


def _describe_series(obj: Any, out: dict[str, Any], budget: int) -> None:
    series_cls = _library_class("pandas", "Series")
    assert series_cls is not None
    out["dtype"] = str(series_cls.dtype.fget(obj))  # type: ignore[attr-defined]
    length = int(series_cls.shape.fget(obj)[0])  # type: ignore[attr-defined]
    # null: not counted (a Series longer than NULL_ROWS).
    out["nulls"] = int(series_cls.isna(obj).sum()) if length <= NULL_ROWS else None  # type: ignore[attr-defined]
    head = series_cls.head(obj, _HEAD_ROWS)  # type: ignore[attr-defined]
    out["head"] = [{"index": _json_value(i), "value": _json_value(v)} for i, v in head.items()]
    out["headRowsOmitted"] = 0
    while _size(out) > budget and out["head"]:
        out["head"].pop()
        out["headRowsOmitted"] += 1


def describe(ns: dict[str, Any], path: str, budget: int, null_seconds: float) -> dict[str, Any]:
    """One variable, described within ``budget``."""
    found, obj, why = _resolve(ns, path)
    if not found:
        return {"name": path, "found": False, "reason": why}
    kind = _kind(obj)
    shape, length, size = _shape_and_bytes(obj, kind)
    out: dict[str, Any] = {
        "name": path,
        "found": True,
        "type": _type_name(type(obj)),
        "kind": kind,
        "shape": shape,
        "length": length,
        "bytes": size,
    }
    if kind == "dataframe":
        _describe_frame(obj, out, budget, null_seconds)
    elif kind == "series":
        _describe_series(obj, out, budget)
    else:
        if kind == "array":
            ndarray = _library_class("numpy", "ndarray")
            out["dtype"] = str(ndarray.dtype.__get__(obj))  # type: ignore[union-attr]
        room = max(0, budget - _size(out) - 64)
        try:
            out.update(_bounded_repr(obj, room))
        except _TimeLimit:
            # The object's repr hangs: stop the alarm and answer with what is known.
            _disarm()
            out["repr"] = None
            out["reprError"] = "timed out"
        except BaseException as err:  # noqa: BLE001 - any failure of the object's own code
            out["repr"] = None
            out["reprError"] = type(err).__name__
        while _size(out) > budget and out.get("repr"):
            # Characters outside the ASCII range weigh more than one byte each.
            cut = max(1, len(out["repr"]) // 8)
            out["reprOmittedChars"] += cut
            out["repr"] = out["repr"][:-cut]
    return out


def _disarm() -> None:
    if threading.current_thread() is threading.main_thread() and hasattr(signal, "SIGALRM"):
        signal.setitimer(signal.ITIMER_REAL, 0, 0)


def answer(request_json: str, ns: dict[str, Any]) -> str:
    """Run one request (``{"op": "list" | "describe", ...}``) and answer it as JSON.

    The time limit is the request's ``seconds``: an alarm in the main thread ends whatever
    runs then (a ``repr`` that hangs) with ``{"timedOut": true}``, and the alarm and the
    signal handler that were there before are put back.
    """
    request = json.loads(request_json)
    seconds = float(request["seconds"])
    armed = threading.current_thread() is threading.main_thread() and hasattr(signal, "SIGALRM")
    previous_handler: Any = None
    previous_timer = (0.0, 0.0)

    def stop(signum: int, frame: Any) -> None:
        raise _TimeLimit()

    if armed:
        previous_handler = signal.signal(signal.SIGALRM, stop)
        # It fires again every 50 ms, in case a bare ``except:`` in the object swallowed it.
        previous_timer = signal.setitimer(signal.ITIMER_REAL, seconds, 0.05)
    try:
        if request["op"] == "list":
            result = list_variables(ns, int(request["budget"]))
        else:
            result = describe(
                ns, str(request["name"]), int(request["budget"]), float(request["nullSeconds"])
            )
    except _TimeLimit:
        result = {"timedOut": True}
    except Exception as err:  # noqa: BLE001 - the answer says what failed, never raises
        result = {"failed": type(err).__name__}
    finally:
        if armed:
            signal.setitimer(signal.ITIMER_REAL, *previous_timer)
            # None: the handler was not set from Python; the default is what was there.
            signal.signal(
                signal.SIGALRM, signal.SIG_DFL if previous_handler is None else previous_handler
            )
    return json.dumps(result, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
