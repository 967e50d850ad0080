"""js-yaml 4.2.0's loader, ported function for function, for the verdicts dsh's users see.

dsh reads every YAML file with js-yaml, and where a file is broken the text it shows is js-yaml's first
message line with js-yaml's position (``bad indentation of a mapping entry (2:8)``). ruamel, which
dshctl's fast loader (``dialect``) is built on, words and places its errors differently and accepts or
refuses a few inputs js-yaml does not. So when ``dialect`` fails, this port re-reads the text and its
error is the one reported; and ``preset.yml`` (tiny files, read by dsh with js-yaml's default schema,
where ``2024-01-01`` is a date) is loaded by this port outright.

The port walks a UTF-16 image of the text (JavaScript strings are UTF-16) so columns count what
js-yaml counts. Values are plain Python: dict, list, str, int/float, bool, None, ``JsDate`` for a
timestamp and ``{"__jsExpr": text}`` for ``!!js``. ``tests/test_jsyaml_errors.py`` holds it against the
real js-yaml.
"""
from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass
from typing import Any

from dshctl.core.yaml.jsvalue import number_text
from dshctl.core.yaml.scalars import resolve_plain
from dshctl.core.yaml.utf16 import from_utf16, to_utf16

STD = "tag:yaml.org,2002:"
FLOW_IN, FLOW_OUT, BLOCK_IN, BLOCK_OUT = 1, 2, 3, 4
CLIP, STRIP, KEEP = 1, 2, 3
MAX_DEPTH = 100  # js-yaml's default; dsh passes none
MAX_MERGE_SEQ = 20

_NON_PRINTABLE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])"
    "|(?:[^\ud800-\udbff]|^)[\udc00-\udfff]")
_NON_ASCII_BREAKS = re.compile("[\x85\u2028\u2029]")
_FLOW_INDICATORS = re.compile(r"[,\[\]{}]")
_TAG_HANDLE = re.compile(r"(?:!|!!|![0-9A-Za-z-]+!)\Z")
_TAG_URI = re.compile(r"(?:!|[^,\[\]{}])(?:%[0-9a-f]{2}|[0-9a-z\-#;/?:@&=+$,_.!~*'()\[\]])*\Z", re.I)
_SIMPLE_ESCAPES = {0x30: "\x00", 0x61: "\x07", 0x62: "\x08", 0x74: "\t", 0x09: "\t", 0x6E: "\n",
                   0x76: "\x0b", 0x66: "\x0c", 0x72: "\r", 0x65: "\x1b", 0x20: " ", 0x22: '"', 0x2F: "/",
                   0x5C: "\\", 0x4E: "\x85", 0x5F: "\xa0", 0x4C: "\u2028", 0x50: "\u2029"}
DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})\Z")
TIMESTAMP = re.compile(r"([0-9]{4})-([0-9][0-9]?)-([0-9][0-9]?)(?:[Tt]|[ \t]+)([0-9][0-9]?):([0-9]{2})"
                        r":([0-9]{2})(?:\.([0-9]*))?(?:[ \t]*(Z|([-+])([0-9][0-9]?)(?::([0-9]{2}))?))?\Z")
_BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=\n\r"


class JsYamlError(Exception):
    """A YAMLException: ``reason`` and, when js-yaml gives one, a 1-based ``line``/``column``."""

    def __init__(self, reason: str, line: int | None = None, column: int | None = None):
        super().__init__(reason)
        self.reason, self.line, self.column = reason, line, column

    @property
    def message(self) -> str:
        """The first line of js-yaml's ``error.message``."""
        return self.reason if self.line is None else f"{self.reason} ({self.line}:{self.column})"


@dataclass(frozen=True)
class JsDate:
    """A ``!!timestamp`` (a JavaScript Date): only its source text is kept."""

    text: str


@dataclass(frozen=True)
class Schema:
    js: bool  # the entry-list dialect's `!!js`
    default: bool  # js-yaml's DEFAULT_SCHEMA (timestamps, merge keys, binary, omap, pairs, set)


