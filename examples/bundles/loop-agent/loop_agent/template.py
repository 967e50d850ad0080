"""The continuation prompt: ``{{lastAnswer}}``, ``{{round}}`` (1-based: round 1 is the first
continuation, not the user's first message) and ``{{task}}`` (always empty on a chat host); any other
``{{placeholder}}`` stays as written."""
from __future__ import annotations

import re

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def render(template: str, *, last_answer: str, round: int, task: str = "") -> str:
    values = {"lastAnswer": last_answer, "round": str(round), "task": task}
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def is_forever(text: str) -> bool:
    """``/forever``, case-insensitive, surrounding white space ignored."""
    return text.strip().lower() == "/forever"
