"""Write values out as js-yaml 4.2.0's ``dump(value, {schema: JSON_SCHEMA + !!js, noRefs: true})`` does.

This is dshctl's one emitter: ``profile dump`` (which must match ``dsh --dump-config`` byte for byte),
new files (preset authoring, included files) and the values that round-trip edits put into existing
files all come from here. The layout is js-yaml's: block collections indented by 2, ``[]``/``{}`` for
empty ones, sequence items inside a mapping indented under the key (or level with it for
``seq_indent=0``, js-yaml's ``noArrayIndent``), keys in JavaScript's own order. How a string is quoted,
folded or escaped is in ``scalar_style``. ``tests/test_emit_node.py`` holds it against js-yaml.
"""
from __future__ import annotations

import math
import re
from typing import Any

from dshctl.core.yaml.jsvalue import _is_index as _is_index_key
from dshctl.core.yaml.jsvalue import js_key_order, js_number, number_text
from dshctl.core.yaml.nodes import JsExpr, YList, YMap
from dshctl.core.yaml.scalar_style import LINE_WIDTH, write_scalar
from dshctl.core.yaml.scalars import resolve_plain
from dshctl.core.yaml.utf16 import utf16_len

_SCIENTIFIC_WITHOUT_DOT = re.compile(r"[-+]?[0-9]+e")
_JS_TAG = "!!js"
_LONG_KEY = 1024  # js-yaml writes a key longer than this (UTF-16 units) as an explicit `? key`


class EmitError(ValueError):
    """A value js-yaml cannot dump either (it throws ``unacceptable kind of an object to dump``)."""


def looks_typed(text: str) -> bool:
    """True when a plain scalar ``text`` would load as something other than that string."""
    return not isinstance(resolve_plain(text), str)


def number(value: int | float) -> str:
    """A number as js-yaml's int/float types represent it (JavaScript double semantics)."""
    f = js_number(value)
    if f != f:
        return ".nan"
    if math.isinf(f):
        return ".inf" if f > 0 else "-.inf"
    if f == 0 and math.copysign(1.0, f) < 0:
        return "-0.0"
    text = number_text(f)
    if f.is_integer():
        return text
    return text.replace("e", ".e", 1) if _SCIENTIFIC_WITHOUT_DOT.match(text) else text


def _represent(value: Any) -> tuple[str | None, Any]:
    """(tag, what to write): ``!!js`` nodes and ``{__jsExpr: ...}`` objects are the JsExpr type."""
    if isinstance(value, JsExpr):
        return _JS_TAG, value.expr
    if isinstance(value, dict) and "__jsExpr" in value:
        return _JS_TAG, value["__jsExpr"]
    return None, value


def looks_typed_default(text: str) -> bool:
    """``looks_typed`` under js-yaml's default schema, where dates and ``<<`` are typed too."""
    from dshctl.core.yaml.jsyaml import DATE, TIMESTAMP  # only preset.yml is written this way

    return looks_typed(text) or text == "<<" or bool(DATE.match(text) or TIMESTAMP.match(text))


_EXACT_INT = 2**53  # below this a JavaScript number prints an integer's own digits
_INDEX_FIRST = frozenset("0123456789")


