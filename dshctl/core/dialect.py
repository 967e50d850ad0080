"""Read the entry-list YAML dialect exactly as dsh does, and JSON into the same node model.

dsh parses ``cordis.yml``, ``agent.cordis.yml``, patch files and its dump with js-yaml 4's
``JSON_SCHEMA`` plus one tag, ``!!js``. That means YAML 1.2 JSON-schema scalars (``yes``/``on`` and dates
stay strings), one document per file, no merge keys, duplicate keys rejected. We build values from the
parser's event stream ourselves, so every typing rule is ours (not ruamel's YAML 1.1 resolver) and every
node keeps its file, line and column (see docs/dialect.md for the limits and decisions).
"""
from __future__ import annotations

import io
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml import events as ev
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from dshctl.core.nodes import JsExpr, YList, YMap
from dshctl.errors import Loc, ParseError

try:  # ruamel's C accelerator (libyaml); optional
    from ruamel.yaml.cyaml import CParser as _CParser
except ImportError:  # pragma: no cover - exercised only without the accelerator
    _CParser = None


# Limits (docs/dialect.md). js-yaml shares alias targets by reference; we do too, but refuse inputs
# whose expansion (what a consumer walking the tree would see) is absurd.
MAX_DEPTH = 200
MAX_EXPANDED_NODES = 1_000_000
MAX_FILE_BYTES = 16 * 1024 * 1024

JS_TAG = "tag:yaml.org,2002:js"
_STD = "tag:yaml.org,2002:"

_INT_RE = re.compile(r"[-+]?(?:[0-9]+|0b[01]+|0o[0-7]+|0x[0-9a-fA-F]+)\Z")
_FLOAT_RE = re.compile(
    r"(?:[-+]?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?"
    r"|\.[0-9]+(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)"
    r"|\.(?:nan|NaN|NAN))\Z"
)
_NULLS = frozenset(["", "~", "null", "Null", "NULL"])
_TRUES = frozenset(["true", "True", "TRUE"])
_FALSES = frozenset(["false", "False", "FALSE"])


@dataclass
class Note:
    """A non-fatal observation made while loading (e.g. a stripped BOM)."""

    rule: str
    message: str
    loc: Loc
    severity: str = "warning"


@dataclass
class Document:
    """One loaded file. ``empty`` is true when the stream held no document at all."""

    path: str
    value: Any
    empty: bool = False
    notes: list[Note] = field(default_factory=list)

    @property
    def loc(self) -> Loc:
        v = self.value
        return getattr(v, "loc", None) or Loc(self.path, 1, 1)


# ---------------------------------------------------------------------------------------------
# scalar typing


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
            return _to_int(text)
        if _FLOAT_RE.match(text):
            return _to_float(text)
    return text


def _to_int(text: str) -> int:
    sign = -1 if text[0] == "-" else 1
    body = text[1:] if text[0] in "+-" else text
    if body[:2] == "0b":
        return sign * int(body[2:], 2)
    if body[:2] == "0o":
        return sign * int(body[2:], 8)
    if body[:2] == "0x":
        return sign * int(body[2:], 16)
    return sign * int(body, 10)  # "010" is ten, as in js-yaml 4


def _to_float(text: str) -> float:
    low = text.lower()
    if low.endswith(".inf"):
        return -math.inf if text[0] == "-" else math.inf
    if low == ".nan":
        return math.nan
    return float(text)


def _explicit(tag: str, text: str, loc: Loc) -> Any:
    kind = tag[len(_STD):] if tag.startswith(_STD) else None
    if kind == "str":
        return text
    if kind == "null" and text in _NULLS:
        return None
    if kind == "bool" and (text in _TRUES or text in _FALSES):
        return text in _TRUES
    if kind == "int" and _INT_RE.match(text):
        return _to_int(text)
    if kind == "float" and (_FLOAT_RE.match(text) or _INT_RE.match(text)):
        return float(_to_int(text)) if _INT_RE.match(text) else _to_float(text)
    if kind in ("null", "bool", "int", "float"):
        raise ParseError(f"cannot resolve a node with !<{tag}> explicit tag", loc=loc)
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
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == int(value) and abs(value) < 1e21:
        return str(int(value))
    return repr(value)