ENTRY_LIST = Schema(js=True, default=False)  # dsh's entryListSchema: JSON_SCHEMA + !!js
JSON = Schema(js=False, default=False)
DEFAULT = Schema(js=False, default=True)  # yaml.load without a schema (preset.yml)

_SCALAR_TAGS = {"str", "null", "bool", "int", "float"}
_KIND = {"str": "scalar", "null": "scalar", "bool": "scalar", "int": "scalar", "float": "scalar",
         "seq": "sequence", "map": "mapping", "js": "scalar", "timestamp": "scalar", "merge": "scalar",
         "binary": "scalar", "omap": "sequence", "pairs": "sequence", "set": "mapping"}


def load(text: str, schema: Schema = ENTRY_LIST) -> Any:
    """``yaml.load(text, {schema})``; raises JsYamlError as js-yaml throws."""
    docs = _Loader(text, schema).documents()
    if not docs:
        return None
    if len(docs) > 1:
        raise JsYamlError("expected a single document in the stream, but found more")
    return _from_image(docs[0])


def first_error(text: str, schema: Schema = ENTRY_LIST) -> JsYamlError | None:
    """js-yaml's error for ``text``, or None when js-yaml loads it."""
    try:
        load(text, schema)
    except JsYamlError as err:
        return err
    except RecursionError:  # far deeper than js-yaml's own depth limit allows anyway
        return JsYamlError(f"nesting exceeded maxDepth ({MAX_DEPTH})")
    return None


