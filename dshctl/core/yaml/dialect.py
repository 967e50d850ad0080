"""Read the entry-list YAML dialect exactly as dsh does, and JSON into the same node model.

dsh parses ``cordis.yml``, ``agent.cordis.yml``, patch files and its dump with js-yaml 4's
``JSON_SCHEMA`` plus one tag, ``!!js``. That means YAML 1.2 JSON-schema scalars (``yes``/``on`` and dates
stay strings), one document per file, no merge keys, duplicate keys rejected. We build values from the
parser's event stream ourselves, so every typing rule is ours (not ruamel's YAML 1.1 resolver) and every
node keeps its file, line and column (see docs/dialect.md for the limits and decisions).
"""
from __future__ import annotations

import io
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import events as ev
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from dshctl.core.yaml import jsyaml
from dshctl.core.yaml.events import _CParser, _c_parser_agrees, pure_events
from dshctl.core.yaml.jsvalue import to_json
from dshctl.core.yaml.nodes import JsExpr, YList, YMap, to_plain
from dshctl.core.yaml.scalars import STD_TAG, explicit_value, js_key, resolve_plain
from dshctl.core.yaml.verdict import schema_for, suspect_text, to_nodes, yaml_error
from dshctl.errors import Loc, ParseError

# Limits (docs/dialect.md). js-yaml shares alias targets by reference; we do too, but refuse inputs
# whose aliases expand (as a consumer walking the tree would see them) to an absurd size.
from .limits import MAX_DEPTH, MAX_EXPANDED_NODES, MAX_FILE_BYTES  # noqa: E402,F401 - re-exported

JS_TAG = "tag:yaml.org,2002:js"


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
    # The fast reader saw something it may read differently from js-yaml (an empty implicit key,
    # `: a`), so js-yaml's verdict is asked before the document is used.
    suspect: bool = False

    @property
    def loc(self) -> Loc:
        v = self.value
        return getattr(v, "loc", None) or Loc(self.path, 1, 1)


