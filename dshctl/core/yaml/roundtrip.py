"""Text-preserving edits of existing YAML files: comments, key order, quoting and blank lines of
everything not edited survive byte for byte.

ruamel's round-trip emitter re-indents sequences and fails on some real files, so instead we keep the
original text and splice in new text at spans taken from the parser's events (yamlpos.py). New
values are rendered by ``emit`` at the right indentation and in the file's own sequence-indent
style; a flow collection (``{a: 1}``, ``[x, y]``) that gains or loses an entry is re-rendered in flow
style as a whole. After every splice the text is parsed again and the edited value checked, so a
bug here can never write a file that means something else.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from dshctl.core.yaml import emit
from dshctl.core.yaml.dialect import load_yaml, read_text
from dshctl.core.fsutil import atomic_write, content_hash
from dshctl.core.yaml.nodes import to_plain
from dshctl.core.yaml.yamlpos import Span, after_colon, parse_spans
from dshctl.errors import DshctlError, Loc



class EditableYaml:
    """One YAML file opened for minimal edits (see module doc)."""

    def __init__(self, path: str | Path, text: str):
        self.path = Path(path)
        self.original = text.encode("utf-8")
        self.sha256 = content_hash(self.original)
        self._bom = "\ufeff" if text.startswith("\ufeff") else ""
        self._text = text[len(self._bom):]
        self._nl = "\r\n" if "\r\n" in self._text else "\n"
        self.value = load_yaml(self._text, self.path).value  # ParseError on bad YAML
        self._spans: Span | None = None
        self._undo: tuple[str, Any] = (self._text, self.value)

    @classmethod
    def read(cls, path: str | Path) -> "EditableYaml":
        return cls(path, read_text(path))

    @classmethod
    def from_text(cls, text: str, path: str | Path) -> "EditableYaml":
        return cls(path, text)

    # -- output ------------------------------------------------------------------------------

    def dumps(self) -> str:
        """The current text; byte-identical to what was read when nothing was edited."""
        return self._bom + self._text

    def write(self, *, expect_sha256: str | None = None) -> None:
        """Write atomically (mode kept). With ``expect_sha256``, refuse when the file on disk no
        longer has that hash (someone else changed it since it was read)."""
        if expect_sha256 is not None:
            try:
                current = content_hash(self.path.read_bytes())
            except FileNotFoundError:
                current = None
            if current != expect_sha256:
                raise DshctlError("the file changed on disk since it was read; not overwriting it",
                                  loc=Loc(str(self.path)), hint="run the command again")
        data = self.dumps().encode("utf-8")
        atomic_write(self.path, data)
        self.original, self.sha256 = data, content_hash(data)

    # -- edits -------------------------------------------------------------------------------

    def set_key(self, map_path: tuple, key: str, value: Any) -> None:
        """Add ``key`` to the mapping at ``map_path``, or replace its value."""
        span = self._span(map_path, "map")
        current = self._node(map_path)
        if span.flow:
            updated = dict(current)
            updated[key] = value
            self._splice(span.start, span.end, flow(updated))
        elif key in span.names:
            i = span.names.index(key)
            start = after_colon(self._text, span.keys[i].end)
            old = span.children[i]
            end = start if old.empty_scalar else old.end
            if old.kind in ("map", "seq") and not old.flow:  # its last line's comment goes too
                end = self._line_end(end)
            self._splice(start, end, self._after_key(value, self._column(span.keys[i].start)))
        else:
            at = self._line_end(span.children[-1].end)
            self._splice(at, at, self._nl + self._pair(key, value, self._column(span.start)))
        self._check(map_path + (key,), value)

    def delete_key(self, map_path: tuple, key: str) -> None:
        """Remove ``key`` from the mapping at ``map_path`` (nothing happens if it is absent)."""
        span = self._span(map_path, "map")
        if key not in span.names:
            return
        if span.flow or len(span.names) == 1:
            remaining = {k: v for k, v in self._node(map_path).items() if k != key}
            self._splice(span.start, span.end, flow(remaining))
        else:
            self._delete_block_pair(span, span.names.index(key))
        if key in self._node(map_path):
            self._text, self.value = self._undo
            self._spans = None
            raise RuntimeError(f"internal: deleting {key!r} at {_path_text(map_path)} did not remove it")

    def append_item(self, seq_path: tuple, value: Any) -> None:
        """Append ``value`` to the list at ``seq_path`` (``()`` is the top-level list)."""
        span = self._span(seq_path, "seq")
        items = list(self._node(seq_path))
        if not span.flow:
            at = self._line_end(span.children[-1].end)
            self._splice(at, at, self._nl + self._items([value], self._column(span.start)))
        elif not items and not seq_path:  # a top-level `[]`: become a block list
            self._splice(span.start, span.end, self._items([value], self._column(span.start), first=False))
        elif not items and self._block_parent_key(seq_path) is not None:  # `key: []`
            key_span = self._block_parent_key(seq_path)
            start = after_colon(self._text, key_span.end)
            col = self._column(key_span.start)
            self._splice(start, span.end, self._nl + self._items([value], col + self._seq_indent()))
        else:
            self._splice(span.start, span.end, flow(items + [value]))
        self._check(seq_path + (len(items),), value)

    # -- helpers -----------------------------------------------------------------------------

    def _node(self, path: tuple) -> Any:
        node = self.value
        for step in path:
            node = node[step]
        return node

    def _parse_spans(self) -> Span | None:
        from ruamel.yaml.error import YAMLError

        try:
            return parse_spans(self._text)
        except YAMLError as exc:  # the loader took the text (it fell back to the js-yaml port)
            mark = getattr(exc, "problem_mark", None)
            raise DshctlError(f"this file cannot be edited in place: the editor's parser stops at "
                              f"{getattr(exc, 'problem', None) or exc}",
                              loc=Loc(str(self.path), mark.line + 1 if mark else 0,
                                      mark.column + 1 if mark else 0),
                              hint="edit it by hand; dsh reads it as it is") from None

    def _span(self, path: tuple, kind: str) -> Span:
        if self._spans is None:
            self._spans = self._parse_spans()
        span = self._spans
        try:
            for step in path:
                span = span.child(step)
        except (KeyError, IndexError, ValueError, TypeError, AttributeError):
            span = None
        if span is None or span.kind != kind:
            what = "mapping" if kind == "map" else "list"
            raise DshctlError(f"no {what} at {_path_text(path)}", loc=Loc(str(self.path)),
                              hint="the file's structure is not what the edit expected")
        return span

    def _block_parent_key(self, path: tuple) -> Span | None:
        if not path:
            return None
        parent = self._span(path[:-1], "map") if isinstance(path[-1], str) else None
        return parent.key_span(path[-1]) if parent is not None and not parent.flow else None

    def _splice(self, start: int, end: int, new: str) -> None:
        """Replace ``[start, end)`` with ``new``; on failure the document is left as it was."""
        text = self._text[:start] + new + self._text[end:]
        try:
            value = load_yaml(text, self.path).value
        except DshctlError as err:  # e.g. the replaced span held an anchor used elsewhere
            raise DshctlError(f"this edit cannot be made without changing other parts of the file "
                              f"({err.message})", loc=Loc(str(self.path)),
                              hint="edit the file by hand (anchors and aliases are not re-written)") from None
        self._undo = (self._text, self.value)
        self._text, self.value, self._spans = text, value, None

    def _check(self, path: tuple, expected: Any) -> None:
        """Undo the last splice and fail loudly if it does not read back as ``expected``."""
        try:
            ok = to_plain(self._node(path), js="keep") == to_plain(expected, js="keep")
        except (KeyError, IndexError, TypeError):
            ok = False
        if not ok:
            self._text, self.value = self._undo
            self._spans = None
            raise RuntimeError(f"internal: the edit at {_path_text(path)} did not read back as written")

    def _column(self, pos: int) -> int:
        return pos - (self._text.rfind("\n", 0, pos) + 1)

    def _line_end(self, pos: int) -> int:
        """Where the line holding ``pos`` ends (before its line break)."""
        nl = self._text.find("\n", pos)
        if nl < 0:
            return len(self._text)
        return nl - 1 if nl > 0 and self._text[nl - 1] == "\r" else nl

    def _seq_indent(self) -> int:
        """The file's style for a list under a key: 0 (``key:\\n- x``) or 2 (``key:\\n  - x``)."""
        root = self._spans if self._spans is not None else parse_spans(self._text)
        found = _find_seq_indent(root, self._column) if root is not None else None
        return 2 if found is None else found

    def _lines(self, rendered: str, indent: int, *, first: bool = True) -> str:
        """Indent rendered lines by ``indent`` (the first one too unless ``first`` is False)."""
        pad = " " * indent
        lines = (rendered[:-1] if rendered.endswith("\n") else rendered).split("\n")
        out = [(pad + ln if (i or first) and ln else ln) for i, ln in enumerate(lines)]
        return self._nl.join(out)

    def _pair(self, key: str, value: Any, indent: int) -> str:
        rendered = emit.dump({key: value}, seq_indent=self._seq_indent(), for_edit=True)
        return self._lines(rendered, indent)

    def _after_key(self, value: Any, key_col: int) -> str:
        """What follows ``key:`` for ``value``: `` scalar`` or a block on the next lines."""
        rendered = emit.dump({"k": value}, seq_indent=self._seq_indent(), for_edit=True)
        rendered = rendered[2:]  # drop "k:"
        return self._lines(rendered, key_col, first=False)

    def _items(self, values: list, indent: int, *, first: bool = True) -> str:
        rendered = emit.dump(list(values), seq_indent=self._seq_indent(), for_edit=True)
        return self._lines(rendered, indent, first=first)

    def _delete_block_pair(self, span: Span, i: int) -> None:
        text, key, value = self._text, span.keys[i], span.children[i]
        end = self._line_end(value.end if not value.empty_scalar else after_colon(text, key.end))
        line_start = text.rfind("\n", 0, key.start) + 1
        if not text[line_start:key.start].strip():  # the key starts its line: drop whole lines
            stop = end + len(self._nl) if text.startswith(self._nl, end) else end
            self._splice(line_start, stop, "")
            return
        # `- key: v` with more keys below: pull the next key up, or leave a bare `-`.
        nxt = span.keys[i + 1].start
        gap = text[end:nxt]
        if gap.strip(" \t\r\n") == "" and gap.count("\n") == 1:
            self._splice(key.start, nxt, "")
        else:
            self._splice(len(text[:key.start].rstrip(" \t")), end, "")


def _find_seq_indent(span: Span, column) -> int | None:
    """0 or 2 from the first block list under a block-mapping key (None: no evidence)."""
    if span.kind == "map" and not span.flow:
        for key, child in zip(span.keys, span.children):
            if child.kind == "seq" and not child.flow and child.children:
                return 0 if column(child.start) == column(key.start) else 2
    for child in span.children:
        found = _find_seq_indent(child, column)
        if found is not None:
            return found
    return None


def _path_text(path: tuple) -> str:
    return "$" + "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in path)


def flow(value: Any) -> str:
    """``value`` as one line of flow-style YAML that the dialect reads back unchanged."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_flow_scalar(str(k))}: {flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(flow(v) for v in value) + "]"
    return _flow_scalar(value)


def _flow_scalar(value: Any) -> str:
    return emit.scalar(value, flow=True, for_edit=True)
