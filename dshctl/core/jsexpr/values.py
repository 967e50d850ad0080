"""JavaScript value semantics over Python values.

Mapping: ``undefined`` -> UNDEFINED, ``null`` -> None, booleans -> bool, numbers -> int/float (never
bool), strings -> str; everything else (dicts, lists, service objects) is an object.
"""
from __future__ import annotations

import math
from typing import Any


class _Undefined:
    """JavaScript's ``undefined``: a singleton distinct from None (``null``)."""

    __slots__ = ()
    _instance: "_Undefined | None" = None

    def __new__(cls) -> "_Undefined":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNDEFINED"

    def __bool__(self) -> bool:  # so a careless `if value:` still behaves like JavaScript
        return False

    def __reduce__(self):
        return (_Undefined, ())


UNDEFINED = _Undefined()


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_nullish(value: Any) -> bool:
    return value is None or value is UNDEFINED


def truthy(value: Any) -> bool:
    """JavaScript truthiness: '', 0, -0, NaN, false, null and undefined are falsy; objects are truthy."""
    if value is None or value is UNDEFINED or value is False:
        return False
    if value is True:
        return True
    if is_number(value):
        return not (value == 0 or math.isnan(value))
    if isinstance(value, str):
        return value != ""
    return True


def strict_equals(a: Any, b: Any) -> bool:
    """``a === b``: same type, then numbers numerically (NaN unequal to itself), objects by identity."""
    if is_number(a) and is_number(b):
        return a == b
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    return a is b  # null, undefined and objects


def normalize_number(value: float) -> int | float:
    """A JavaScript number as the friendliest Python value: integral doubles become ints."""
    if math.isfinite(value) and value.is_integer() and abs(value) <= 2**53:
        return int(value)
    return value

