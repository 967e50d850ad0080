"""Answers for a driven session, so an endless run never waits for a click that will not come."""
from __future__ import annotations

import re

# The recommended marker in either bracket width: (推荐) （推荐） (Recommended) （Recommended）.
_RECOMMENDED = re.compile(r"[(（]\s*(推荐|recommended)\s*[)）]", re.IGNORECASE)
_APPROVE = re.compile(r"^\s*(approve|approved|批准|同意)\b", re.IGNORECASE)
AUTONOMY_REPLY = (
    "(无人值守自动应答) Nobody can type an answer right now: this session runs unattended. Decide from the "
    "context and tool results you have; when key information is missing, try to get it with a tool first, "
    "and if you still cannot, state your assumption and go on.")


def choose_option(question: dict) -> str | None:
    """The option a driven session picks: the recommended one, else a plan review's approve, else the
    first; None when the question has no options."""
    options = [o for o in question.get("options") or [] if isinstance(o, dict) and o.get("label")]
    if not options:
        return None
    for option in options:
        if option.get("recommended") is True or _RECOMMENDED.search(option["label"]):
            return option["label"]
    if question.get("intent") == "plan-review" or any(_APPROVE.match(o["label"]) for o in options):
        for option in options:
            if _APPROVE.match(option["label"]):
                return option["label"]
    return options[0]["label"]


def auto_answer(question: dict, *, free_text: bool) -> dict | None:
    """``{"option": label}``, ``{"text": autonomy reply}``, or None (a human must answer)."""
    label = choose_option(question)
    if label is not None:
        return {"option": label}
    if free_text:
        return {"text": AUTONOMY_REPLY}
    return None


def approval_decision(policy: str | None) -> str:
    """One-time approvals are allowed once, unless the session's policy is never (dsh's outcomes)."""
    return "rejected" if policy == "never" else "allowed-once"
