"""Collections, as js-yaml's loader.js reads them: flow ``[...]``/``{...}``, block sequences and
mappings, and storing a pair (duplicate keys, ``<<`` merges, keys turned to strings as JavaScript does).
"""
from __future__ import annotations

from typing import Any

from .scanner import BLOCK_IN, BLOCK_OUT, FLOW_IN, FLOW_OUT, Reader, _ws, _ws_or_eol
from .types import MAX_MERGE_SEQ, STD, JsDate, js_string


class Collections(Reader):
    def store_pair(self, result, overridable, key_tag, key, value, line, line_start, pos):
        if isinstance(key, list):
            key = list(key)
            for i, item in enumerate(key):
                if isinstance(item, list):
                    raise self.error("nested arrays are not supported inside keys")
                if isinstance(item, dict):
                    key[i] = "[object Object]"
        key = js_string(key)
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
