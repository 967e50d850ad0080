"""js-yaml's verdict on a text, in dshctl's terms: its error as a ParseError at file:line:col, the text
dsh prints for it, a hint, and js-yaml's value as the node model.

``dialect.load_yaml`` consults it (docs/dialect.md, "js-yaml has the last word").
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from dshctl.core.yaml.nodes import JsExpr, YList, YMap
from dshctl.errors import Loc, ParseError

if TYPE_CHECKING:
    from dshctl.core.yaml import jsyaml


def schema_for(js: bool) -> jsyaml.Schema:
    from dshctl.core.yaml import jsyaml

    return jsyaml.ENTRY_LIST if js else jsyaml.JSON


_INDENTED_START = re.compile(r"(?:[ \t]*(?:#[^\n]*)?\n)*[ ]+\S")
_MARKER_GLUED = re.compile(r"^(?:---|\.\.\.)\S", re.M)
_PROPERTY_AT_EOL = re.compile(r"[!&][^\s,\[\]{}]*[ \t]*(?:#[^\n]*)?$", re.M)


def suspect_text(text: str) -> bool:
    """True for text where ruamel and js-yaml are known to part ways, so js-yaml is asked too: tabs,
    CRs, directives, an indented first line, `---x` (a document start for js-yaml), a tag or anchor
    that ends its line. Substring tests first: this runs on every file read."""
    if "\t" in text or "\r" in text or text.startswith("%") or "\n%" in text:
        return True
    if _INDENTED_START.match(text):
        return True
    if ("---" in text or "..." in text) and _MARKER_GLUED.search(text):
        return True
    return ("!" in text or "&" in text) and _PROPERTY_AT_EOL.search(text) is not None


def yaml_error(found: jsyaml.JsYamlError, text: str, path: str, *, fallback: ParseError | None = None
               ) -> ParseError:
    """js-yaml's error as a ParseError at its position (columns turned from UTF-16 units).

    js-yaml gives no position for a second document: the location is where the port saw it start
    (``JsYamlError.where``), and the message stays js-yaml's, without one."""
    fallback_hint = fallback.hint if fallback else None
    if found.reason.startswith("null byte"):  # js-yaml counts it on line 1 whatever the line
        nul = text.find("\x00")
        loc = Loc(path, text.count("\n", 0, nul) + 1, nul - (text.rfind("\n", 0, nul) + 1) + 1)
    elif found.line:
        loc = Loc(path, found.line, _column(text, found.line, found.column))
    elif found.where:
        loc = Loc(path, found.where[0], _column(text, *found.where))
    else:
        loc = fallback.loc if fallback and fallback.loc else Loc(path)
    # The fast reader's hint is the more specific one when both name the same error (it knows the key).
    same = fallback is not None and fallback.message == found.reason and fallback_hint
    hint = fallback_hint if same else yaml_hint(found.reason) or fallback_hint
    return ParseError(found.reason, loc=loc, js_message=found.message,
                      hint=hint or "fix the YAML syntax at that position")


def js_error_text(err: ParseError) -> str:
    """What dsh prints for this failure after ``failed to parse …: ``: ``String(error)`` of the
    YAMLException (its first line), or dshctl's message when the failure is not a YAML one."""
    return f"YAMLException: {err.js_message}" if err.js_message else err.message


def yaml_hint(reason: str) -> str | None:
    for start, hint in _HINTS:
        if reason.startswith(start):
            return hint
    return None


_HINTS = [
    ("null byte", "the file looks binary; restore it from version control"),
    ("duplicated mapping key", "a key appears twice in this mapping; keep one"),
    ("unidentified alias", "define the anchor (&name) before this alias"),
    ("unknown tag", "the dsh dialect knows only the JSON-schema tags and !!js (on a scalar)"),
    ("cannot resolve a node with !<tag:yaml.org,2002:js>", "write the expression after !!js, "
     "e.g. !!js process.env.PORT ?? 3080"),
    ("expected a single document", "remove the extra '---' document"),
    ("tab characters", "indent with spaces; YAML does not allow tabs in indentation"),
    ("bad indentation", "align this entry with its siblings"),
    ("unexpected end of the stream within a flow", "close the [ or { that opens here"),
    ("unexpected end of the stream within a", "close the quote"),
    ("unknown escape sequence", "escape a backslash as \\\\, or use single quotes"),
    ("nesting exceeded maxDepth", "flatten the structure; js-yaml stops at 100 levels"),
]


def _column(text: str, line: int, column: int) -> int:
    """The 1-based character column for js-yaml's 1-based UTF-16 ``column`` on ``line``."""
    if text.startswith("\ufeff"):
        text = text[1:]
    start = 0
    for _ in range(line - 1):
        nl = _next_break(text, start)
        if nl < 0:
            return column
        start = nl
    units = 0
    for i, ch in enumerate(text[start:]):
        if units >= column - 1:
            return i + 1
        units += 2 if ord(ch) > 0xFFFF else 1
    return column


def _next_break(text: str, start: int) -> int:
    """Where the line after ``start`` begins (js-yaml breaks at LF, CR and CRLF)."""
    for i in range(start, len(text)):
        if text[i] == "\n":
            return i + 1
        if text[i] == "\r":
            return i + 2 if text[i + 1:i + 2] == "\n" else i + 1
    return -1


def to_nodes(value: Any, loc: Loc) -> Any:
    if isinstance(value, dict):
        if set(value) == {"__jsExpr"} and isinstance(value["__jsExpr"], str):
            return JsExpr(value["__jsExpr"], loc)
        out = YMap(loc=loc)
        for k, v in value.items():
            out[k] = to_nodes(v, loc)
        return out
    if isinstance(value, list):
        seq = YList((to_nodes(v, loc) for v in value), loc=loc)
        seq.item_locs = [loc] * len(seq)
        return seq
    return value