# ---------------------------------------------------------------------------------------------
# YAML


def event_source(text: str):
    """Parser events for ``text``.

    The C parser (libyaml, via ruamel's accelerator) is tried first because it is ~10x faster. It
    speaks YAML 1.1 and is stricter than js-yaml in flow context (it rejects ``{a: x ?? 1}`` and
    ``{url: http://x:80/}``), so on any error the YAML 1.2 pure-Python parser decides, and its error
    is the one reported.
    """
    if _CParser is not None:
        parser = _CParser(io.StringIO(text))
        events = []
        try:
            while True:
                e = parser.get_event()
                events.append(e)
                if isinstance(e, ev.StreamEndEvent):
                    return events
        except YAMLError:
            pass
        finally:
            parser.dispose()
    return YAML(typ="safe", pure=True).parse(io.StringIO(text))


class _Frame:
    __slots__ = ("node", "size", "anchor", "key", "key_loc", "is_map")

    def __init__(self, node, anchor, is_map):
        self.node = node
        self.size = 1
        self.anchor = anchor
        self.key = _NO_KEY
        self.key_loc = None
        self.is_map = is_map


_NO_KEY = object()


def load_yaml(text: str, path: str | Path, *, js: bool = True) -> Document:
    """Parse ``text`` (the content of ``path``) in the entry-list dialect.

    ``js=False`` parses without the ``!!js`` tag (``preset.yml`` uses js-yaml's default schema).
    Raises ParseError with the file, line and column of the first problem.
    """
    path = str(path)
    notes: list[Note] = []
    if text.startswith("\ufeff"):
        text = text[1:]
    nul = text.find("\x00")
    if nul >= 0:
        line = text.count("\n", 0, nul) + 1
        col = nul - (text.rfind("\n", 0, nul) + 1) + 1
        raise ParseError("a NUL byte is not allowed in YAML", loc=Loc(path, line, col),
                         hint="the file looks binary; restore it from version control")
    try:
        return _build(text, path, js, notes)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        loc = Loc(path, mark.line + 1, mark.column + 1) if mark else Loc(path)
        problem = exc.problem or exc.context or "invalid YAML"
        raise ParseError(problem, loc=loc, hint="fix the YAML syntax at that position") from None
    except YAMLError as exc:
        raise ParseError(str(exc).splitlines()[0], loc=Loc(path)) from None


def _build(text: str, path: str, js: bool, notes: list[Note]) -> Document:
    anchors: dict[str, tuple[Any, int]] = {}
    stack: list[_Frame] = []
    total = 0
    documents = 0
    result: Any = None

    def attach(value: Any, loc: Loc, size: int) -> None:
        nonlocal result, total
        total += size
        if total > MAX_EXPANDED_NODES:
            raise ParseError(
                f"the document expands to more than {MAX_EXPANDED_NODES:,} nodes (alias bomb?)",
                loc=loc, hint="YAML aliases that multiply a node are refused; write the data out")
        if not stack:
            result = value
            return
        top = stack[-1]
        top.size += size
        if top.is_map:
            if top.key is _NO_KEY:
                key = js_key(value, loc)
                if key in top.node:
                    raise ParseError("duplicated mapping key", loc=loc,
                                     hint=f"the key {key!r} appears twice in this mapping; keep one")
                top.key, top.key_loc = key, loc
            else:
                top.node[top.key] = value
                top.node.key_locs[top.key] = top.key_loc
                top.node.value_locs[top.key] = loc
                top.key = _NO_KEY
        else:
            top.node.append(value)
            top.node.item_locs.append(loc)

    plain_cache: dict[str, Any] = {}  # keys like "id"/"name" repeat on every row
    for e in event_source(text):
        mark = e.start_mark
        loc = Loc(path, mark.line + 1, mark.column + 1) if mark is not None else Loc(path)
        kind = type(e)
        if kind is ev.ScalarEvent:
            if e.tag is None and not e.style:
                value = plain_cache.get(e.value, _NO_KEY)
                if value is _NO_KEY:
                    value = plain_cache[e.value] = resolve_plain(e.value)
            else:
                value = _scalar(e, loc, js)
            if e.anchor:
                anchors[e.anchor] = (value, 1)
            attach(value, loc, 1)
        elif kind is ev.MappingStartEvent or kind is ev.SequenceStartEvent:
            is_map = kind is ev.MappingStartEvent
            tag = e.tag
            if tag not in (None, "!") and tag != _STD + ("map" if is_map else "seq"):
                if tag == JS_TAG:
                    raise ParseError("!!js applies to a scalar expression, not to a "
                                     + ("mapping" if is_map else "sequence"), loc=loc)
                raise ParseError(f"unknown tag !<{tag}>", loc=loc,
                                 hint="the dsh dialect knows only the JSON-schema tags and !!js")
            if len(stack) >= MAX_DEPTH:
                raise ParseError(f"nesting deeper than {MAX_DEPTH} levels", loc=loc,
                                 hint="flatten the structure")
            node = YMap(loc=loc) if is_map else YList(loc=loc)
            stack.append(_Frame(node, e.anchor, is_map))
        elif kind is ev.MappingEndEvent or kind is ev.SequenceEndEvent:
            frame = stack.pop()
            total -= frame.size - 1  # children were already counted in attach
            if frame.anchor:
                anchors[frame.anchor] = (frame.node, frame.size)
            attach(frame.node, frame.node.loc, frame.size)
        elif isinstance(e, ev.AliasEvent):
            if e.anchor not in anchors:
                raise ParseError(f"unidentified alias \"{e.anchor}\"", loc=loc)
            value, size = anchors[e.anchor]
            attach(value, loc, size)
        elif isinstance(e, ev.DocumentStartEvent):
            documents += 1
            if documents > 1:
                raise ParseError("expected a single document in the stream, but found more",
                                 loc=loc, hint="remove the extra '---' document")
    return Document(path=path, value=result, empty=documents == 0, notes=notes)


