"""What one line of a block-style file holds, for ``blockscan``'s loop: read once per distinct line
text (lines like ``    host: 127.0.0.1`` repeat across the files of a profile) and remembered.

``common_line`` gives True for a blank or comment line, False for a line the loop leaves to the
general path, else a tuple: indentation, dash, key (as JavaScript sees it), key column, the kind of
value (``OPEN_KEY`` for ``key:`` with its value below, ``SCALAR``, ``FLOW``, ``JS``, ``FLOW_MAP``), the value, the value's
column and where the empty value of ``key:`` starts. Immutable, so it can be shared.
"""
from __future__ import annotations

import re

from dshctl.core.yaml.blockflow import flow_mapping, flow_sequence
from dshctl.core.yaml.blocktokens import Unsupported, flow_parts, js_text
from dshctl.core.yaml.scalars import js_key, resolve_plain

# The common line, matched in one go: an indented plain key (no space before the ':'), then nothing
# or one plain scalar without ':' or '#' (and not starting with an indicator), or a one-line quoted
# scalar without quotes or escapes inside, or a one-line flow sequence of plain scalars; all of it
# perhaps after `- `. Groups: indentation, the dash, key, value (None for `key:`).
SIMPLE_ENTRY = re.compile(
    r"""( *)(?:(-) +)?([A-Za-z0-9_][A-Za-z0-9_./-]*):"""
    r"""(?: +([^ '"\[\]{}#&*!|>%@`,?:-][^#:]*?|'[^']*'|"[^"\\]*"|\[[^\[\]{}#:'"]*\]))? *\Z""")
# The same line start with any value: `!!js` on a scalar, a flow collection (``_other``).
_OTHER_ENTRY = re.compile(r"( *)(?:(-) +)?([A-Za-z0-9_][A-Za-z0-9_./-]*): +(\S.*)\Z")
MAX_KEY = 1000  # libyaml refuses a simple key longer than 1024 characters
OPEN_KEY, SCALAR, FLOW, JS, FLOW_MAP = "pending", "scalar", "flow", "js", "flow map"  # the kinds of value
_MISSING = object()


def common_line(s: str, keys: dict, plain: dict, flows: dict) -> tuple | bool:
    """What ``read`` needs of a line ``SIMPLE_ENTRY`` matches (False for any other line): its
    indentation, dash, key (as JavaScript sees it) and key column, the kind of value, the value
    (for a flow sequence: its items and their columns), the value's column and where the empty
    value of ``key:`` starts. Immutable, so one line text read in many files is read once."""
    m = SIMPLE_ENTRY.match(s)
    if m is None:
        return _other(s, keys, plain)
    indent, dash, raw, value = m.groups()
    if len(raw) > MAX_KEY:
        return False  # libyaml refuses so long a simple key: the event builder says so
    key = keys.get(raw)
    if key is None:
        key = keys[raw] = js_key(resolve_plain(raw), None)
    key_column = m.start(3)
    if value is None:
        return len(indent), dash is not None, key, key_column, OPEN_KEY, None, 0, key_column + len(raw) + 2
    first = value[0]
    if first == "'" or first == '"':
        kind, scalar = SCALAR, value[1:-1]
    elif first == "[":
        scalar = flows.get(value)
        if scalar is None:
            scalar = flows[value] = flow_parts(value, plain)
        kind = FLOW
    else:
        kind, scalar = SCALAR, plain.get(value, _MISSING)
        if scalar is _MISSING:
            scalar = plain[value] = resolve_plain(value)
    return len(indent), dash is not None, key, key_column, kind, scalar, m.start(4), 0

def _other(s: str, keys: dict, plain: dict) -> tuple | bool:
    """``_common`` for a blank or comment line (True), or a ``key: value`` line whose value is
    ``!!js`` on a one-line scalar or a flow collection with quoted items or a flow mapping
    (read as the general path reads them); False for any other line."""
    body = s.lstrip(" ")
    if not body or body[0] == "#":
        return True
    m = _OTHER_ENTRY.match(s)
    if m is None or len(m.group(3)) > MAX_KEY:
        return False
    indent, dash, raw, value = m.groups()
    v = m.start(4)
    try:
        if value.startswith("!!js "):
            kind, scalar = JS, js_text(s, v)
        elif value[0] == "[":
            values, columns = flow_sequence(s, v, plain)
            kind, scalar = FLOW, (values, [c - v for c in columns])
        elif value[0] == "{":
            entries = [] if value.rstrip(" ") == "{}" else flow_mapping(s, v, plain, keys)
            kind, scalar = FLOW_MAP, [(k, ka - v, x, xa - v) for k, ka, x, xa in entries]
        else:
            return False
    except Unsupported:
        return False
    key = keys.get(raw)
    if key is None:
        key = keys[raw] = js_key(resolve_plain(raw), None)
    return len(indent), dash is not None, key, m.start(3), kind, scalar, v, 0
