"""Documents, directives, node properties (tags, anchors, aliases) and ``compose``: the top of
js-yaml's loader.js, on the readers of ``scanner`` and ``collections``.
"""
from __future__ import annotations

import re
import urllib.parse
from typing import Any

from dshctl.core.yaml.utf16 import from_utf16

from .collections import Collections
from .scanner import BLOCK_IN, BLOCK_OUT, FLOW_IN, FLOW_OUT, _eol, _flow, _ws, _ws_or_eol
from .types import _KIND, _SCALAR_TAGS, MAX_DEPTH, STD, resolve_explicit, resolve_implicit

_FLOW_INDICATORS = re.compile(r"[,\[\]{}]")
_TAG_HANDLE = re.compile(r"(?:!|!!|![0-9A-Za-z-]+!)\Z")
_TAG_URI = re.compile(r"(?:!|[^,\[\]{}])(?:%[0-9a-f]{2}|[0-9a-z\-#;/?:@&=+$,_.!~*'()\[\]])*\Z", re.I)


class Loader(Collections):
    def documents(self) -> list:
        nul = self.s.find("\0")
        if nul != -1:
            self.position = nul
            raise self.error("null byte is not allowed in input")
        self.s += "\0"
        while self.c(self.position) == 0x20:
            self.line_indent += 1
            self.position += 1
        self.doc_starts: list[tuple[int, int]] = []  # (line, UTF-16 column), 1-based, per document
        while self.position < self.length - 1:
            self.doc_starts.append((self.line + 1, self.position - self.line_start + 1))
            self.read_document()
        return self.docs

    def yaml_directive(self, args: list[str]) -> None:
        if self.version is not None:
            raise self.error("duplication of %YAML directive")
        if len(args) != 1:
            raise self.error("YAML directive accepts exactly one argument")
        m = re.fullmatch(r"([0-9]+)\.([0-9]+)", args[0])
        if m is None:
            raise self.error("ill-formed argument of the YAML directive")
        if int(m.group(1)) != 1:
            raise self.error("unacceptable YAML version of the document")
        self.version = args[0]
        self.check_line_breaks = int(m.group(2)) < 2  # other minors only warn

    def tag_directive(self, args: list[str]) -> None:
        if len(args) != 2:
            raise self.error("TAG directive accepts exactly two arguments")
        handle, prefix = args
        if not _TAG_HANDLE.match(handle):
            raise self.error("ill-formed tag handle (first argument) of the TAG directive")
        if handle in self.tag_map:
            raise self.error(f'there is a previously declared suffix for "{handle}" tag handle')
        if not _TAG_URI.match(prefix):
            raise self.error("ill-formed tag prefix (second argument) of the TAG directive")
        self.tag_map[handle] = _decode_uri(prefix, lambda: self.error("tag prefix is malformed: " + prefix))

    def read_document(self) -> None:
        has_directives = False
        self.version = None
        self.check_line_breaks = False
        self.tag_map: dict[str, str] = {}
        self.anchor_map: dict[str, Any] = {}
        while self.c(self.position) != 0:
            self.skip_space(True, -1)
            ch = self.c(self.position)
            if self.line_indent > 0 or ch != 0x25:
                break
            has_directives = True
            self.position += 1
            ch = self.c(self.position)
            p = self.position
            while ch != 0 and not _ws_or_eol(ch):
                self.position += 1
                ch = self.c(self.position)
            name = self.s[p:self.position]
            args: list[str] = []
            if len(name) < 1:
                raise self.error("directive name must not be less than one character in length")
            while ch != 0:
                while _ws(ch):
                    self.position += 1
                    ch = self.c(self.position)
                if ch == 0x23:
                    while True:
                        self.position += 1
                        ch = self.c(self.position)
                        if ch == 0 or _eol(ch):
                            break
                    break
                if _eol(ch):
                    break
                p = self.position
                while ch != 0 and not _ws_or_eol(ch):
                    self.position += 1
                    ch = self.c(self.position)
                args.append(self.s[p:self.position])
            if ch != 0:
                self.read_line_break()
            if name == "YAML":
                self.yaml_directive(args)
            elif name == "TAG":
                self.tag_directive(args)
        self.skip_space(True, -1)
        if self.line_indent == 0 and self.s.startswith("---", self.position):
            self.position += 3
            self.skip_space(True, -1)
        elif has_directives:
            raise self.error("directives end mark is expected")
        self.compose(self.line_indent - 1, BLOCK_OUT, False, True)
        self.skip_space(True, -1)
        self.docs.append(self.result)
        if self.position == self.line_start and self.document_separator():
            if self.c(self.position) == 0x2E:
                self.position += 3
                self.skip_space(True, -1)
            return
        if self.position < self.length - 1:
            raise self.error("end of the stream or a document separator is expected")

    # --- whitespace -------------------------------------------------------------------------

    def read_tag(self) -> bool:
        ch = self.c(self.position)
        if ch != 0x21:
            return False
        if self.tag is not None:
            raise self.error("duplication of a tag property")
        verbatim = named = False
        self.position += 1
        ch = self.c(self.position)
        if ch == 0x3C:
            verbatim = True
            self.position += 1
            ch = self.c(self.position)
        elif ch == 0x21:
            named, handle = True, "!!"
            self.position += 1
            ch = self.c(self.position)
        else:
            handle = "!"
        p = self.position
        if verbatim:
            while True:
                self.position += 1
                ch = self.c(self.position)
                if ch == 0 or ch == 0x3E:
                    break
            if self.position < self.length:
                name = self.s[p:self.position]
                self.position += 1
            else:
                raise self.error("unexpected end of the stream within a verbatim tag")
        else:
            while ch != 0 and not _ws_or_eol(ch):
                if ch == 0x21:
                    if not named:
                        handle = self.s[p - 1:self.position + 1]
                        if not _TAG_HANDLE.match(handle):
                            raise self.error("named tag handle cannot contain such characters")
                        named = True
                        p = self.position + 1
                    else:
                        raise self.error("tag suffix cannot contain exclamation marks")
                self.position += 1
                ch = self.c(self.position)
            name = self.s[p:self.position]
            if _FLOW_INDICATORS.search(name):
                raise self.error("tag suffix cannot contain flow indicator characters")
        if name and not _TAG_URI.match(name):
            raise self.error("tag name cannot contain such characters: " + name)
        name = _decode_uri(name, lambda: self.error("tag name is malformed: " + name))
        if verbatim:
            self.tag = name
        elif handle in self.tag_map:
            self.tag = self.tag_map[handle] + name
        elif handle == "!":
            self.tag = "!" + name
        elif handle == "!!":
            self.tag = STD + name
        else:
            raise self.error(f'undeclared tag handle "{handle}"')
        return True

    def read_anchor(self) -> bool:
        if self.c(self.position) != 0x26:
            return False
        if self.anchor is not None:
            raise self.error("duplication of an anchor property")
        self.anchor = self._node_name("anchor")
        return True

    def read_alias(self) -> bool:
        if self.c(self.position) != 0x2A:
            return False
        alias = self._node_name("alias")
        if alias not in self.anchor_map:
            raise self.error(f'unidentified alias "{from_utf16(alias)}"')
        self.result = self.anchor_map[alias]
        self.skip_space(True, -1)
        return True

    def _node_name(self, kind: str) -> str:
        """The name after ``&`` or ``*`` (up to a space, line end or flow indicator)."""
        self.position += 1
        p = self.position
        ch = self.c(p)
        while ch != 0 and not _ws_or_eol(ch) and not _flow(ch):
            self.position += 1
            ch = self.c(self.position)
        if self.position == p:
            raise self.error(f"name of an {kind} node must contain at least one character")
        return self.s[p:self.position]

    def mapping_from_property(self, start: tuple, node_indent: int, flow_indent: int) -> bool:
        fallback = self.snapshot()
        self.transactions.append({})
        self.restore(start)
        self.tag = self.anchor = self.kind = self.result = None
        if self.read_block_mapping(node_indent, flow_indent) and self.kind == "mapping":
            self.commit_anchors()
            return True
        self.rollback_anchors()
        self.restore(fallback)
        return False

    # --- nodes ------------------------------------------------------------------------------

    def compose(self, parent_indent: int, context: int, allow_seek: bool, allow_compact: bool) -> bool:  # noqa: C901
        if self.depth >= MAX_DEPTH:
            raise self.error(f"nesting exceeded maxDepth ({MAX_DEPTH})")
        self.depth += 1
        self.tag = self.anchor = self.kind = self.result = None
        indent_status = 1
        at_new_line = has_content = False
        property_start = None
        block_styles = block_scalars = block_collections = context in (BLOCK_OUT, BLOCK_IN)
        if allow_seek and self.skip_space(True, -1):
            at_new_line = True
            indent_status = _compare(self.line_indent, parent_indent)
        if indent_status == 1:
            while True:
                ch = self.c(self.position)
                snap = self.snapshot()
                if at_new_line and ((ch == 0x21 and self.tag is not None) or (ch == 0x26 and self.anchor is not None)):
                    break
                if not self.read_tag() and not self.read_anchor():
                    break
                if property_start is None:
                    property_start = snap
                if self.skip_space(True, -1):
                    at_new_line = True
                    block_collections = block_styles
                    indent_status = _compare(self.line_indent, parent_indent)
                else:
                    block_collections = False
        if block_collections:
            block_collections = at_new_line or allow_compact
        if indent_status == 1 or context == BLOCK_OUT:
            flow_indent = parent_indent if context in (FLOW_IN, FLOW_OUT) else parent_indent + 1
            block_indent = self.position - self.line_start
            if indent_status == 1:
                if (block_collections and (self.read_block_sequence(block_indent)
                                           or self.read_block_mapping(block_indent, flow_indent))) \
                        or self.read_flow_collection(flow_indent):
                    has_content = True
                else:
                    ch = self.c(self.position)
                    if property_start is not None and block_styles and not block_collections \
                            and ch not in (0x7C, 0x3E) and self.mapping_from_property(
                                property_start, property_start[0] - property_start[2], flow_indent):
                        has_content = True
                    elif (block_scalars and self.read_block_scalar(flow_indent)) \
                            or self.read_single_quoted(flow_indent) or self.read_double_quoted(flow_indent):
                        has_content = True
                    elif self.read_alias():
                        has_content = True
                        if self.tag is not None or self.anchor is not None:
                            raise self.error("alias node should not have any properties")
                    elif self.read_plain(flow_indent, context == FLOW_IN):
                        has_content = True
                        if self.tag is None:
                            self.tag = "?"
                    if self.anchor is not None:
                        self.store_anchor(self.anchor, self.result)
            elif indent_status == 0:
                has_content = block_collections and self.read_block_sequence(block_indent)
        if self.tag is None:
            if self.anchor is not None:
                self.store_anchor(self.anchor, self.result)
        elif self.tag == "?":
            if self.result is not None and self.kind != "scalar":
                raise self.error(f'unacceptable node kind for !<?> tag; it should be "scalar", not "{self.kind}"')
            resolved, tag = resolve_implicit(self.result, self.schema.default)
            if tag is not None:
                self.result, self.tag = resolved, tag
                if self.anchor is not None:
                    self.store_anchor(self.anchor, self.result)
        elif self.tag != "!":
            self.explicit()
        self.depth -= 1
        return self.tag is not None or self.anchor is not None or has_content

    def explicit(self) -> None:
        tag = self.tag
        name = tag[len(STD):] if tag.startswith(STD) else None
        known = name in _SCALAR_TAGS or name in ("seq", "map") or (name == "js" and self.schema.js) or (
            self.schema.default and name in ("timestamp", "merge", "binary", "omap", "pairs", "set"))
        # js-yaml looks the tag up among the types of the node's kind: `!!js {a: 1}` is unknown.
        if not known or self.kind is not None and _KIND[name] != self.kind:
            raise self.error(f"unknown tag !<{from_utf16(tag)}>")
        kind = _KIND[name]
        if self.result is not None and kind != self.kind:
            raise self.error(f'unacceptable node kind for !<{from_utf16(tag)}> tag; it should be "{kind}", '
                             f'not "{self.kind or "null"}"')
        ok, value = resolve_explicit(name, self.result)
        if not ok:
            raise self.error(f"cannot resolve a node with !<{from_utf16(tag)}> explicit tag")
        self.result = value
        if self.anchor is not None:
            self.store_anchor(self.anchor, self.result)


def _compare(indent: int, parent: int) -> int:
    return 1 if indent > parent else 0 if indent == parent else -1


def _decode_uri(text: str, fail) -> str:
    """``decodeURIComponent``: %XX sequences must form UTF-8."""
    if "%" not in text:
        return text
    if re.search(r"%(?![0-9a-fA-F]{2})", text):
        raise fail()
    try:
        return urllib.parse.unquote(text, errors="strict")
    except UnicodeDecodeError:
        raise fail() from None
