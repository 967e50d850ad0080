"""Retry pacing and the prompts a failing loop sends."""
from __future__ import annotations

import re

# Errors that mean "the context is too big": compact first, then retry.
_CONTEXT_PRESSURE = re.compile(
    r"context[ _-]?(length|window)|maximum context|too many tokens|token limit|prompt is too long|"
    r"context_length_exceeded|allocation error: not enough memory|exceeds? the (model'?s )?context",
    re.IGNORECASE)
COMPACTION_COOLDOWN_S = 300.0


def delay_ms(failures: int, *, initial: float, factor: float, cap: float) -> float:
    """Wait before retry number ``failures`` (1-based): initial × factor^(n-1), never above the cap."""
    if failures <= 0:
        return 0.0
    delay = float(initial)
    for _ in range(failures - 1):
        delay *= factor
        if delay >= cap:
            return float(cap)
    return min(delay, float(cap))


def is_context_pressure(error: dict | None) -> bool:
    if not error:
        return False
    text = f"{error.get('code', '')} {error.get('message', '')}"
    return bool(_CONTEXT_PRESSURE.search(text))


def escalation_prompt(original: str, error: dict | None, failures: int) -> str:
    """The changed-route prompt sent after ``escalateAfterFailures`` identical failures."""
    code = (error or {}).get("code", "UNKNOWN")
    message = (error or {}).get("message", "unknown error")
    return (f"The previous attempt failed {failures} times in a row with {code}: {message}\n"
            "Do not repeat the step that fails. Take a different route to the same goal (another tool, "
            "smaller pieces, or a workaround), then continue.\n\n"
            f"The request was:\n{original}")
