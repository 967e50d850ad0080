"""Where every node of a YAML text sits: character spans from the parser's event stream.

The round-trip editor (roundtrip.py) splices new text into these spans. Spans come from the same
event source as the dialect (the C parser, else the pure-Python one); both count mark indexes in
characters of the text as given (tests/test_roundtrip.py checks that they agree on the corpus).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ruamel.yaml import events as ev

from dshctl.core.yaml.events import event_source, pure_events
from dshctl.core.yaml.scalars import js_key, resolve_plain


@dataclass
class Span:
    """One node. ``end`` is where its content ends: trailing blank lines of block scalars and of
    block collections are not part of it."""

    kind: str  # "map", "seq", "scalar" or "alias"
    start: int
    end: int
    flow: bool = False
    empty_scalar: bool = False  # `key:` with nothing after it
    keys: list["Span"] = field(default_factory=list)  # map: key spans, parallel to children
    names: list[str] = field(default_factory=list)  # map: the keys as strings
    children: list["Span"] = field(default_factory=list)  # map values or seq items

    def child(self, step) -> "Span":
        if self.kind == "map":
            return self.children[self.names.index(step)]
        if self.kind == "seq":
            return self.children[step]
        raise KeyError(step)

    def key_span(self, name: str) -> "Span":
        return self.keys[self.names.index(name)]


def trim_end(text: str, start: int, end: int) -> int:
    """``end`` moved back over trailing whitespace, not before ``start``."""
    while end > start and text[end - 1] in " \t\r\n":
        end -= 1
    return end


def after_colon(text: str, key_end: int) -> int:
    """The position just after the ``:`` that follows a key ending at ``key_end``."""
    i = key_end
    while i < len(text) and text[i] in " \t":
        i += 1
    return i + 1 if i < len(text) and text[i] == ":" else key_end


class _Builder:
    def __init__(self, text: str):
        self.text = text
        self.stack: list[tuple[Span, list[Span]]] = []  # (collection, pending key for maps)
        self.root: Span | None = None

    def attach(self, span: Span, key_text: str | None) -> None:
        if not self.stack:
            self.root = span
            return
        parent, pending = self.stack[-1]
        if span.empty_scalar:  # the parser places an empty value at the *next* token
            self._anchor_empty(span, parent, pending)
        if parent.kind == "seq":
            parent.children.append(span)
        elif not pending:
            pending.append(span)
            parent.names.append(self._key_name(span, key_text or ""))
            parent.keys.append(span)
        else:
            pending.clear()
            parent.children.append(span)

    def _anchor_empty(self, span: Span, parent: Span, pending: list[Span]) -> None:
        if parent.kind == "map" and pending:
            span.start = span.end = after_colon(self.text, pending[0].end)
        elif parent.kind == "seq":
            span.start = span.end = trim_end(self.text, 0, span.start)

    def _key_name(self, span: Span, key_text: str) -> str:
        plain = span.end > span.start and self.text[span.start] not in "'\"!&|>"
        if not plain:
            return key_text
        return js_key(resolve_plain(key_text) if key_text else None, None)

    def feed(self, e) -> None:
        if isinstance(e, ev.ScalarEvent):
            start, end = e.start_mark.index, e.end_mark.index
            empty = e.value == "" and e.style in (None, "") and not e.tag and start == end
            self.attach(Span("scalar", start, trim_end(self.text, start, end), empty_scalar=empty),
                        e.value)
        elif isinstance(e, ev.AliasEvent):
            self.attach(Span("alias", e.start_mark.index, e.end_mark.index), None)
        elif isinstance(e, (ev.MappingStartEvent, ev.SequenceStartEvent)):
            kind = "map" if isinstance(e, ev.MappingStartEvent) else "seq"
            start = e.start_mark.index
            self.stack.append((Span(kind, start, start, flow=bool(e.flow_style)), []))
        elif isinstance(e, (ev.MappingEndEvent, ev.SequenceEndEvent)):
            span, _ = self.stack.pop()
            if span.flow:
                span.end = e.end_mark.index
            elif span.children:
                span.end = span.children[-1].end
            self.attach(span, None)


def parse_spans(text: str, *, pure: bool = False) -> Span | None:
    """The span tree of the single document in ``text`` (None for an empty stream)."""
    builder = _Builder(text)
    events = pure_events(text) if pure else event_source(text)
    for e in events:
        builder.feed(e)
    return builder.root