class _Writer:
    """One dump. ``node`` is the general case; ``value`` is its fast path for what every block value
    is (a plain str/int/bool/None, YMap/dict, YList/list, JsExpr), with the text of each distinct
    scalar and key at a level computed once per dump."""

    def __init__(self, no_array_indent: bool = False, *, for_edit: bool = False,
                 default_schema: bool = False, line_width: int = LINE_WIDTH):
        self.no_array_indent = no_array_indent
        self.for_edit = for_edit
        self.ambiguous = looks_typed_default if default_schema else looks_typed
        self.line_width = line_width
        self.scalars: dict[tuple[str, int], str] = {}  # (text, level) -> as written
        self.keys: dict[tuple[str, int], tuple[str, bool, str, str]] = {}  # -> see _key
        self.plain_keys: set[str] = set()  # keys known not to be array indices
        self.breaks = ["\n" + "  " * level for level in range(16)]

    def node(self, level: int, value: Any, *, compact: bool, key: bool = False,
             in_seq: bool = False, in_block: bool = True, single_line: bool = False) -> str:
        if not key and in_block and not single_line:
            return self.value(level, value, compact, in_seq)
        return self.general(level, value, compact=compact, key=key, in_seq=in_seq, in_block=in_block,
                            single_line=single_line)

    def value(self, level: int, value: Any, compact: bool, in_seq: bool = False) -> str:
        kind = type(value)
        if kind is str:
            text = self.scalars.get((value, level))
            if text is None:
                text = self.scalars[(value, level)] = self.string(value, level)
            return text
        if kind is YMap or kind is dict:
            if not value:
                return "{}"
            if "__jsExpr" not in value:
                return self.mapping(level, value, compact)
        elif kind is YList or kind is list:
            if not value:
                return "[]"
            if self.no_array_indent and not in_seq and level > 0:
                return self.sequence(level - 1, value, compact)
            return self.sequence(level, value, compact)
        elif kind is int:
            if self.for_edit or -_EXACT_INT < value < _EXACT_INT:
                return str(value)
        elif value is None:
            return "null"
        elif kind is bool:
            return "true" if value else "false"
        elif kind is JsExpr and type(value.expr) is str:
            return "!!js " + self.value(level, value.expr, False)
        return self.general(level, value, compact=compact, in_seq=in_seq)

    def string(self, text: str, level: int, *, key: bool = False, in_block: bool = True,
               single_line: bool = False) -> str:
        return write_scalar(text, level, key=key, in_block=in_block, ambiguous=self.ambiguous,
                            single_line=single_line, for_edit=self.for_edit, line_width=self.line_width)

    def general(self, level: int, value: Any, *, compact: bool, key: bool = False,
                in_seq: bool = False, in_block: bool = True, single_line: bool = False) -> str:
        if value is None:
            return "null"
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, (int, float)):
            if self.for_edit and isinstance(value, int):
                return str(value)  # keep the user's digits; dsh reads them as the same double
            return number(value)
        tag, value = _represent(value)
        if tag is not None:
            compact = False
        if isinstance(value, dict):
            text = self.mapping(level, value, compact) if value else "{}"
        elif isinstance(value, list):
            if not value:
                text = "[]"
            elif self.no_array_indent and not in_seq and level > 0:
                text = self.sequence(level - 1, value, compact)
            else:
                text = self.sequence(level, value, compact)
        elif isinstance(value, str):
            text = self.string(value, level, key=key, in_block=in_block, single_line=single_line)
        else:
            kind = "Null" if value is None else type(value).__name__
            raise EmitError(f"unacceptable kind of an object to dump [object {kind}]")
        return f"{tag} {text}" if tag is not None else text

    def sequence(self, level: int, items: list, compact: bool) -> str:
        out = []
        brk = self.breaks[level] if level < 16 else "\n" + "  " * level
        value, scalars = self.value, self.scalars
        inner = level + 1
        for item in items:
            text = scalars.get((item, inner)) if type(item) is str else None  # most items: a string
            if text is None:
                text = value(inner, item, True, True)
            if not compact or out:
                out.append(brk)
            out.append(("-" if text[:1] == "\n" else "- ") + text)
        return "".join(out)

    def mapping(self, level: int, mapping: dict, compact: bool) -> str:
        if not self.plain_keys.issuperset(mapping) and not self._plain_keys(mapping):
            return self._ordered_mapping(level, mapping, compact)
        out = []
        brk = self.breaks[level] if level < 16 else "\n" + "  " * level
        keys, value, scalars = self.keys, self.value, self.scalars
        inner = level + 1
        for k, v in mapping.items():
            entry = keys.get((k, level))
            if entry is None:
                entry = keys[(k, level)] = self._key(k, level)
            value_text = scalars.get((v, inner)) if type(v) is str else None  # most values: a string
            if value_text is None:
                value_text = value(inner, v, entry[1])
            if value_text[:1] == "\n":
                out.append((brk + entry[0] if not compact or out else entry[0]) + ":" + value_text)
            else:  # `key: value`, its head made once per key and level
                out.append((entry[2] if not compact or out else entry[3]) + value_text)
        return "".join(out)

    def _plain_keys(self, mapping: dict) -> bool:
        """True (and remembered) when every key is a string that is no array index."""
        for k in mapping:
            if type(k) is not str or k[:1] in _INDEX_FIRST and _is_index_key(k):
                return False
        self.plain_keys.update(mapping)
        return True

    def _key(self, k: str, level: int) -> tuple[str, bool, str, str]:
        """How key ``k`` of a mapping at ``level`` is written (``? key\n`` form for a long one): the
        text, whether it is explicit, and the heads of ``key: value`` after a line break or not."""
        key_text = self.string(k, level + 1, key=True)
        brk = "\n" + "  " * level
        explicit = utf16_len(key_text) > _LONG_KEY
        if explicit:
            key_text = ("?" if key_text.startswith("\n") else "? ") + key_text + brk
        return key_text, explicit, brk + key_text + ": ", key_text + ": "

    def _ordered_mapping(self, level: int, mapping: dict, compact: bool) -> str:
        """A mapping with array-index keys (JavaScript lists them first) or non-string keys."""
        out = []
        for k in js_key_order(list(mapping)):
            pair = "\n" + "  " * level if not compact or out else ""
            key_text = self.general(level + 1, str(k), compact=True, key=True)
            explicit = utf16_len(key_text) > _LONG_KEY
            if explicit:
                pair += ("?" if key_text.startswith("\n") else "? ") + key_text + "\n" + "  " * level
            else:
                pair += key_text
            text = self.node(level + 1, mapping[k], compact=explicit)
            out.append(pair + (":" if text.startswith("\n") else ": ") + text)
        return "".join(out)


