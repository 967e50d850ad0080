"""Content blocks in a persisted Team message, checked as dsh's fold checks them.

dsh's block map can be extended by plugins, so its schema is a union: each core variant (``text``,
``reasoning``, ``image``, ``tool-call``, ``tool-result``) must have exactly its own fields, of their
types, and any other block needs only a non-empty string ``type`` (its other fields are kept as they
are). A core type with a missing, extra or mistyped field is therefore invalid, never "unknown".
"""
from __future__ import annotations

import json
import math
import re

CORE_TYPES = frozenset({"text", "reasoning", "image", "tool-call", "tool-result"})
MEDIA_TYPES = frozenset({"image/png", "image/jpeg", "image/webp", "image/gif"})
MAX_SAFE_INTEGER = 2 ** 53 - 1
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def json_utf8_bytes(value) -> int:
    """The UTF-8 size of ``JSON.stringify(value)``, the measure of dsh's ``maxMessageBytes``: characters
    are kept, not escaped (``ensure_ascii`` would count an ``é`` as six bytes), and a lone surrogate,
    which JSON.stringify writes as a six-character escape, counts six."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return len(text.encode("utf-8", "surrogatepass")) + 3 * len(_LONE_SURROGATE.findall(text))


def valid_blocks(blocks) -> bool:
    return isinstance(blocks, list) and all(valid_block(block) for block in blocks)


def valid_block(block) -> bool:
    if not isinstance(block, dict):
        return False
    kind = block.get("type")
    if not isinstance(kind, str) or not kind:
        return False
    if kind not in CORE_TYPES:
        return True
    check = _CORE[kind]
    return check(block)


def _exact(block: dict, required: dict, optional: dict | None = None) -> bool:
    """Exactly ``type`` plus ``required`` (all present) and ``optional`` (if present), each passing its test."""
    optional = optional or {}
    if not set(block) - {"type"} <= set(required) | set(optional):
        return False
    if not all(key in block and test(block[key]) for key, test in required.items()):
        return False
    return all(test(block[key]) for key, test in optional.items() if key in block)


def _string(value) -> bool:
    return isinstance(value, str)


def _non_empty(value) -> bool:
    return isinstance(value, str) and bool(value)


def _safe_integer(value, minimum: int) -> bool:
    # a JSON number: 3 and 3.0 are the same integer to dsh; a boolean is no number
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if isinstance(value, float) and (not math.isfinite(value) or not value.is_integer()):
        return False
    return minimum <= value <= MAX_SAFE_INTEGER


def _attachment(value) -> bool:
    return isinstance(value, dict) and _exact(value, {
        "attachmentId": _non_empty, "mediaType": lambda v: isinstance(v, str) and v in MEDIA_TYPES,
        "bytes": lambda v: _safe_integer(v, 0), "width": lambda v: _safe_integer(v, 1),
        "height": lambda v: _safe_integer(v, 1)}, {"name": _string})


_CORE = {
    "text": lambda b: _exact(b, {"text": _string}),
    "reasoning": lambda b: _exact(b, {"text": _string}),
    "image": lambda b: _exact(b, {"attachment": _attachment}),
    "tool-call": lambda b: _exact(b, {"id": _non_empty, "name": _string, "arguments": _string}),
    "tool-result": lambda b: _exact(b, {"toolCallId": _non_empty, "content": valid_blocks},
                                    {"isError": lambda v: isinstance(v, bool)}),
}
