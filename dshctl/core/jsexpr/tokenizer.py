"""Split a ``!!js`` expression into tokens. Everything JavaScript has but the subset lacks gets a
specific message here or in the parser, so users learn what to write instead."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from collections.abc import Iterator
from typing import Any

from dshctl.core.jsexpr.errors import JsSyntaxError
from dshctl.core.jsexpr.values import normalize_number

# JavaScript whitespace and line terminators (block scalars may span lines).
_SPACE_RE = re.compile(r"[ \t\n\r\v\f\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+")
_IDENT_RE = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_DIGITS = r"[0-9](?:_?[0-9])*"
_NUMBER_RE = re.compile(
    r"0[xX][0-9a-fA-F](?:_?[0-9a-fA-F])*|0[oO][0-7](?:_?[0-7])*|0[bB][01](?:_?[01])*"
    rf"|(?:(?:0|[1-9](?:_?[0-9])*)(?:\.(?:{_DIGITS})?)?|\.{_DIGITS})(?:[eE][+-]?{_DIGITS})?"
)
# Longest first, so '===' wins over '==' and '??' over '?'.
_PUNCTUATORS = ("===", "!==", "??", "||", "&&", "?.", "==", "!=", "?", ":", "!", "(", ")", ".",
                ",", "[", "]", "-")
_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "n": "\n"}
# Operators JavaScript has and the subset refuses, with what to say about them.
_FOREIGN = {
    "+": "operator '+'", "*": "operator '*'", "/": "operator '/'", "%": "operator '%'",
    "<": "comparison '<'", ">": "comparison '>'", "=": "assignment '='", "`": "template literals",
    "{": "object literals", "}": "object literals", ";": "statements", "|": "operator '|'",
    "&": "operator '&'", "^": "operator '^'", "~": "operator '~'",
}


@dataclass(frozen=True)
class Token:
    kind: str      # "str", "num", "ident", "punct", "end"
    text: str      # source text (for strings and numbers: the raw literal)
    value: Any     # decoded string or number; the punctuator or identifier otherwise
    column: int    # 1-based


def iter_tokens(expr: str) -> Iterator[Token]:
    """Tokens one at a time, ending with an "end" token. Lazy, so that the parser reports the first
    problem in reading order rather than a bad character further on."""
    pos = 0
    while True:
        space = _SPACE_RE.match(expr, pos)
        if space:
            pos = space.end()
        if pos >= len(expr):
            yield Token("end", "", None, pos + 1)
            return
        token = _next_token(expr, pos)
        yield token
        pos += len(token.text)


def tokenize(expr: str) -> list[Token]:
    return list(iter_tokens(expr))


def _next_token(expr: str, pos: int) -> Token:
    ch = expr[pos]
    col = pos + 1
    if ch in "'\"":
        return _string(expr, pos)
    if ch.isdigit() or (ch == "." and expr[pos + 1:pos + 2].isdigit()):
        return _number(expr, pos)
    ident = _IDENT_RE.match(expr, pos)
    if ident:
        return Token("ident", ident.group(), ident.group(), col)
    if expr.startswith(("//", "/*"), pos):
        raise JsSyntaxError("comments are not supported", col)
    for punct in _PUNCTUATORS:
        if expr.startswith(punct, pos):
            if punct == "?." and expr[pos + 2:pos + 3].isdigit():
                continue  # `a?.5:b` is a conditional, as in JavaScript
            return Token("punct", punct, punct, col)
    if expr.startswith("=>", pos):
        raise JsSyntaxError("arrow functions are not supported", col)
    if ch in _FOREIGN:
        raise JsSyntaxError(f"{_FOREIGN[ch]} is not supported", col)
    raise JsSyntaxError(f"unexpected character {ch!r}", col)


def _string(expr: str, pos: int) -> Token:
    quote = expr[pos]
    out: list[str] = []
    i = pos + 1
    while i < len(expr):
        ch = expr[i]
        if ch == quote:
            return Token("str", expr[pos:i + 1], "".join(out), pos + 1)
        if ch in "\n\r":
            break
        if ch == "\\":
            esc = expr[i + 1:i + 2]
            if esc not in _ESCAPES:
                raise JsSyntaxError(f"escape '\\{esc}' is not supported "
                                    "(only \\\\ \\' \\\" and \\n)", i + 1)
            out.append(_ESCAPES[esc])
            i += 2
            continue
        out.append(ch)
        i += 1
    raise JsSyntaxError("unterminated string literal", pos + 1)


def _number(expr: str, pos: int) -> Token:
    m = _NUMBER_RE.match(expr, pos)
    assert m is not None  # the caller saw a digit or '.digit'
    text = m.group()
    after = expr[m.end():m.end() + 1]
    if after == "n":
        raise JsSyntaxError("BigInt literals are not supported", pos + 1)
    if after and (after.isalnum() or after in "_$."):
        # e.g. `3in`, `1.2.3`, `08` (a legacy octal, a SyntaxError in strict mode)
        raise JsSyntaxError("invalid number literal", pos + 1)
    digits = text.replace("_", "")
    if digits[:2].lower() in ("0x", "0o", "0b"):
        try:
            number = float(int(digits, 0))
        except OverflowError:  # beyond a double: JavaScript's number is Infinity
            number = math.inf
    else:
        number = float(digits)
    return Token("num", text, normalize_number(number), pos + 1)
