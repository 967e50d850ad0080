"""Restoring a log: scan it, re-validate what it holds, and use / refresh the restore checkpoint.

A restore reads the whole file (its bytes are needed to check the checkpoint's digest), takes the
events of the prefix a matching checkpoint covers as they are, and decodes and validates only the
frames after it, continuing from the checkpoint's validation state. What it returns is what a full
restore returns: the same events, the same trace, the same torn tail (tests/agents/
test_session_checkpoint.py holds the two to each other).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dshctl.agents.session import checkpoint, reader
from dshctl.agents.session.reader import CorruptLog, LogScan
from dshctl.agents.session.trace import LogTrace
from dshctl.agents.session.validate import (
    KNOWN_EVENT_TYPES, SURFACE_TYPES, EventRejected, check_core_payload, check_envelope, check_message_shape,
)


def validate_stored(events: list[dict], *, strict: bool, trace: LogTrace | None = None) -> LogTrace:
    """Re-check a stored prefix (continuing ``trace``); ``strict`` (resume) also demands dsh's
    turn/step nesting and known types."""
    trace = LogTrace(nested=strict) if trace is None else trace
    check, accept, plain_chunk = trace.check, trace.accept, trace.plain_chunk
    for event in events:
        if plain_chunk(event):
            continue
        try:
            check_envelope(event)
            if event["type"] in SURFACE_TYPES:
                check_message_shape(event)
            check_core_payload(event)
            accept(check(event))
        except EventRejected as exc:
            raise CorruptLog(f"event seq {event.get('seq') if isinstance(event, dict) else '?'}: {exc}") from None
        if strict and event["type"] not in KNOWN_EVENT_TYPES and event.get("ignorable") is not True:
            raise CorruptLog(f'event type "{event["type"]}" (seq {event["seq"]}) is unknown and not marked '
                             "ignorable; refusing to interpret the log")
    return trace


def _scan(path: Path, buf: bytes) -> tuple[LogScan, checkpoint.Checkpoint | None, int]:
    """The scan, the matching checkpoint and how many of the scan's events came from it."""
    cp = checkpoint.load(path, buf)
    scan = reader.scan_file(path, buf, cp)
    done = len(cp.events) if cp is not None else 0
    if done and (len(scan.events) < done or scan.events[done - 1] is not cp.events[-1]):
        done = 0          # the reader did not resume from it (not a boundary of this log): all decoded
    return scan, cp, done


@dataclass
class Restored:
    scan: LogScan
    trace: LogTrace           # the state after every event of ``scan`` (recovered ones included)
    from_checkpoint: int      # events taken from the checkpoint (0: the log was read in full)


def restore(path: Path, *, strict: bool, save: bool, check_header=lambda header: None) -> Restored:
    """Scan and validate ``path`` (``check_header`` first sees the header); ``save`` writes a new
    checkpoint when this restore decoded at least ``checkpoint.SAVE_AFTER`` events beyond the old
    one (strict restores only)."""
    buf = reader.read_stable(path)
    scan, cp, done = _scan(path, buf)
    check_header(scan.header)
    trace = cp.trace(nested=strict) if done else LogTrace(nested=strict)
    complete = len(scan.events) - len(scan.recovered)
    validate_stored(scan.events[done:complete], strict=strict, trace=trace)
    if save and strict and complete - done >= checkpoint.SAVE_AFTER:
        end = len(buf) if scan.truncate_to is None else scan.truncate_to
        checkpoint.save(path, buf[:end], scan.events[:complete], trace, scan.lines)
    validate_stored(scan.recovered, strict=strict, trace=trace)
    return Restored(scan, trace, done)


def refresh(path: Path) -> bool:
    """Bring the checkpoint of ``path`` up to the log's complete frames (after a session is closed,
    so the next restore decodes nothing); False when the log does not restore (left to ``open``)."""
    try:
        buf = reader.read_stable(path)
        scan, cp, done = _scan(path, buf)
        complete = len(scan.events) - len(scan.recovered)
        if done and complete == done:
            return True
        trace = cp.trace(nested=True) if done else LogTrace(nested=True)
        validate_stored(scan.events[done:complete], strict=True, trace=trace)
    except (CorruptLog, OSError):
        return False
    end = len(buf) if scan.truncate_to is None else scan.truncate_to
    return checkpoint.save(path, buf[:end], scan.events[:complete], trace, scan.lines)