def _scalar(e: ev.ScalarEvent, loc: Loc, js: bool) -> Any:
    tag, text = e.tag, e.value
    if tag == JS_TAG:
        if not js:
            raise ParseError(f"unknown tag !<{tag}>", loc=loc)
        if text == "":
            raise ParseError("!!js needs an expression after the tag", loc=loc,
                             hint="write the expression, e.g. !!js process.env.PORT ?? 3080")
        return JsExpr(text, loc)
    if tag is None or tag == "!":
        plain = e.style in (None, "") and tag is None
        return resolve_plain(text) if plain else text
    return _explicit(tag, text, loc)


# ---------------------------------------------------------------------------------------------
# JSON


def load_json(text: str, path: str | Path) -> Document:
    """Strict JSON into the node model. ``{"__jsExpr": "..."}`` objects become JsExpr nodes.

    dsh reads manifests with ``JSON.parse``, which rejects a BOM and keeps the last of duplicate keys;
    we load anyway and record both as notes so lint can report them.
    """
    from dshctl.core.jsonparse import parse_json

    path = str(path)
    notes: list[Note] = []
    if text.startswith("\ufeff"):
        text = text[1:]
        notes.append(Note("json-bom", "the file starts with a UTF-8 BOM, which dsh's JSON.parse "
                          "rejects", Loc(path, 1, 1), severity="error"))
    value = parse_json(text, path, notes)
    return Document(path=path, value=value, empty=False, notes=notes)


# ---------------------------------------------------------------------------------------------
# files


def read_text(path: str | Path) -> str:
    """Read a file as UTF-8, with errors that name the file."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ParseError(f"file is {size:,} bytes; the limit is {MAX_FILE_BYTES:,}",
                             loc=Loc(str(path)))
        data = p.read_bytes()
    except IsADirectoryError:
        raise ParseError("is a directory, not a file", loc=Loc(str(path))) from None
    except FileNotFoundError:
        raise ParseError("file not found", loc=Loc(str(path))) from None
    except OSError as exc:
        raise ParseError(f"cannot read: {exc.strerror or exc}", loc=Loc(str(path))) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ParseError("not valid UTF-8", loc=Loc(str(path), line, col),
                         hint="save the file as UTF-8") from None


def load_file(path: str | Path, *, js: bool = True) -> Document:
    """Load a YAML or JSON file by its extension."""
    text = read_text(path)
    if str(path).endswith(".json"):
        return load_json(text, path)
    return load_yaml(text, path, js=js)
