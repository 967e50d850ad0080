"""JavaScript value semantics the patcher depends on, over the node model.

dsh's patcher is JavaScript: ids are ``Map`` keys (SameValueZero, so ``7`` and ``"7"`` differ), the name
guard is ``!==``, warnings print ids with ``JSON.stringify`` and the dump compares rows by their
``JSON.stringify`` text. These helpers reproduce exactly those operations for loaded values.
"""
from __future__ import annotations

import json
import math
import re
from typing import Any

from dshctl.core.nodes import JsExpr

_ARRAY_INDEX = re.compile(r"(?:0|[1-9][0-9]*)\Z")


def is_object(value: Any) -> bool:
    """True for what JavaScript treats as an object (mapping, array, ``!!js`` node)."""
    return isinstance(value, (dict, list, JsExpr))


def map_key(value: Any) -> Any:
    """A hashable key with JavaScript ``Map`` (SameValueZero) identity for ``value``."""
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, (int, float)):
        f = float(value) if not isinstance(value, float) else value
        return ("nan",) if f != f else ("n", f + 0.0)  # -0 and +0 are one key
    if isinstance(value, str):
        return ("s", value)
    if value is None:
        return ("null",)
    return ("o", id(value))  # objects match only themselves


def strict_equal(a: Any, b: Any) -> bool:
    """JavaScript ``a === b``."""
    if is_object(a) or is_object(b):
        return a is b
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)  # NaN !== NaN falls out of float comparison
    return type(a) is type(b) and a == b


def number_text(value: float | int) -> str:
    """``String(n)`` for a JavaScript number (close enough for ids and config values)."""
    f = float(value)
    if f != f:
        return "NaN"
    if math.isinf(f):
        return "Infinity" if f > 0 else "-Infinity"
    if f == int(f) and abs(f) < 1e21:
        return str(int(f))
    text = repr(f)
    if "e" in text:  # 1e-07 -> 1e-7, 1e+22 -> 1e+22
        mant, exp = text.split("e")
        sign = "-" if exp.startswith("-") else "+"
        text = f"{mant.removesuffix('.0')}e{sign}{int(exp.lstrip('+-'))}"
    return text


def _ordered_keys(keys: list[str]) -> list[str]:
    # JavaScript enumerates integer-like keys first, ascending, then the rest in insertion order.
    index_keys = [k for k in keys if _ARRAY_INDEX.match(k) and int(k) < 2**32 - 1]
    if not index_keys:
        return keys
    rest = [k for k in keys if k not in set(index_keys)]
    return sorted(index_keys, key=int) + rest


def to_json(value: Any) -> str:
    """``JSON.stringify(value)`` (compact); ``None`` for JavaScript ``undefined`` is not modelled."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        f = float(value)
        return "null" if (f != f or math.isinf(f)) else number_text(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, JsExpr):
        return '{"__jsExpr":' + json.dumps(value.expr, ensure_ascii=False) + "}"
    if isinstance(value, dict):
        keys = _ordered_keys(list(value.keys()))
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + to_json(value[k])
                              for k in keys) + "}"
    if isinstance(value, list):
        return "[" + ",".join(to_json(v) for v in value) + "]"
    raise TypeError(f"not a loaded value: {type(value).__name__}")


def format_arg(value: Any, present: bool = True) -> str:
    """How dsh's dump prints a ``%C`` warning argument: JSON, or ``undefined`` when absent."""
    return to_json(value) if present else "undefined"
