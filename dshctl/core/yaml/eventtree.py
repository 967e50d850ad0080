"""The tree builder over the YAML parser's events: every text ``blockscan`` does not take.

libyaml's events (ruamel's C accelerator) when it reads the text as js-yaml would, else ruamel's pure
YAML 1.2 parser (events.py). It enforces the dialect's structural rules (single document, no duplicate
keys, known tags, depth and alias-expansion limits) and raises the ParseErrors ``dialect.load_yaml``
turns into js-yaml's words.
"""
from __future__ import annotations

import io
from typing import Any

from ruamel.yaml import events as ev
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from dshctl.core.yaml.dialect import Document, LimitError, Note
from dshctl.core.yaml.events import _CParser, _c_parser_agrees, pure_events
from dshctl.core.yaml.limits import MAX_DEPTH, MAX_EXPANDED_NODES
from dshctl.core.yaml.nodes import JsExpr, YList, YMap
from dshctl.core.yaml.scalars import STD_TAG, explicit_value, js_key, resolve_plain
from dshctl.errors import Loc, ParseError

JS_TAG = "tag:yaml.org,2002:js"


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


def read_events(text: str, path: str, js: bool, notes: list[Note]) -> Document:
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
            raise LimitError(
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
