"""Bounds on a tool call's arguments, checked before they are parsed or walked.

``json.loads`` recurses once per ``[``/``{`` (a 200,000-deep array raised ``RecursionError`` and ended
the whole turn), and every later step (schema check, repeat guard, the session log) walks the value
again. So argument text deeper than ``MAX_ARGUMENT_DEPTH`` levels, or longer than
``MAX_ARGUMENT_BYTES``, is refused before it is parsed, and an already parsed value (a model that
sends objects) is measured without recursion. docs/agents.md, "Tool argument limits".
"""
from __future__ import annotations

import itertools
import re
from typing import Any

MAX_ARGUMENT_DEPTH = 64                 # [ and { levels: real tool arguments use a handful
MAX_ARGUMENT_BYTES = 32 * 1024 * 1024   # a 2 MB write_file is ordinary; 32 MB is not an argument
KEPT_PREFIX = 1024                      # what the error result and the log keep of refused text

_JSON_STRING = re.compile(r'"(?:[^"\\]++|\\.)*+"', re.S)
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
_BRACKETS = re.compile(r"[^\[\]{}]+")


def text_depth(text: str) -> int:
    """How deep ``[``/``{`` nest in JSON text (brackets inside strings do not count)."""
    brackets = _BRACKETS.sub("", _JSON_STRING.sub("", text))
    return max(itertools.accumulate(_STEP[c] for c in brackets), default=0)


def value_depth(value: Any, stop: int = MAX_ARGUMENT_DEPTH + 1) -> int:
    """Nesting depth of lists and dicts, walked without recursion; stops counting at ``stop``."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, depth)
            if deepest >= stop:
                return deepest
            stack.extend((child, depth + 1) for child in
                         (item.values() if isinstance(item, dict) else item))
    return deepest


def text_problem(text: str) -> str | None:
    """Why argument text may not be parsed, or None."""
    if len(text) > MAX_ARGUMENT_BYTES:
        return (f"the arguments are {len(text):,} characters, over the limit of "
                f"{MAX_ARGUMENT_BYTES:,} bytes; send less per call")
    if text_depth(text) > MAX_ARGUMENT_DEPTH:
        return f"the arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels; send a flatter object"
    return None


def value_problem(value: Any) -> str | None:
    if value_depth(value) > MAX_ARGUMENT_DEPTH:
        return f"the arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels; send a flatter object"
    return None


def kept(text: str) -> str:
    return text if len(text) <= KEPT_PREFIX else text[:KEPT_PREFIX] + "…"