# ---------------------------------------------------------------------------------------------
# YAML


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

    ``js=False`` parses without the ``!!js`` tag. Raises ParseError with the file, line and column of
    the first problem. When the fast reader refuses a text, js-yaml's verdict (``jsyaml``, a port of
    dsh's own parser) decides: its message and position are the ones reported, and a text js-yaml
    does load after all is loaded from the port (without node positions).
    """
    path = str(path)
    try:
        return _load_fast(text, path, js)
    except _LimitError:
        raise
    except ParseError as err:
        found = jsyaml.first_error(text, schema_for(js))
        if found is None:
            return _from_port(text, path, js)
        raise yaml_error(found, text, path, fallback=err) from None


def _from_port(text: str, path: str, js: bool) -> Document:
    value = jsyaml.load(text, schema_for(js))
    return Document(path=path, value=to_nodes(value, Loc(path)), empty=value is None and not text.strip())



def _load_fast(text: str, path: str, js: bool) -> Document:
    notes: list[Note] = []
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\x00" in text:
        raise ParseError("a NUL byte is not allowed in YAML", loc=Loc(path))
    try:
        doc = _read_events(text, path, js, notes)
    except AssertionError:  # ruamel asserts on some directives (`%YAML 1.3`): js-yaml decides
        raise ParseError("the YAML parser refused a directive", loc=Loc(path)) from None
    if doc.suspect or suspect_text(text):
        return _checked(doc, text, path, js)
    return doc


def _checked(doc: Document, text: str, path: str, js: bool) -> Document:
    """``doc`` if js-yaml reads ``text`` the same; js-yaml's value (no positions) if it reads it
    differently; a ParseError (js-yaml's, via load_yaml) if js-yaml refuses it."""
    try:
        value = jsyaml.load(text, schema_for(js))
    except (jsyaml.JsYamlError, RecursionError):
        raise ParseError("js-yaml refuses this text", loc=Loc(path)) from None
    if to_json(to_plain(doc.value)) == to_json(value):
        return doc
    return Document(path=path, value=to_nodes(value, Loc(path)), empty=doc.empty and value is None)


def _read_events(text: str, path: str, js: bool, notes: list[Note]) -> Document:
    try:
        if _c_parser_agrees(text):  # see event_source; events are pulled one at a time
            parser = _CParser(io.StringIO(text))
            try:
                return _build(parser.get_event, path, js, notes)
            except YAMLError:  # libyaml refused the text: the YAML 1.2 parser decides
                notes.clear()
            finally:
                parser.dispose()
        return _build(iter(pure_events(text)).__next__, path, js, notes)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        loc = Loc(path, mark.line + 1, mark.column + 1) if mark else Loc(path)
        problem = exc.problem or exc.context or "invalid YAML"
        raise ParseError(problem, loc=loc, hint="fix the YAML syntax at that position") from None
    except YAMLError as exc:
        raise ParseError(str(exc).splitlines()[0], loc=Loc(path),
                         hint="fix the YAML syntax; the parser gave no position") from None


class _LimitError(ParseError):
    """One of dshctl's own limits (alias expansion), not a YAML error: js-yaml is not asked."""


class _TreeBuilder:
    """Builds the node tree from parser events, enforcing the dialect's structural rules."""

    def __init__(self) -> None:
        self.anchors: dict[str, tuple[Any, int]] = {}  # anchor -> (value, expanded node count)
        self.stack: list[_Frame] = []
        self.aliased = 0  # nodes reached through aliases, counting each expansion
        self.result: Any = None

    def attach(self, value: Any, loc: Loc, size: int) -> None:
        stack = self.stack
        if not stack:
            self.result = value
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

    def open(self, e, loc: Loc, is_map: bool) -> None:
        tag = e.tag
        if tag not in (None, "!") and tag != STD_TAG + ("map" if is_map else "seq"):
            if tag == JS_TAG:
                raise ParseError("!!js applies to a scalar expression, not to a "
                                 + ("mapping" if is_map else "sequence"), loc=loc,
                                 hint="put !!js on the scalar values inside it instead")
            raise ParseError(f"unknown tag !<{tag}>", loc=loc,
                             hint="the dsh dialect knows only the JSON-schema tags and !!js")
        # js-yaml refuses a path of 100 nodes (checked in Node: 100 nested `[]`, or 99 around a scalar).
        # Refusing the 99th collection here keeps the scalar path free of a check; 99 empty nested
        # collections, which js-yaml allows, are then read by jsyaml (load_yaml), which also gives
        # js-yaml's words and position for every refusal.
        if len(self.stack) >= MAX_DEPTH - 2:
            raise ParseError(f"nesting exceeded maxDepth ({MAX_DEPTH})", loc=loc,
                             hint="flatten the structure")
        node = YMap(loc=loc) if is_map else YList(loc=loc)
        self.stack.append(_Frame(node, e.anchor, is_map))

    def close(self) -> None:
        frame = self.stack.pop()
        if frame.anchor:
            self.anchors[frame.anchor] = (frame.node, frame.size)
        self.attach(frame.node, frame.node.loc, frame.size)

    def alias(self, anchor: str, loc: Loc) -> None:
        if anchor not in self.anchors:
            raise ParseError(f"unidentified alias \"{anchor}\"", loc=loc,
                             hint=f"define the anchor (&{anchor}) before this alias")
        value, size = self.anchors[anchor]
        self.aliased += size
        if self.aliased > MAX_EXPANDED_NODES:
            raise _LimitError(
                f"aliases expand to more than {MAX_EXPANDED_NODES:,} nodes (alias bomb?)",
                loc=loc, hint="YAML aliases that multiply a node are refused; write the data out")
        self.attach(value, loc, size)


def _build(next_event, path: str, js: bool, notes: list[Note]) -> Document:
    """Build the tree from ``next_event()`` until the stream ends.

    The scalar branch attaches inline (no ``tree.attach`` call): scalars are most of every file,
    and this loop is the hot path of every command that reads YAML.
    """
    tree = _TreeBuilder()
    stack = tree.stack
    documents = 0
    suspect = False
    plain_cache: dict[str, Any] = {}  # keys like "id"/"name" repeat on every row
    scalar_event, stream_end = ev.ScalarEvent, ev.StreamEndEvent
    while True:
        e = next_event()
        kind = type(e)
        if kind is stream_end:
            break
        mark = e.start_mark
        loc = Loc(path, mark.line + 1, mark.column + 1) if mark is not None else Loc(path)
        if kind is scalar_event:
            if e.tag is None and not e.style:
                value = plain_cache.get(e.value, _NO_KEY)
                if value is _NO_KEY:
                    value = plain_cache[e.value] = resolve_plain(e.value)
            else:
                value = _scalar(e, loc, js)
                if e.style in ("|", ">"):
                    suspect = True  # js-yaml's block scalar indentation rules are its own
            if e.anchor:
                tree.anchors[e.anchor] = (value, 1)
            top = stack[-1] if stack else None
            if top is None or (top.is_map and top.key is _NO_KEY):
                if top is not None and e.value == "" and not e.style and e.tag is None:
                    suspect = True  # `: a` has no key for js-yaml
                tree.attach(value, loc, 1)  # a document root or a mapping key: the checked path
            elif top.is_map:
                top.size += 1
                node, key = top.node, top.key
                node[key] = value
                node.key_locs[key] = top.key_loc
                node.value_locs[key] = loc
                top.key = _NO_KEY
            else:
                if e.value == "" and not e.style and e.tag is None:
                    suspect = True  # js-yaml lets an empty `- ` entry take in the lines below it
                top.size += 1
                top.node.append(value)
                top.node.item_locs.append(loc)
        elif kind is ev.MappingStartEvent or kind is ev.SequenceStartEvent:
            tree.open(e, loc, kind is ev.MappingStartEvent)
        elif kind is ev.MappingEndEvent or kind is ev.SequenceEndEvent:
            tree.close()
        elif kind is ev.AliasEvent:
            tree.alias(e.anchor, loc)
        elif kind is ev.DocumentStartEvent:
            documents += 1
            if documents > 1:
                raise ParseError("expected a single document in the stream, but found more",
                                 loc=loc, hint="remove the extra '---' document")
    return Document(path=path, value=tree.result, empty=documents == 0, notes=notes, suspect=suspect)


def _scalar(e: ev.ScalarEvent, loc: Loc, js: bool) -> Any:
    tag, text = e.tag, e.value
    if tag == JS_TAG:
        if not js:
            raise ParseError(f"unknown tag !<{tag}>", loc=loc,
                             hint="!!js is available only in entry lists and patch lists")
        if text == "" and not e.style:  # `!!js ''` is an (empty) expression for js-yaml too
            raise ParseError("!!js needs an expression after the tag", loc=loc,
                             hint="write the expression, e.g. !!js process.env.PORT ?? 3080")
        return JsExpr(text, loc)
    if tag is None or tag == "!":
        plain = e.style in (None, "") and tag is None
        return resolve_plain(text) if plain else text
    return explicit_value(tag, text, loc)


# ---------------------------------------------------------------------------------------------
# JSON


def load_json(text: str, path: str | Path) -> Document:
    """Strict JSON into the node model. ``{"__jsExpr": "..."}`` objects become JsExpr nodes.

    dsh reads manifests with ``JSON.parse``, which rejects a BOM and keeps the last of duplicate keys;
    we load anyway and record both as notes so lint can report them.
    """
    from dshctl.core.yaml.jsonparse import parse_json

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
    where = Loc(str(path))
    try:
        info = p.stat()
        if stat.S_ISDIR(info.st_mode):
            raise ParseError("is a directory, not a file", loc=where, hint="pass the file inside it")
        if not stat.S_ISREG(info.st_mode):  # a FIFO or device would block or never end
            raise ParseError("is not a regular file", loc=where, hint="pass a regular file")
        if info.st_size > MAX_FILE_BYTES:
            raise ParseError(f"file is {info.st_size:,} bytes; the limit is {MAX_FILE_BYTES:,}",
                             loc=where, hint="split the file; no dsh configuration is near this size")
        data = p.read_bytes()
    except FileNotFoundError:
        raise ParseError("file not found", loc=where,
                         hint="check the path (or the target of a symbolic link)") from None
    except OSError as exc:
        raise ParseError(f"cannot read: {exc.strerror or exc}", loc=where,
                         hint="check the file's permissions") from None
    return decode_text(data, path)


def decode_text(data: bytes, path: str | Path) -> str:
    """The UTF-8 text of a file's bytes, or a ParseError at the first bad byte's line:col."""
    if len(data) > MAX_FILE_BYTES:
        raise ParseError(f"file is {len(data):,} bytes; the limit is {MAX_FILE_BYTES:,}", loc=Loc(str(path)),
                         hint="split the file; no dsh configuration is near this size")
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
