"""Write values back out in the entry-list dialect (block style, js-yaml's layout).

Used for generated output (``profile dump``, new files). Editing an existing file goes through
``roundtrip`` instead, which keeps comments and formatting. Every string is written so that
``dialect.load_yaml`` reads back exactly the same value: plain when that is unambiguous, else
double-quoted with escapes, or a literal block for multi-line text.
"""
from __future__ import annotations

import functools
import math
import re
from typing import Any

from dshctl.core.yaml.nodes import JsExpr
from dshctl.core.yaml.scalars import resolve_plain

_INDICATORS = set("-?:,[]{}#&*!|>'\"%@`")
_UNSAFE_IN_PLAIN = re.compile(r": |:$| #|[\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff]")
_PRINTABLE_BLOCK = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff]")


@functools.lru_cache(maxsize=16384)  # keys and names repeat on every row of a dump
def _plain_ok(s: str, *, typed: bool = True) -> bool:
    if not s or s != s.strip() or s[0] in _INDICATORS and not _dash_like(s):
        return False
    if _UNSAFE_IN_PLAIN.search(s) or s.startswith(("- ", "? ", ": ", "---", "...")):
        return False
    if s.endswith(":") or "\t" in s:
        return False
    return not typed or isinstance(resolve_plain(s), str)


def _dash_like(s: str) -> bool:
    # "-x" and "?x" / ":x" are plain-safe when not followed by a space (e.g. "-foo", ":bar" is not).
    return s[0] in "-?" and len(s) > 1 and s[1] not in " \t"


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t"}
_NEEDS_ESCAPE = re.compile('["\\\\\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff]')


def _escape(match: re.Match) -> str:
    ch = match.group(0)
    return _ESCAPES.get(ch) or f"\\u{ord(ch):04x}"


def quote(s: str) -> str:
    """A double-quoted YAML scalar that reads back as exactly ``s``."""
    return '"' + _NEEDS_ESCAPE.sub(_escape, s) + '"'


def scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        text = repr(value)
        return text if ("." in text or "e" in text) else text + ".0"
    if isinstance(value, JsExpr):
        return "!!js " + (value.expr if _plain_ok(value.expr, typed=False) else quote(value.expr))
    if isinstance(value, str):
        return value if _plain_ok(value) else quote(value)
    raise TypeError(f"cannot write a {type(value).__name__} in the entry-list dialect")


def _block_ok(s: str) -> bool:
    if "\n" not in s.rstrip("\n") or s[0] in " \t" or _PRINTABLE_BLOCK.search(s):
        return False
    lines = s.split("\n")
    return all(line == line.rstrip(" \t") and (line or True) for line in lines) and not s.startswith("\n")


def _block(s: str, indent: int) -> str:
    stripped = s.rstrip("\n")
    trailing = len(s) - len(stripped)
    chomp = "-" if trailing == 0 else ("" if trailing == 1 else "+")
    pad = " " * indent
    body = "\n".join((pad + line) if line else "" for line in stripped.split("\n"))
    extra = "\n" * (trailing - 1) if trailing > 1 else ""
    return f"|{chomp}\n{body}{extra}"


def _key(k: str) -> str:
    return k if _plain_ok(k) else quote(k)


def _emit(value: Any, indent: int, out: list[str], lead: str, seq_indent: int = 2) -> None:
    """Append ``value`` to ``out``; ``lead`` is what precedes it on its first line."""
    pad = " " * indent
    if isinstance(value, dict) and value:
        first = True
        for k, v in value.items():
            prefix = lead if first else pad
            first = False
            _pair(k, v, indent, out, prefix, seq_indent)
        return
    if isinstance(value, list) and value:
        first = True
        for item in value:
            prefix = lead if first else pad
            first = False
            _emit(item, indent + 2, out, prefix + "- ", seq_indent)
        return
    if isinstance(value, dict):
        out.append(lead + "{}")
    elif isinstance(value, list):
        out.append(lead + "[]")
    elif isinstance(value, str) and not isinstance(value, JsExpr) and not _plain_ok(value) \
            and _block_ok(value):
        out.append(lead + _block(value, indent))
    else:
        out.append(lead + scalar(value))


def _pair(k: str, v: Any, indent: int, out: list[str], prefix: str, seq_indent: int = 2) -> None:
    head = prefix + _key(str(k)) + ":"
    if isinstance(v, dict) and v:
        out.append(head)
        _emit(v, indent + 2, out, " " * (indent + 2), seq_indent)
    elif isinstance(v, list) and v:
        out.append(head)
        _emit(v, indent + seq_indent, out, " " * (indent + seq_indent), seq_indent)
    else:
        _emit(v, indent + 2, out, head + " ", seq_indent)


def dump(value: Any, *, seq_indent: int = 2) -> str:
    """The whole document as text, ending in a newline.

    ``seq_indent`` is how far a list under a mapping key is indented: 2 (``key:\n  - x``, the
    default) or 0 (``key:\n- x``), so edits can follow a file's own style."""
    out: list[str] = []
    _emit(value, 0, out, "", seq_indent)
    return "\n".join(out) + "\n"


def dump_rows(rows: list) -> str:
    """A list of rows; an empty list is ``[]``."""
    return dump(list(rows))