def _from_image(value: Any) -> Any:
    if isinstance(value, str):
        return from_utf16(value)
    if isinstance(value, dict):
        return {from_utf16(k): _from_image(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_from_image(v) for v in value]
    return value


def _ws(c: int) -> bool:
    return c == 0x09 or c == 0x20


def _eol(c: int) -> bool:
    return c == 0x0A or c == 0x0D


def _ws_or_eol(c: int) -> bool:
    return c in (0x09, 0x20, 0x0A, 0x0D)


def _flow(c: int) -> bool:
    return c in (0x2C, 0x5B, 0x5D, 0x7B, 0x7D)


def _hex(c: int) -> int:
    if 0x30 <= c <= 0x39:
        return c - 0x30
    lc = c | 0x20
    return lc - 0x61 + 10 if 0x61 <= lc <= 0x66 else -1


def _js_string(value: Any) -> str:
    """JavaScript's ``String(value)`` for a mapping key."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return number_text(value)
    if isinstance(value, list):
        return ",".join("" if v is None else _js_string(v) for v in value)
    if isinstance(value, dict):
        return "[object Object]"
    if isinstance(value, JsDate):
        return value.text
    return str(value)


class _Loader:
    def __init__(self, text: str, schema: Schema):
        if text and text[-1] not in "\n\r":
            text += "\n"
        if text.startswith("\ufeff"):
            text = text[1:]
        self.schema = schema
        self.s = to_utf16(text)
        self.length = len(self.s)
        self.position = self.line = self.line_start = self.line_indent = self.depth = 0
        self.first_tab = -1
        self.docs: list = []
        self.transactions: list[dict] = []
        self.tag = self.anchor = self.kind = self.result = None

    # --- plumbing ---------------------------------------------------------------------------

    def c(self, p: int) -> int:
        return ord(self.s[p]) if 0 <= p < len(self.s) else -1  # -1 plays JavaScript's NaN

    def error(self, reason: str) -> JsYamlError:
        return JsYamlError(reason, self.line + 1, self.position - self.line_start + 1)

    def documents(self) -> list:
        nul = self.s.find("\0")
        if nul != -1:
            self.position = nul
            raise self.error("null byte is not allowed in input")
        self.s += "\0"
        while self.c(self.position) == 0x20:
            self.line_indent += 1
            self.position += 1
        while self.position < self.length - 1:
            self.read_document()
        return self.docs

    def snapshot(self) -> tuple:
        return (self.position, self.line, self.line_start, self.line_indent, self.first_tab, self.tag,
                self.anchor, self.kind, self.result)

    def restore(self, snap: tuple) -> None:
        (self.position, self.line, self.line_start, self.line_indent, self.first_tab, self.tag,
         self.anchor, self.kind, self.result) = snap

    def store_anchor(self, name: str, value: Any) -> None:
        if self.transactions:
            tx = self.transactions[-1]
            if name not in tx:
                tx[name] = (name in self.anchor_map, self.anchor_map.get(name))
        self.anchor_map[name] = value

    def commit_anchors(self) -> None:
        tx = self.transactions.pop()
        if self.transactions:
            parent = self.transactions[-1]
            for name, entry in tx.items():
                parent.setdefault(name, entry)

    def rollback_anchors(self) -> None:
        tx = self.transactions.pop()
        for name in reversed(list(tx)):
            existed, value = tx[name]
            if existed:
                self.anchor_map[name] = value
            else:
                del self.anchor_map[name]

    # --- directives and documents -----------------------------------------------------------

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

    def read_line_break(self) -> None:
        ch = self.c(self.position)
        if ch == 0x0A:
            self.position += 1
        elif ch == 0x0D:
            self.position += 1
            if self.c(self.position) == 0x0A:
                self.position += 1
        else:
            raise self.error("a line break is expected")
        self.line += 1
        self.line_start = self.position
        self.first_tab = -1

    def skip_space(self, comments: bool, check_indent: int) -> int:
        breaks = 0
        ch = self.c(self.position)
        while ch != 0:
            while _ws(ch):
                if ch == 0x09 and self.first_tab == -1:
                    self.first_tab = self.position
                self.position += 1
                ch = self.c(self.position)
            if comments and ch == 0x23:
                while True:
                    self.position += 1
                    ch = self.c(self.position)
                    if ch in (0x0A, 0x0D, 0):
                        break
            if _eol(ch):
                self.read_line_break()
                ch = self.c(self.position)
                breaks += 1
                self.line_indent = 0
                while ch == 0x20:
                    self.line_indent += 1
                    self.position += 1
                    ch = self.c(self.position)
            else:
                break
        return breaks  # "deficient indentation" is only a warning

    def document_separator(self) -> bool:
        p = self.position
        ch = self.c(p)
        if ch in (0x2D, 0x2E) and ch == self.c(p + 1) and ch == self.c(p + 2):
            ch = self.c(p + 3)
            return ch == 0 or _ws_or_eol(ch)
        return False

    def folded_lines(self, count: int) -> None:
        if count == 1:
            self.result += " "
        elif count > 1:
            self.result += "\n" * (count - 1)

    def capture(self, start: int, end: int, check_json: bool) -> None:
        if start < end:
            part = self.s[start:end]
            if check_json:
                for ch in part:
                    o = ord(ch)
                    if not (o == 0x09 or 0x20 <= o <= 0x10FFFF):
                        raise self.error("expected valid JSON character")
            elif _NON_PRINTABLE.search(part):
                raise self.error("the stream contains non-printable characters")
            self.result += part

    # --- scalars ----------------------------------------------------------------------------

    def read_plain(self, node_indent: int, in_flow: bool) -> bool:
        kind, result = self.kind, self.result
        ch = self.c(self.position)
        if _ws_or_eol(ch) or _flow(ch) or ch in (0x23, 0x26, 0x2A, 0x21, 0x7C, 0x3E, 0x27, 0x22, 0x25,
                                                 0x40, 0x60):
            return False
        if ch in (0x3F, 0x2D):
            following = self.c(self.position + 1)
            if _ws_or_eol(following) or (in_flow and _flow(following)):
                return False
        self.kind = "scalar"
        self.result = ""
        cap_start = cap_end = self.position
        pending = False
        line = line_start = line_indent = 0
        while ch != 0:
            if ch == 0x3A:
                following = self.c(self.position + 1)
                if _ws_or_eol(following) or (in_flow and _flow(following)):
                    break
            elif ch == 0x23:
                if _ws_or_eol(self.c(self.position - 1)):
                    break
            elif (self.position == self.line_start and self.document_separator()) or (in_flow and _flow(ch)):
                break
            elif _eol(ch):
                line, line_start, line_indent = self.line, self.line_start, self.line_indent
                self.skip_space(False, -1)
                if self.line_indent >= node_indent:
                    pending = True
                    ch = self.c(self.position)
                    continue
                self.position = cap_end
                self.line, self.line_start, self.line_indent = line, line_start, line_indent
                break
            if pending:
                self.capture(cap_start, cap_end, False)
                self.folded_lines(self.line - line)
                cap_start = cap_end = self.position
                pending = False
            if not _ws(ch):
                cap_end = self.position + 1
            self.position += 1
            ch = self.c(self.position)
        self.capture(cap_start, cap_end, False)
        if self.result:
            return True
        self.kind, self.result = kind, result
        return False

    def read_single_quoted(self, node_indent: int) -> bool:
        if self.c(self.position) != 0x27:
            return False
        self.kind = "scalar"
        self.result = ""
        self.position += 1
        cap_start = cap_end = self.position
        while (ch := self.c(self.position)) != 0:
            if ch == 0x27:
                self.capture(cap_start, self.position, True)
                self.position += 1
                if self.c(self.position) == 0x27:
                    cap_start = self.position
                    self.position += 1
                    cap_end = self.position
                else:
                    return True
            elif _eol(ch):
                self.capture(cap_start, cap_end, True)
                self.folded_lines(self.skip_space(False, node_indent))
                cap_start = cap_end = self.position
            elif self.position == self.line_start and self.document_separator():
                raise self.error("unexpected end of the document within a single quoted scalar")
            else:
                self.position += 1
                if not _ws(ch):
                    cap_end = self.position
        raise self.error("unexpected end of the stream within a single quoted scalar")

    def read_double_quoted(self, node_indent: int) -> bool:
        if self.c(self.position) != 0x22:
            return False
        self.kind = "scalar"
        self.result = ""
        self.position += 1
        cap_start = cap_end = self.position
        while (ch := self.c(self.position)) != 0:
            if ch == 0x22:
                self.capture(cap_start, self.position, True)
                self.position += 1
                return True
            if ch == 0x5C:
                self.capture(cap_start, self.position, True)
                self.position += 1
                ch = self.c(self.position)
                if _eol(ch):
                    self.skip_space(False, node_indent)
                elif ch in _SIMPLE_ESCAPES:
                    self.result += _SIMPLE_ESCAPES[ch]
                    self.position += 1
                elif ch in (0x78, 0x75, 0x55):
                    value = 0
                    for _ in range({0x78: 2, 0x75: 4, 0x55: 8}[ch]):
                        self.position += 1
                        digit = _hex(self.c(self.position))
                        if digit < 0:
                            raise self.error("expected hexadecimal character")
                        value = _int32(value << 4) + digit  # JavaScript's 32-bit `<<`
                    self.result += _char_from_code_point(value)
                    self.position += 1
                else:
                    raise self.error("unknown escape sequence")
                cap_start = cap_end = self.position
            elif _eol(ch):
                self.capture(cap_start, cap_end, True)
                self.folded_lines(self.skip_space(False, node_indent))
                cap_start = cap_end = self.position
            elif self.position == self.line_start and self.document_separator():
                raise self.error("unexpected end of the document within a double quoted scalar")
            else:
                self.position += 1
                if not _ws(ch):
                    cap_end = self.position
        raise self.error("unexpected end of the stream within a double quoted scalar")

    def read_block_scalar(self, node_indent: int) -> bool:
        ch = self.c(self.position)
        if ch not in (0x7C, 0x3E):
            return False
        folding = ch == 0x3E
        chomping, did_read, detected, text_indent, empty, more_indented = CLIP, False, False, node_indent, 0, False
        self.kind = "scalar"
        self.result = ""
        while ch != 0:
            self.position += 1
            ch = self.c(self.position)
            if ch in (0x2B, 0x2D):
                if chomping != CLIP:
                    raise self.error("repeat of a chomping mode identifier")
                chomping = KEEP if ch == 0x2B else STRIP
            elif 0x30 <= ch <= 0x39:
                if ch == 0x30:
                    raise self.error("bad explicit indentation width of a block scalar; it cannot be less than one")
                if detected:
                    raise self.error("repeat of an indentation width identifier")
                text_indent = node_indent + (ch - 0x30) - 1
                detected = True
            else:
                break
        if _ws(ch):
            while True:
                self.position += 1
                ch = self.c(self.position)
                if not _ws(ch):
                    break
            if ch == 0x23:
                while True:
                    self.position += 1
                    ch = self.c(self.position)
                    if _eol(ch) or ch == 0:
                        break
        while ch != 0:
            self.read_line_break()
            self.line_indent = 0
            ch = self.c(self.position)
            while (not detected or self.line_indent < text_indent) and ch == 0x20:
                self.line_indent += 1
                self.position += 1
                ch = self.c(self.position)
            if not detected and self.line_indent > text_indent:
                text_indent = self.line_indent
            if _eol(ch):
                empty += 1
                continue
            if not detected and text_indent == 0:
                raise self.error("missing indentation for block scalar")
            if self.line_indent < text_indent:
                if chomping == KEEP:
                    self.result += "\n" * (1 + empty if did_read else empty)
                elif chomping == CLIP and did_read:
                    self.result += "\n"
                break
            if folding:
                if _ws(ch):
                    more_indented = True
                    self.result += "\n" * (1 + empty if did_read else empty)
                elif more_indented:
                    more_indented = False
                    self.result += "\n" * (empty + 1)
                elif empty == 0:
                    if did_read:
                        self.result += " "
                else:
                    self.result += "\n" * empty
            else:
                self.result += "\n" * (1 + empty if did_read else empty)
            did_read = detected = True
            empty = 0
            start = self.position
            while not _eol(ch) and ch != 0:
                self.position += 1
                ch = self.c(self.position)
            self.capture(start, self.position, False)
        return True

    # --- collections ------------------------------------------------------------------------

    def store_pair(self, result, overridable, key_tag, key, value, line, line_start, pos):
        if isinstance(key, list):
            key = list(key)
            for i, item in enumerate(key):
                if isinstance(item, list):
                    raise self.error("nested arrays are not supported inside keys")
                if isinstance(item, dict):
                    key[i] = "[object Object]"
        key = _js_string(key)
        if result is None:
            result = {}
        if key_tag == STD + "merge":
            if isinstance(value, list):
                if len(value) > MAX_MERGE_SEQ:
                    raise self.error(f"merge sequence length exceeded maxMergeSeqLength ({MAX_MERGE_SEQ})")
                seen: list = []
                for src in value:
                    if any(src is s for s in seen):
                        continue
                    seen.append(src)
                    self.merge(result, src, overridable)
            else:
                self.merge(result, value, overridable)
        else:
            if key not in overridable and key in result:
                self.line = line or self.line
                self.line_start = line_start or self.line_start
                self.position = pos or self.position
                raise self.error("duplicated mapping key")
            result[key] = value
            overridable.pop(key, None)
        return result

    def merge(self, dest: dict, src: Any, overridable: dict) -> None:
        if not isinstance(src, (dict, list, JsDate)):  # common.isObject
            raise self.error("cannot merge mappings; the provided source object is unacceptable")
        keys = [str(i) for i in range(len(src))] if isinstance(src, list) else list(src) \
            if isinstance(src, dict) else []
        for k in keys:
            if k not in dest:
                dest[k] = src[int(k)] if isinstance(src, list) else src[k]
                overridable[k] = True

    def read_flow_collection(self, node_indent: int) -> bool:
        ch = self.c(self.position)
        tag, anchor = self.tag, self.anchor
        if ch == 0x5B:
            terminator, is_mapping, result = 0x5D, False, []
        elif ch == 0x7B:
            terminator, is_mapping, result = 0x7D, True, {}
        else:
            return False
        overridable: dict = {}
        if self.anchor is not None:
            self.store_anchor(self.anchor, result)
        self.position += 1
        ch = self.c(self.position)
        read_next = True
        while ch != 0:
            self.skip_space(True, node_indent)
            ch = self.c(self.position)
            if ch == terminator:
                self.position += 1
                self.tag, self.anchor = tag, anchor
                self.kind = "mapping" if is_mapping else "sequence"
                self.result = result
                return True
            if not read_next:
                raise self.error("missed comma between flow collection entries")
            if ch == 0x2C:
                raise self.error("expected the node content, but found ','")
            value = None
            is_pair = explicit = False
            if ch == 0x3F and _ws_or_eol(self.c(self.position + 1)):
                is_pair = explicit = True
                self.position += 1
                self.skip_space(True, node_indent)
            line, line_start, pos = self.line, self.line_start, self.position
            self.compose(node_indent, FLOW_IN, False, True)
            key_tag, key = self.tag, self.result
            self.skip_space(True, node_indent)
            ch = self.c(self.position)
            if (explicit or self.line == line) and ch == 0x3A:
                is_pair = True
                self.position += 1
                self.skip_space(True, node_indent)
                self.compose(node_indent, FLOW_IN, False, True)
                value = self.result
            if is_mapping:
                self.store_pair(result, overridable, key_tag, key, value, line, line_start, pos)
            elif is_pair:
                result.append(self.store_pair(None, overridable, key_tag, key, value, line, line_start, pos))
            else:
                result.append(key)
            self.skip_space(True, node_indent)
            ch = self.c(self.position)
            if ch == 0x2C:
                read_next = True
                self.position += 1
                ch = self.c(self.position)
            else:
                read_next = False
        raise self.error("unexpected end of the stream within a flow collection")

    def read_block_sequence(self, node_indent: int) -> bool:
        tag, anchor = self.tag, self.anchor
        result: list = []
        detected = False
        if self.first_tab != -1:
            return False
        if self.anchor is not None:
            self.store_anchor(self.anchor, result)
        ch = self.c(self.position)
        while ch != 0:
            if self.first_tab != -1:
                self.position = self.first_tab
                raise self.error("tab characters must not be used in indentation")
            if ch != 0x2D or not _ws_or_eol(self.c(self.position + 1)):
                break
            detected = True
            self.position += 1
            if self.skip_space(True, -1) and self.line_indent <= node_indent:
                result.append(None)
                ch = self.c(self.position)
                continue
            line = self.line
            self.compose(node_indent, BLOCK_IN, False, True)
            result.append(self.result)
            self.skip_space(True, -1)
            ch = self.c(self.position)
            if (self.line == line or self.line_indent > node_indent) and ch != 0:
                raise self.error("bad indentation of a sequence entry")
            if self.line_indent < node_indent:
                break
        if detected:
            self.tag, self.anchor, self.kind, self.result = tag, anchor, "sequence", result
            return True
        return False

    def read_block_mapping(self, node_indent: int, flow_indent: int) -> bool:  # noqa: C901 - a port
        tag, anchor = self.tag, self.anchor
        result: dict = {}
        overridable: dict = {}
        key_tag = key = value = None
        at_explicit = detected = False
        allow_compact = False
        key_line = key_line_start = key_pos = None
        if self.first_tab != -1:
            return False
        if self.anchor is not None:
            self.store_anchor(self.anchor, result)
        ch = self.c(self.position)
        while ch != 0:
            if not at_explicit and self.first_tab != -1:
                self.position = self.first_tab
                raise self.error("tab characters must not be used in indentation")
            following = self.c(self.position + 1)
            line = self.line
            if ch in (0x3F, 0x3A) and _ws_or_eol(following):
                if ch == 0x3F:
                    if at_explicit:
                        self.store_pair(result, overridable, key_tag, key, None, key_line, key_line_start, key_pos)
                        key_tag = key = value = None
                    detected = at_explicit = allow_compact = True
                elif at_explicit:
                    at_explicit = False
                    allow_compact = True
                else:
                    raise self.error("incomplete explicit mapping pair; a key node is missed; or followed by "
                                     "a non-tabulated empty line")
                self.position += 1
                ch = following
            else:
                key_line, key_line_start, key_pos = self.line, self.line_start, self.position
                if not self.compose(flow_indent, FLOW_OUT, False, True):
                    break
                if self.line == line:
                    ch = self.c(self.position)
                    while _ws(ch):
                        self.position += 1
                        ch = self.c(self.position)
                    if ch == 0x3A:
                        self.position += 1
                        ch = self.c(self.position)
                        if not _ws_or_eol(ch):
                            raise self.error("a whitespace character is expected after the key-value "
                                             "separator within a block mapping")
                        if at_explicit:
                            self.store_pair(result, overridable, key_tag, key, None, key_line, key_line_start,
                                            key_pos)
                            key_tag = key = value = None
                        detected = True
                        at_explicit = allow_compact = False
                        key_tag, key = self.tag, self.result
                    elif detected:
                        raise self.error("can not read an implicit mapping pair; a colon is missed")
                    else:
                        self.tag, self.anchor = tag, anchor
                        return True
                elif detected:
                    raise self.error("can not read a block mapping entry; a multiline key may not be an "
                                     "implicit key")
                else:
                    self.tag, self.anchor = tag, anchor
                    return True
            if self.line == line or self.line_indent > node_indent:
                if at_explicit:
                    key_line, key_line_start, key_pos = self.line, self.line_start, self.position
                if self.compose(node_indent, BLOCK_OUT, True, allow_compact):
                    if at_explicit:
                        key = self.result
                    else:
                        value = self.result
                if not at_explicit:
                    self.store_pair(result, overridable, key_tag, key, value, key_line, key_line_start, key_pos)
                    key_tag = key = value = None
                self.skip_space(True, -1)
                ch = self.c(self.position)
            if (self.line == line or self.line_indent > node_indent) and ch != 0:
                raise self.error("bad indentation of a mapping entry")
            if self.line_indent < node_indent:
                break
        if at_explicit:
            self.store_pair(result, overridable, key_tag, key, None, key_line, key_line_start, key_pos)
        if detected:
            self.tag, self.anchor, self.kind, self.result = tag, anchor, "mapping", result
        return detected

    # --- properties -------------------------------------------------------------------------

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
        self.position += 1
        p = self.position
        ch = self.c(p)
        while ch != 0 and not _ws_or_eol(ch) and not _flow(ch):
            self.position += 1
            ch = self.c(self.position)
        if self.position == p:
            raise self.error("name of an anchor node must contain at least one character")
        self.anchor = self.s[p:self.position]
        return True

    def read_alias(self) -> bool:
        if self.c(self.position) != 0x2A:
            return False
        self.position += 1
        p = self.position
        ch = self.c(p)
        while ch != 0 and not _ws_or_eol(ch) and not _flow(ch):
            self.position += 1
            ch = self.c(self.position)
        if self.position == p:
            raise self.error("name of an alias node must contain at least one character")
        alias = self.s[p:self.position]
        if alias not in self.anchor_map:
            raise self.error(f'unidentified alias "{from_utf16(alias)}"')
        self.result = self.anchor_map[alias]
        self.skip_space(True, -1)
        return True

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
            resolved, tag = self.implicit(self.result)
            if tag is not None:
                self.result, self.tag = resolved, tag
                if self.anchor is not None:
                    self.store_anchor(self.anchor, self.result)
        elif self.tag != "!":
            self.explicit()
        self.depth -= 1
        return self.tag is not None or self.anchor is not None or has_content

    def implicit(self, text: Any) -> tuple[Any, str | None]:
        """The implicit types in schema order: null, bool, int, float (then timestamp, merge)."""
        if text is None:
            return None, STD + "null"  # js-yaml's null type resolves null first
        value = resolve_plain(from_utf16(text))
        if not isinstance(value, str):
            kind = "null" if value is None else "bool" if isinstance(value, bool) else \
                "int" if isinstance(value, int) else "float"
            return value, STD + kind
        if self.schema.default:
            if DATE.match(text) or TIMESTAMP.match(text):
                return JsDate(from_utf16(text)), STD + "timestamp"
            if text == "<<":
                return text, STD + "merge"
        return text, None

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
        ok, value = _resolve_explicit(name, self.result)
        if not ok:
            raise self.error(f"cannot resolve a node with !<{from_utf16(tag)}> explicit tag")
        self.result = value
        if self.anchor is not None:
            self.store_anchor(self.anchor, self.result)


def _compare(indent: int, parent: int) -> int:
    return 1 if indent > parent else 0 if indent == parent else -1


def _int32(x: int) -> int:
    return ((x + 2**31) % 2**32) - 2**31


def _char_from_code_point(c: int) -> str:
    """js-yaml's ``charFromCodepoint`` with ``String.fromCharCode``'s wrap-around to 16 bits."""
    if c <= 0xFFFF:
        return chr(c % 0x10000)
    d = _int32(c - 0x10000)
    return chr(((d >> 10) + 0xD800) % 0x10000) + chr(((d & 0x3FF) + 0xDC00) % 0x10000)


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


def _resolve_explicit(name: str, data: Any) -> tuple[bool, Any]:
    if name == "str":
        return True, "" if data is None else data
    if _KIND[name] == "scalar" and data is not None and not isinstance(data, str):
        # `!!int \n1` hands the resolver an already-built number: JavaScript's resolvers then fail
        # (no `.length`), except the float one, which passes it and throws in its constructor.
        if name == "float" and isinstance(data, (int, float)) and not isinstance(data, bool):
            raise JsYamlError("data.toLowerCase is not a function")
        return False, None
    if name == "seq":
        return True, [] if data is None else data
    if name in ("map", "set"):
        if name == "set" and data is not None and any(v is not None for v in data.values()):
            return False, None
        return True, {} if data is None else data
    if name == "js":
        return (True, {"__jsExpr": from_utf16(data)}) if isinstance(data, str) else (False, None)
    if name == "null":
        return (data is None or data in ("~", "null", "Null", "NULL")), None
    if name in ("bool", "int", "float"):
        if data is None:
            return False, None
        value = resolve_plain(from_utf16(data))
        want = {"bool": bool, "int": int, "float": float}[name]
        if name == "float" and isinstance(value, int) and not isinstance(value, bool) and \
                re.fullmatch(r"[-+]?[0-9]+", data):
            return True, float(value)
        ok = isinstance(value, want) and not (name == "int" and isinstance(value, bool))
        return ok, value if ok else None
    if name == "timestamp":
        ok = data is not None and bool(DATE.match(data) or TIMESTAMP.match(data))
        return ok, JsDate(from_utf16(data)) if ok else None
    if name == "merge":
        return data == "<<" or data is None, data
    if name == "binary":
        if data is None:
            return False, None
        bits = 0
        for ch in data:
            code = _BASE64.find(ch)
            if code > 64:
                continue
            if code < 0:
                return False, None
            bits += 6
        return bits % 8 == 0, data
    if name in ("omap", "pairs"):
        if data is None:
            return True, []
        seen: list = []
        for pair in data:
            if not isinstance(pair, dict) or len(pair) != 1:
                return False, None
            (key,) = pair
            if name == "omap":
                if key in seen:
                    return False, None
                seen.append(key)
        return True, data if name == "omap" else [[next(iter(p)), next(iter(p.values()))] for p in data]
    return False, None