def scalar(value: Any, *, flow: bool = False, level: int = 1, for_edit: bool = False) -> str:
    """One scalar as js-yaml writes it as a mapping value at ``level`` (``flow``: inside ``[...]`` or
    ``{...}``, so one line and no bare flow indicators)."""
    return _Writer(for_edit=for_edit).node(level, value, compact=False, in_block=not flow,
                                           single_line=flow)


def dump(value: Any, *, seq_indent: int = 2, for_edit: bool = False) -> str:
    """The whole document as text, ending in a newline.

    ``seq_indent`` is how far a list under a mapping key is indented: 2 (``key:\\n  - x``, js-yaml's
    default) or 0 (``key:\\n- x``, its ``noArrayIndent``), so edits can follow a file's own style.
    ``for_edit`` is for text spliced into an existing file: integers keep their exact digits and a
    string js-yaml would write as a fragile block (keep chomping ``|+``, an indentation indicator, a
    line of only spaces) is double-quoted instead, because its end would depend on what follows it
    in the file."""
    return _Writer(seq_indent == 0, for_edit=for_edit).node(0, value, compact=True) + "\n"


def dump_metadata(fields: dict) -> str:
    """``preset.yml`` as dsh's ``renderPresetMetadata`` writes it: js-yaml's default schema, no
    folding (``lineWidth: -1``)."""
    return _Writer(default_schema=True, line_width=-1).node(0, fields, compact=True) + "\n"


def dump_rows(rows: list) -> str:
    """A list of rows; an empty list is ``[]``."""
    return dump(list(rows))


def rows_dumper():
    """``dump_rows`` for many lists (a dump's provenance groups): one writer, so the text of each
    distinct key and scalar is worked out once for all of them."""
    writer = _Writer()
    return lambda rows: writer.node(0, list(rows), compact=True) + "\n"
