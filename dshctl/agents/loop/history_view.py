"""The model's view of a session, kept up to date as events are appended (no full re-fold per step).

``derive_history`` (the session package) folds the whole log; a long turn would re-fold it on every
step. This view folds only the events appended since its last look, and falls back to the full fold
whenever the surface is rewritten (a ``replace`` op, as compaction writes), so it is always exactly
``derive_history(events)`` — a property test holds it to that. The newest ``request/header`` is
tracked the same way. An agent on a restored log starts from the log's surface (the seqs of its
model-visible events, which validation keeps), so its first look reads those ~1,000 events of a
10,000-event session, not all of them.
"""
from __future__ import annotations

from dshctl.agents.session.history import (canonical_header, derive_history, event_message,
                                           latest_request_header, messages_of)

SURFACE = frozenset({"user/message", "assistant/message", "tool/result"})


class HistoryView:
    def __init__(self) -> None:
        self._seen = 0
        self._messages: list[dict] = []
        self._header: dict | None = None

    @classmethod
    def seeded(cls, events: list[dict], surface: list[int]) -> "HistoryView":
        """The view of ``events`` whose surface is ``surface`` (seqs are list indexes: contiguous)."""
        view = cls()
        view._messages = messages_of(events[seq] for seq in surface)
        view._header = latest_request_header(events)
        view._seen = len(events)
        return view

    def _catch_up(self, events: list[dict]) -> None:
        if len(events) < self._seen:          # a different (shorter) log: start over
            self.__init__()
        rewritten = False
        for event in events[self._seen:]:
            kind = event["type"]
            if kind == "request/header":
                self._header = canonical_header(event["data"]["header"])
            elif kind in SURFACE:
                op = event.get("surfaceOp")
                if op == "append":
                    message = event_message(event)
                    if message is not None:
                        self._messages.append(message)
                elif op is not None:
                    rewritten = True
        if rewritten:
            self._messages = derive_history(events)
        self._seen = len(events)

    def messages(self, events: list[dict]) -> list[dict]:
        self._catch_up(events)
        return list(self._messages)

    def header(self, events: list[dict]) -> dict | None:
        self._catch_up(events)
        return self._header
