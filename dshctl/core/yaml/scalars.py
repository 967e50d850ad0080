"""Scalar typing of the entry-list dialect: js-yaml 4's JSON_SCHEMA, and keys as JavaScript sees them.

Split from dialect.py so the emitter and the span builder share the exact rules the reader uses.
"""
from __future__ import annotations

import math
import re
from typing import Any

from dshctl.errors import Loc, ParseError

STD_TAG = "tag:yaml.org,2002:"

_INT_RE = re.compile(r"[-+]?(?:[0-9]+|0b[01]+|0o[0-7]+|0x[0-9a-fA-F]+)\Z")
_FLOAT_RE = re.compile(
    r"(?:[-+]?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?"
    r"|\.[0-9]+(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)"
    r"|\.(?:nan|NaN|NAN))\Z"
)
_SPECIAL_FLOAT_RE = re.compile(r"(?:[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))\Z")
_NULLS = frozenset(["", "~", "null", "Null", "NULL"])
_TRUES = frozenset(["true", "True", "TRUE"])
_FALSES = frozenset(["false", "False", "FALSE"])


def resolve_plain(text: str) -> Any:
    """The value js-yaml's JSON_SCHEMA gives a plain (unquoted, untagged) scalar."""
    if text in _NULLS:
        return None
    if text in _TRUES:
        return True
    if text in _FALSES:
        return False
    c = text[0]
    if c.isdigit() or c in "+-.":
        if _INT_RE.match(text):
            value = _to_int(text)
            # js-yaml 4.2's int and float types refuse a number that overflows a double (its float
            # pattern then fails too, or parseFloat gives Infinity): `1e400` and a 400-digit
            # integer stay strings. Found by tests/test_patching_node.py.
            return value if _fits_double(value) else text
        if _FLOAT_RE.match(text):
            value = _to_float(text)
            return value if _fits_double(value) or _SPECIAL_FLOAT_RE.match(text) else text
    return text


def _fits_double(value: int | float) -> bool:
    """True when ``value`` is finite as a JavaScript number (js-yaml's ``Number.isFinite`` check)."""
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


# More significant decimal digits than this is beyond any double (and beyond Python's int-from-text
# limit of 4,300 digits, which would raise ValueError): such a number is +-Infinity in JavaScript.
_MAX_DOUBLE_DIGITS = 309


def _to_int(text: str) -> int | float:
    sign = -1 if text[0] == "-" else 1
    body = text[1:] if text[0] in "+-" else text
    if body[:2] == "0b":
        return sign * int(body[2:], 2)
    if body[:2] == "0o":
        return sign * int(body[2:], 8)
    if body[:2] == "0x":
        return sign * int(body[2:], 16)
    if len(body.lstrip("0")) > _MAX_DOUBLE_DIGITS:
        return sign * math.inf
    return sign * int(body, 10)  # "010" is ten, as in js-yaml 4


def _to_float(text: str) -> float:
    low = text.lower()
    if low.endswith(".inf"):
        return -math.inf if text[0] == "-" else math.inf
    if low == ".nan":
        return math.nan
    return float(text)


def explicit_value(tag: str, text: str, loc: Loc) -> Any:
    """The value of a scalar with an explicit standard tag (``!!str``, ``!!int`` ...)."""
    kind = tag[len(STD_TAG):] if tag.startswith(STD_TAG) else None
    if kind == "str":
        return text
    if kind == "null" and text in _NULLS:
        return None
    if kind == "bool" and (text in _TRUES or text in _FALSES):
        return text in _TRUES
    if kind == "int" and _INT_RE.match(text) and _fits_double(_to_int(text)):
        return _to_int(text)
    # js-yaml's float type takes decimal text only (`!!float 0x1F` is an error) and, like the
    # int type, refuses a value that overflows a double (`!!float 1e400`).
    if kind == "float" and _FLOAT_RE.match(text):
        value = _to_float(text)
        if _fits_double(value) or _SPECIAL_FLOAT_RE.match(text):
            return value
    if kind in ("null", "bool", "int", "float"):
        raise ParseError(f"cannot resolve a node with !<{tag}> explicit tag", loc=loc,
                         hint=f"the text is not a valid !!{kind}; fix it or drop the tag")
    raise ParseError(f"unknown tag !<{tag}>", loc=loc,
                     hint="the dsh dialect knows only the JSON-schema tags and !!js")


def js_key(value: Any, loc: Loc) -> str:
    """A mapping key as JavaScript sees it: every key is a string."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return js_number(value)
    raise ParseError("complex mapping keys are not supported", loc=loc,
                     hint="use a plain string as the key")


def js_number(value: float) -> str:
    """``String(value)`` in JavaScript (``1e-05`` is ``0.00001`` there)."""
    from dshctl.core.yaml.jsvalue import number_text

    return number_text(value)
