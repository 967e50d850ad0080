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

from dshctl.core.yaml.nodes import JsExpr

_ARRAY_INDEX = re.compile(r"(?:0|[1-9][0-9]*)\Z")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def escape_surrogates(json_text: str) -> str:
    """JSON text with every lone surrogate written as ``\\uXXXX``, as ``JSON.stringify`` does.

    A lone surrogate is a valid JavaScript string (``"\\ud800"`` in a YAML or JSON file) but cannot be
    encoded as UTF-8; in JSON it only ever sits inside a string, where the escape means the same."""
    if json_text.isascii():
        return json_text
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", json_text)


def json_dumps(value: Any, **options: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, **options)`` that UTF-8 can always encode."""
    return escape_surrogates(json.dumps(value, ensure_ascii=False, **options))


def is_object(value: Any) -> bool:
    """True for what JavaScript treats as an object (mapping, array, ``!!js`` node)."""
    return isinstance(value, (dict, list, JsExpr))


def map_key(value: Any) -> Any:
    """A hashable key with JavaScript ``Map`` (SameValueZero) identity for ``value``."""
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, (int, float)):
        f = js_number(value)
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
        return js_number(a) == js_number(b)  # NaN !== NaN falls out of float comparison
    return type(a) is type(b) and a == b


def js_number(value: float | int) -> float:
    """``value`` as a JavaScript number (a double; integers too large for one are +-Infinity)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def number_text(value: float | int) -> str:
    """``Number::toString`` (ECMAScript 6.1.6.1.20): ``String(n)`` and ``JSON.stringify`` of a number."""
    f = js_number(value)
    if f != f:
        return "NaN"
    if math.isinf(f):
        return "Infinity" if f > 0 else "-Infinity"
    if f == 0:
        return "0"  # -0 too
    sign = "-" if f < 0 else ""
    # repr() gives the shortest round-tripping digits, as JavaScript does; only the layout differs.
    digits, exponent = _shortest_digits(abs(f))
    k, n = len(digits), len(digits) + exponent  # value = 0.digits * 10**n
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = f"{digits[:n]}.{digits[n:]}"
    elif -6 < n <= 0:
        text = "0." + "0" * -n + digits
    else:
        mantissa = digits if k == 1 else f"{digits[0]}.{digits[1:]}"
        text = f"{mantissa}e{'+' if n - 1 >= 0 else '-'}{abs(n - 1)}"
    return sign + text


def _shortest_digits(f: float) -> tuple[str, int]:
    """(significant digits without trailing zeros, exponent) with ``f == int(digits) * 10**exponent``."""
    mantissa, _, power = repr(f).partition("e")  # repr: the shortest digits that round-trip
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    stripped = digits.rstrip("0")
    return stripped, (int(power) if power else 0) - len(fraction) + len(digits) - len(stripped)


def has_index_key(mapping: dict) -> bool:
    """True when some key is an array index, which JavaScript enumerates before all others."""
    for key in mapping:
        if type(key) is str and "0" <= key[:1] <= "9" and _is_index(key):
            return True
    return False


def _is_index(key: str) -> bool:
    return bool(_ARRAY_INDEX.match(key)) and int(key) < 2**32 - 1


def js_key_order(keys: list[str]) -> list[str]:
    """Keys in JavaScript's enumeration order: array indices ascending, then the rest as inserted."""
    index_keys = [k for k in keys if type(k) is str and _is_index(k)]
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
        f = js_number(value)
        return "null" if (f != f or math.isinf(f)) else number_text(f)
    if isinstance(value, str):
        return json_dumps(value)
    if isinstance(value, JsExpr):
        return '{"__jsExpr":' + json_dumps(value.expr) + "}"
    if isinstance(value, dict):
        keys = js_key_order(list(value.keys()))
        return "{" + ",".join(json_dumps(k) + ":" + to_json(value[k])
                              for k in keys) + "}"
    if isinstance(value, list):
        return "[" + ",".join(to_json(v) for v in value) + "]"
    raise TypeError(f"not a loaded value: {type(value).__name__}")


def format_arg(value: Any, present: bool = True) -> str:
    """How dsh's dump prints a ``%C`` warning argument: JSON, or ``undefined`` when absent."""
    return to_json(value) if present else "undefined"
