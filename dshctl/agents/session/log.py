"""``SessionLog``: one live, append-only session — validated appends, durable batches (``commit``).

Events accumulate in memory as they are appended (each one checked first, see ``validate.py``);
``commit()`` writes the pending ones as one batch — one checksummed Zstandard frame — and fsyncs.
The agent loop commits at dsh's checkpoints (before a model request, before a tool runs, after a
step, at the end of a turn). A writer holds an exclusive lock on ``<session dir>/.lock`` for the
log's lifetime, so two processes never append to one session.
"""
from __future__ import annotations

import fcntl
import os
import threading
import time as _time
from pathlib import Path
from typing import Any

from dshctl.agents.session import writer
from dshctl.agents.session.trace import LogTrace
from dshctl.agents.session.validate import (
    KNOWN_EVENT_TYPES, SURFACE_TYPES, EventRejected, NotPlain, check_core_payload, check_envelope,
    check_message_shape, plain_copy,
)

ENVELOPE_EXTRAS = ("ignorable", "surfaceOp", "sourceEventSeqs")
LOCK_NAME = ".lock"


class SessionBusy(RuntimeError):
    """Another process has this session open for writing."""


def lock_session(directory: Path) -> int:
    fd = os.open(directory / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise SessionBusy(f"session in {directory} is open in another process") from None
    return fd


def build_event(type: str, data: Any, seq: int, now: int, extra: dict) -> dict:
    """The event as it enters the log, validated in isolation (no log state needed)."""
    if not isinstance(type, str) or not type:
        raise EventRejected("an event type must be a non-empty string")
    if extra:
        unknown = set(extra) - set(ENVELOPE_EXTRAS)
        if unknown:
            raise EventRejected(f"unknown event fields: {', '.join(sorted(unknown))}")
    try:
        data = plain_copy(data)     # what the log keeps is what a reader gets back from the file
        if extra:
            extra = plain_copy({k: v for k, v in extra.items() if v is not None}, "event")
    except NotPlain as exc:
        raise EventRejected(f'session event "{type}" carries non-JSON data: {exc}') from None
    if type not in KNOWN_EVENT_TYPES and extra.get("ignorable") is not True:
        raise EventRejected(f'session event "{type}" is not a dsh event type; mark it ignorable=True '
                            "so dsh can still resume the log")
    event: dict[str, Any] = {"type": type, "seq": seq, "time": now, "data": data}
    if type in SURFACE_TYPES and extra.get("surfaceOp") is None:
        extra = {**extra, "surfaceOp": "append"}
    for key in ENVELOPE_EXTRAS:
        if extra.get(key) is not None:
            event[key] = extra[key]
    check_envelope(event)
    check_message_shape(event)
    check_core_payload(event)
    return event


_SCALARS = (str, int, bool, type(None))


def _plain_chunk_event(data: Any, seq: int, now: int) -> dict | None:
    """Half of a turn's events are streamed chunks ``{turn, step, chunk: {type, …scalars}}``: such a one
    is copied and checked here in one pass (what ``build_event`` would make of it, with the open step
    checked by ``LogTrace.plain_chunk``); None sends anything else through ``build_event``."""
    if type(data) is not dict or len(data) != 3:
        return None
    copy: dict[str, Any] = {}
    for key, value in data.items():
        if key in ("turn", "step"):
            if type(value) is not int:
                return None
            copy[key] = value
        elif key == "chunk" and type(value) is dict and type(value.get("type")) is str:
            inner = {}
            for k, v in value.items():
                if type(k) is not str or type(v) not in _SCALARS:
                    return None
                inner[k] = v
            copy[key] = inner
        else:
            return None
    return {"type": "assistant/chunk", "seq": seq, "time": now, "data": copy}


class SessionLog:
    def __init__(self, path: Path, header: dict, events: list[dict], *, compression: str,
                 pack_chunks: bool, trace: LogTrace, lock_fd: int | None):
        self.path = path
        self.header = header
        self.events = events
        self.compression = compression
        self.pack_chunks = pack_chunks
        self._trace = trace
        self._lock_fd = lock_fd
        self._durable = len(events)       # events[:durable] are on disk
        self.listeners: list = []         # fn(event), called after each accepted append
        self._commit_lock = threading.Lock()

    @property
    def id(self) -> str:
        return self.header["id"]

    def surface(self) -> list[int]:
        """The seqs of the model-visible events, in order (what ``derive_history`` folds to)."""
        return list(self._trace.surface)

    @property
    def pending(self) -> int:
        return len(self.events) - self._durable

    @property
    def closed(self) -> bool:
        return self._lock_fd is None

    def append(self, type: str, data: Any, **extra: Any) -> dict:
        """Validate and log one event (``surfaceOp``, ``sourceEventSeqs``, ``ignorable`` as extras)."""
        if self._lock_fd is None:
            raise EventRejected(f"session {self.id} is closed")
        now = max(int(_time.time() * 1000), self.events[-1]["time"] if self.events else 0)
        event = _plain_chunk_event(data, len(self.events), now) if type == "assistant/chunk" and not extra else None
        if event is None or not self._trace.plain_chunk(event):
            event = build_event(type, data, len(self.events), now, extra)
            self._trace.accept(self._trace.check(event))
        self.events.append(event)
        for listener in list(self.listeners):
            listener(event)
        return event

    def commit(self) -> int:
        """Write the pending events as one durable batch; returns how many were written. Serialized: the
        loop commits from a worker thread while the event loop may append (and a Team event commits)."""
        with self._commit_lock:
            end = len(self.events)
            batch = self.events[self._durable:end]
            if not batch:
                return 0
            writer.append_durably(self.path, writer.encode_batch(batch, self.compression, self.pack_chunks))
            self._durable = end     # events appended during the write stay pending
            return len(batch)

    def close(self) -> None:
        """Commit what is pending and release the writer lock; idempotent."""
        if self._lock_fd is None:
            return
        try:
            self.commit()
        finally:
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> "SessionLog":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
