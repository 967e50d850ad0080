"""The session state dsh keeps in log-only events, folded from the log as dsh folds it.

None of these reach the model's history; they are what a session *is set to*:

- ``title``: the last ``session/title`` (``{title, messageSeqs, source}`` plus its ``eventSeq`` and
  ``updatedAt``), as ``foldSessionTitle`` reports it;
- ``knobs``: the last ``permission/preset``, ``sandbox/mode`` and ``approval/policy`` — each a
  session override, ``None`` where the deployment default applies;
- ``request_context``: the last ``request/context`` (the model route's ``provider``, ``model``,
  ``contextWindow``?);
- ``pending_inbox``: the messages ``agent/inbox/spliced`` events left queued for the next turn and the
  next step (splices since the header's ``seedLength``, a fork's seed belongs to its parent).
"""
from __future__ import annotations

from typing import Any

KNOB_EVENTS = {"permission/preset": ("preset", "preset"), "sandbox/mode": ("sandbox", "mode"),
               "approval/policy": ("approval", "policy")}
INBOX_TARGETS = ("next-turn", "next-step")


class InboxFoldError(ValueError):
    """A splice that does not fit the inbox it applies to (dsh refuses such a log on resume)."""


def title(events: list[dict]) -> dict | None:
    for event in reversed(events):
        if event["type"] == "session/title" and isinstance(event["data"], dict):
            return {**event["data"], "eventSeq": event["seq"], "updatedAt": event["time"]}
    return None


def knobs(events: list[dict]) -> dict[str, Any]:
    state: dict[str, Any] = {"preset": None, "sandbox": None, "approval": None}
    for event in events:
        slot = KNOB_EVENTS.get(event["type"])
        if slot is not None and isinstance(event["data"], dict):
            state[slot[0]] = event["data"].get(slot[1])
    return state


def request_context(events: list[dict]) -> dict | None:
    for event in reversed(events):
        if event["type"] == "request/context" and isinstance(event["data"], dict):
            return event["data"]
    return None


def pending_inbox(events: list[dict], seed_length: int = 0) -> dict[str, list[dict]]:
    """The queued messages per target after replaying every splice from ``seed_length`` on."""
    state: dict[str, list[dict]] = {target: [] for target in INBOX_TARGETS}
    for event in events[seed_length:]:
        if event["type"] != "agent/inbox/spliced":
            continue
        splice = event["data"]
        if not isinstance(splice, dict):   # the read-only path shows logs a resume would refuse
            raise InboxFoldError(f"inbox splice at seq {event['seq']} is not an object")
        target = splice.get("target")
        if target not in state:
            raise InboxFoldError(f"inbox splice at seq {event['seq']} names no inbox ({target!r})")
        queue = state[target]
        start, removed = splice.get("start"), splice.get("removedCount", 0)
        inserted = splice.get("inserted")
        if type(start) is not int or type(removed) is not int or start < 0 or removed < 0 \
                or start + removed > len(queue) or start > len(queue) or not isinstance(inserted, list):
            raise InboxFoldError(f"inbox splice at seq {event['seq']} does not fit the {target} inbox")
        queue[start:start + removed] = inserted
        ids = [m.get("id") for q in state.values() for m in q if isinstance(m, dict)]
        if len(ids) != len(set(ids)):
            raise InboxFoldError(f"inbox splice at seq {event['seq']} queues a message that is already pending")
    return state
