"""The tokens of one line for ``blockscan``: plain and quoted scalars, ``key:`` detection, flow
sequences. Pure functions of the line's text; each raises ``Unsupported`` for anything outside the
block-style subset, so the event builder reads the file instead."""
from __future__ import annotations

import re

from dshctl.core.yaml.scalars import resolve_plain

_MISSING = object()


class Unsupported(Exception):
    """The text leaves the subset: the event builder reads it."""


# Text libyaml might read differently from js-yaml in flow context; the event builder then uses
# ruamel's pure parser (events.py), so this reader leaves such text alone too.
FLOW_QUERY_OR_DASH = re.compile(r"(?:^|[\[{,\s])\?[^\s?]|-[,\]}]")
# Anything but a line feed and the characters YAML and js-yaml print as they are (so no tab, CR,
# NEL, line/paragraph separators, BOM, controls, lone surrogates): the event builder decides.
_UNUSUAL_CHAR = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")
INDICATOR_FIRST = frozenset("[]{},#&*!|>'\"%@`")
SPACE_FOLLOWED_FIRST = frozenset("-?:")  # indicators only when a space or the line end follows
FLOW_ITEM_STOP = re.compile(r"""[\[\]{}#:'"]""")
FLOW_BAD_FIRST = INDICATOR_FIRST | SPACE_FOLLOWED_FIRST


def flow_query_or_dash(text: str) -> bool:
    """True for text where libyaml may read a flow ``?``/``-`` differently from js-yaml."""
    if "?" not in text and "-," not in text and "-]" not in text and "-}" not in text:
        return False  # the common case, decided without the (slow, alternation-led) regex
    return FLOW_QUERY_OR_DASH.search(text) is not None


def unusual_text(text: str) -> bool:
    """True for text the subset never holds anywhere: tabs, CRs, controls... or flow ``?``/``-``."""
    return _UNUSUAL_CHAR.search(text) is not None or flow_query_or_dash(text)


def looks_like_entry(s: str, j: int) -> bool:
    """True when the text at ``j`` is ``key: ...`` (a mapping starts), False for a scalar."""
    first = s[j]
    if first == "'" or first == '"':
        close = s.find(first, j + 1)
        return close != -1 and s[close + 1:close + 2] == ":"
    colon = s.find(": ", j)
    comment = s.find(" #", j)
    if colon != -1 and (comment == -1 or colon < comment):
        return True
    end = comment if comment != -1 else len(s)
    return s[j:end].rstrip(" ").endswith(":")


def flow_parts(flow: str, cache: dict) -> tuple[list, list[int]]:
    """The items of a flow sequence and the column of each from its ``[`` (counted from 0)."""
    values: list = []
    offsets: list[int] = []
    inner = flow[1:-1]
    if not inner.strip(" "):
        return values, offsets
    start = 1
    for part in inner.split(","):
        text = part.strip(" ")
        if not text or text[0] in FLOW_BAD_FIRST:
            raise Unsupported
        value = cache.get(text, _MISSING)
        if value is _MISSING:
            value = cache[text] = resolve_plain(text)
        values.append(value)
        offsets.append(start + len(part) - len(part.lstrip(" ")))
        start += len(part) + 1
    return values, offsets


def plain_scalar(s: str, v: int) -> str:
    """A one-line plain scalar at ``v`` (to a comment or the line end)."""
    first = s[v]
    if first in INDICATOR_FIRST or (first in SPACE_FOLLOWED_FIRST and s[v + 1:v + 2] in ("", " ")):
        raise Unsupported
    end = s.find(" #", v)
    text = (s[v:] if end == -1 else s[v:end]).rstrip(" ")
    if ": " in text or text.endswith(":"):
        raise Unsupported  # a mapping where the subset expects a scalar: an error, or `? :` forms
    return text


def quoted_scalar(s: str, start: int) -> tuple[str, int]:
    """A one-line quoted scalar at ``start``: (its value, the index just past the closing quote)."""
    quote = s[start]
    if quote == "'":
        close = s.find("'", start + 1)
        while close != -1 and s[close + 1:close + 2] == "'":
            close = s.find("'", close + 2)
        if close == -1:
            raise Unsupported  # continues on the next line
        return s[start + 1:close].replace("''", "'"), close + 1
    close = s.find('"', start + 1)
    if close == -1 or "\\" in s[start + 1:close]:
        raise Unsupported  # escapes and line breaks are the event builder's
    return s[start + 1:close], close + 1


def only_comment_after(s: str, end: int) -> None:
    rest = s[end:]
    if rest and rest.strip(" ") and not (rest[0] == " " and rest.lstrip(" ")[0] == "#"):
        raise Unsupported

