"""The pieces of one line for ``blockscan``: plain and quoted scalars, ``key:`` detection, flow
sequences, the scalar value after a key or dash (``ValueReader``), and the nodes. Each raises
``Unsupported`` for anything outside the block-style subset, so the event builder reads the file
instead."""
from __future__ import annotations

import re
from typing import Any

from dshctl.core.yaml.nodes import JsExpr, YList, YMap
from dshctl.core.yaml.scalars import resolve_plain
from dshctl.errors import Loc

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


_QUERY = re.compile(r"\?[^\s?]")


def flow_query_or_dash(text: str) -> bool:
    """True for text where libyaml may read a flow ``?``/``-`` differently from js-yaml: what
    ``FLOW_QUERY_OR_DASH`` finds, decided without that alternation-led regex (slow on texts with
    many ``?``, as ``!!js`` expressions with ``??`` have)."""
    if "-," in text or "-]" in text or "-}" in text:
        return True
    if "?" not in text:
        return False
    for m in _QUERY.finditer(text):
        at = m.start()
        if not at or text[at - 1] in "[{," or text[at - 1].isspace():
            return True
    return False


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


def _after_spaces(s: str, i: int) -> int:
    n = len(s)
    while i < n and s[i] == " ":
        i += 1
    return i


def js_text(s: str, v: int) -> str:
    """The expression of a one-line ``!!js`` scalar at ``s[v]`` (plain or quoted)."""
    w = _after_spaces(s, v + 5)
    if w == len(s) or s[w] == "#":
        raise Unsupported
    if s[w] == "'" or s[w] == '"':
        text, end = quoted_scalar(s, w)
        only_comment_after(s, end)
        return text
    return plain_scalar(s, w)


class ValueReader:
    """The scalar (or ``[...]``, ``[]``, ``{}``) after a key or a dash, for ``blockscan._Reader``
    (whose ``path``, ``js``, ``line``, ``plain``, ``keys`` and ``flows`` it reads)."""

    def _value(self, s: str, v: int, loc: Loc) -> Any:
        """The one-line scalar (or ``[...]``, ``[]``, ``{}``) starting at ``v``."""
        first = s[v]
        if first == "'" or first == '"':
            text, end = quoted_scalar(s, v)
            only_comment_after(s, end)
            return text
        if first == "[":
            return self._flow_sequence(s, v, loc)
        if first == "{":
            if s[v + 1:v + 2] != "}":
                return self._flow_mapping(s, v, loc)
            only_comment_after(s, v + 2)
            return new_map(loc)
        if first == "!":
            return self._js(s, v, loc)
        if first == "|" or first == ">":
            return self._block_text(s, v, loc, False)
        text = plain_scalar(s, v)
        value = self.plain.get(text, _MISSING)
        if value is _MISSING:
            value = self.plain[text] = resolve_plain(text)
        return value

    def _js(self, s: str, v: int, loc: Loc) -> JsExpr:
        if not self.js or not s.startswith("!!js ", v):
            raise Unsupported
        w = _after_spaces(s, v + 5)
        if s[w:w + 1] in ("|", ">"):
            return self._block_text(s, w, loc, True)
        return JsExpr(js_text(s, v), loc)

    def _block_text(self, s: str, v: int, loc: Loc, js: bool) -> Any:
        """A block scalar's header: its lines follow (``blocktext``); the value is placed later."""
        from dshctl.core.yaml.blocktext import PENDING, BlockText, open_block

        self.block = BlockText(loc, js, *open_block(s, v))
        return PENDING

    def _flow_sequence(self, s: str, v: int, loc: Loc) -> YList:
        close = s.find("]", v)
        if close == -1:
            raise Unsupported
        if FLOW_ITEM_STOP.search(s, v + 1, close):  # quoted items (blockflow), or outside the subset
            from dshctl.core.yaml.blockflow import flow_sequence

            values, columns = flow_sequence(s, v, self.plain)
            seq = new_list(loc)
            seq.extend(values)
            path, line = self.path, self.line
            seq.item_locs = [Loc(path, line, at + 1) for at in columns]
            return seq
        only_comment_after(s, close + 1)
        return self._flow_items(s[v:close + 1], v, loc)

    def _flow_mapping(self, s: str, v: int, loc: Loc) -> YMap:
        from dshctl.core.yaml.blockflow import flow_mapping

        node = new_map(loc)
        path, line = self.path, self.line
        for key, key_at, value, value_at in flow_mapping(s, v, self.plain, self.keys):
            node[key] = value
            node.key_locs[key] = Loc(path, line, key_at + 1)
            node.value_locs[key] = Loc(path, line, value_at + 1)
        return node

    def _flow_items(self, flow: str, v: int, loc: Loc) -> YList:
        """``[a, b, 1]`` (``flow``, at column ``v``, holding no quote, bracket, brace, '#' or ':')."""
        seq = new_list(loc)
        known = self.flows.get(flow)
        if known is None:
            known = self.flows[flow] = flow_parts(flow, self.plain)
        values, offsets = known
        seq.extend(values)
        path, line, at = self.path, self.line, v + 1
        seq.item_locs = [Loc(path, line, at + offset) for offset in offsets]
        return seq


def new_map(loc: Loc) -> YMap:
    """``YMap(loc=loc)`` without its keyword-argument ``__init__`` (one per mapping read)."""
    node = _map_new(YMap)
    node.loc, node.key_locs, node.value_locs = loc, {}, {}
    return node


def new_list(loc: Loc) -> YList:
    seq = _list_new(YList)
    seq.loc, seq.item_locs = loc, []
    return seq


_map_new, _list_new = YMap.__new__, YList.__new__


