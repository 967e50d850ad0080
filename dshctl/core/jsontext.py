"""Indented JSON, byte for byte what ``json.dumps(value, indent=N, …)`` writes, several times faster.

The stdlib's indenting encoder is pure Python (one generator step per value). Here a container whose
items are all plain scalars (or empty containers) is written by the C encoder in one call, with
separators that carry the newline and the indentation of its level; only containers holding non-empty
containers are walked in Python. Anything unusual (a key that is not a string, a value of another
type, a cycle) is handed to ``json.dumps`` itself. tests/test_jsontext.py compares both on generated
values.
"""
from __future__ import annotations

import json
from typing import Any, Callable

_SCALARS = frozenset({str, int, float, bool, type(None)})
_ARRAYS = (list, tuple)


class _Unusual(Exception):
    """A value this encoder does not write itself: ``json.dumps`` does."""


def dumps_indented(value: Any, indent: int = 2, *, default: Callable[[Any], Any] | None = None,
                   allow_nan: bool = True, ensure_ascii: bool = False) -> str:
    """``json.dumps(value, indent=indent, default=default, allow_nan=allow_nan,
    ensure_ascii=ensure_ascii)``: same text, same errors."""
    writer = _Writer(indent, default, allow_nan, ensure_ascii)
    try:
        return writer.write(value, 0)
    except (_Unusual, RecursionError):
        return json.dumps(value, indent=indent, default=default, allow_nan=allow_nan,
                          ensure_ascii=ensure_ascii)


_EMPTY_OK = frozenset({list, tuple, dict})


def _flat(values) -> bool:
    """Every value a plain scalar or an empty list/tuple/dict (one C encoder call writes them)."""
    for v in values:
        kind = type(v)
        if kind in _SCALARS or (kind in _EMPTY_OK and not v):
            continue
        return False
    return True


def _flat_mapping(value: dict) -> bool:
    """A mapping of string keys to flat values (raises _Unusual for a key that is not a string)."""
    flat = True
    for k, v in value.items():
        if type(k) is not str:
            raise _Unusual  # json turns keys into strings its own way; let it
        kind = type(v)
        if flat and not (kind in _SCALARS or (kind in _EMPTY_OK and not v)):
            flat = False
    return flat


class _Writer:
    def __init__(self, indent: int, default, allow_nan: bool, ensure_ascii: bool):
        self.indent, self.default = indent, default
        self.allow_nan, self.ensure_ascii = allow_nan, ensure_ascii
        self.flat_encoders: dict[int, Callable[[Any], str]] = {}

    def encoder(self, level: int) -> Callable[[Any], str]:
        """The C encoder whose item separator is the newline and indentation of ``level``."""
        enc = self.flat_encoders.get(level)
        if enc is None:
            enc = self.flat_encoders[level] = _c_encoder(
                ",\n" + " " * (self.indent * level), self.default, self.allow_nan, self.ensure_ascii)
        return enc

    def write(self, value: Any, level: int) -> str:
        kind = type(value)
        if kind in _SCALARS:
            return self.encoder(0)(value)
        if kind is dict or isinstance(value, dict):
            return self._mapping(value, level) if value else "{}"
        if kind in _ARRAYS or isinstance(value, list):
            return self._array(value, level) if value else "[]"
        raise _Unusual

    def _mapping(self, value: dict, level: int) -> str:
        inner, outer = " " * (self.indent * (level + 1)), " " * (self.indent * level)
        if _flat_mapping(value):
            text = self.encoder(level + 1)(value)      # '{"a": 1,\n<inner>"b": 2}'
            return "{\n" + inner + text[1:-1] + "\n" + outer + "}"
        key = self.encoder(0)
        parts = [key(k) + ": " + self.write(v, level + 1) for k, v in value.items()]
        return "{\n" + inner + (",\n" + inner).join(parts) + "\n" + outer + "}"

    def _array(self, value, level: int) -> str:
        inner, outer = " " * (self.indent * (level + 1)), " " * (self.indent * level)
        if _flat(value):
            text = self.encoder(level + 1)(value)
            return "[\n" + inner + text[1:-1] + "\n" + outer + "]"
        # the usual case, a list of flat objects (one per preset, row…), without a call per item
        head, tail, flat_items = "{\n" + " " * (self.indent * (level + 2)), "\n" + inner + "}", self.encoder(level + 2)
        parts = [head + flat_items(v)[1:-1] + tail if type(v) is dict and v and _flat_mapping(v)
                 else self.write(v, level + 1) for v in value]
        return "[\n" + inner + (",\n" + inner).join(parts) + "\n" + outer + "]"


def _c_encoder(item_separator: str, default, allow_nan: bool, ensure_ascii: bool) -> Callable[[Any], str]:
    """``JSONEncoder(separators=(item_separator, ": "), …).encode``, with the C encoder built once
    (``JSONEncoder.encode`` builds it again on every call, which costs more than a small object)."""
    from json import encoder as stdlib

    plain = json.JSONEncoder(ensure_ascii=ensure_ascii, allow_nan=allow_nan, default=default,
                             separators=(item_separator, ": "))
    if stdlib.c_make_encoder is None:  # an interpreter without the C accelerator
        return plain.encode
    strings = stdlib.c_encode_basestring_ascii if ensure_ascii else stdlib.c_encode_basestring
    c_encode = stdlib.c_make_encoder({}, plain.default, strings, None, ": ", item_separator, False, False,
                                     allow_nan)

    def encode(value: Any) -> str:
        if isinstance(value, str):
            return strings(value)
        return "".join(c_encode(value, 0))

    return encode
