"""JavaScript's view of a string: UTF-16 code units, so widths and columns count what js-yaml counts.

``to_utf16`` spells every astral character as its two surrogates; ``from_utf16`` joins the pairs
again and leaves lone surrogates alone.
"""
from __future__ import annotations


def to_utf16(s: str) -> str:
    if all(ord(ch) < 0x10000 for ch in s):
        return s
    out = []
    for ch in s:
        o = ord(ch)
        if o < 0x10000:
            out.append(ch)
        else:
            o -= 0x10000
            out.append(chr(0xD800 + (o >> 10)) + chr(0xDC00 + (o & 0x3FF)))
    return "".join(out)


def from_utf16(s: str) -> str:
    if not any(0xD800 <= ord(ch) <= 0xDFFF for ch in s):
        return s
    return s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def utf16_len(s: str) -> int:
    return len(s) + sum(1 for ch in s if ord(ch) > 0xFFFF)
