"""Reading a session artifact back: header, the contiguous event prefix, and where a torn tail starts.

A torn tail is what a crash during an append leaves: an incomplete final Zstandard frame, or a last
JSONL line without its newline. Complete events decodable from it are kept (``recovered``); the
repair truncates to ``truncate_to`` and appends them again, with the closers, as one new batch.
Damage inside a complete frame (checksum, a torn record, a bad row) is corruption and is refused.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from dshctl.agents.session import frames
from dshctl.agents.session.layout import ZSTD_SUFFIX
from dshctl.agents.session.records import RecordError, decode_row, parse_header
from dshctl.agents.session.trust import event_problem, frame_checksummed


class CorruptLog(ValueError):
    """The artifact cannot be read as a session log; the message says where and why."""


class Resume(Protocol):
    end: int                 # bytes already decoded: a frame or line boundary
    events: list[dict]       # the events of those bytes
    lines: int               # the event lines they held (so diagnostics name the same line numbers)


@dataclass
class LogScan:
    header: dict
    events: list[dict] = field(default_factory=list)
    truncate_to: int | None = None          # set when a torn tail must be cut off before appending
    recovered: list[dict] = field(default_factory=list)   # complete events decoded from a torn frame
    size: int = 0
    lines: int = 0        # event lines of the complete frames (or complete lines)


class _LineScanner:
    """Incremental scan of event lines; keeps the contiguous prefix and the byte end of the last one."""

    def __init__(self, start_bytes: int):
        self.events: list[dict] = []
        self.consumed = start_bytes          # bytes fed so far
        self.committed = start_bytes         # byte end of the last good line
        self.fragment = b""
        self.issue: str | None = None
        self.line_no = 0

    def feed(self, chunk: bytes) -> None:
        base = self.consumed - len(self.fragment)
        data = self.fragment + chunk
        self.consumed += len(chunk)
        if self.issue is None and self._feed_fast(data, base):
            return
        start = 0
        while True:
            nl = data.find(b"\n", start)
            if nl < 0:
                break
            self._line(data[start:nl], base + nl + 1)
            start = nl + 1
        self.fragment = data[start:]

    def _feed_fast(self, data: bytes, base: int) -> bool:
        """All complete lines of ``data`` in one JSON parse (a JSONL line never holds a raw newline);
        False when anything needs the line-by-line path's precise diagnosis."""
        last = data.rfind(b"\n")
        if last < 0:
            return False
        try:
            rows = json.loads(b"[" + data[:last].replace(b"\n", b",") + b"]")
            events: list[dict] = []
            for row in rows:
                events.extend(decode_row(row))
        except (ValueError, RecordError):
            return False
        expected = len(self.events)
        for event in events:
            if type(event) is not dict or event.get("seq") != expected or event_problem(event):
                return False
            expected += 1
        self.events.extend(events)
        self.line_no += data.count(b"\n", 0, last + 1)
        self.committed = base + last + 1
        self.fragment = data[last + 1:]
        return True

    def _line(self, line: bytes, end: int) -> None:
        self.line_no += 1
        try:
            decoded = decode_row(json.loads(line))
        except (ValueError, RecordError):
            self.issue = self.issue or f"unparsable committed event at line {self.line_no + 1}"
            return
        if self.issue is not None:
            if any(isinstance(e, dict) and e.get("type") == "turn/end" for e in decoded):
                raise CorruptLog(self.issue)
            return
        for i, event in enumerate(decoded):
            problem = event_problem(event) if isinstance(event, dict) else None
            if problem is not None:  # valid JSON, not a valid event: a flipped bit, not trusted
                del self.events[len(self.events) - i:]
                self.issue = f"the event at line {self.line_no + 1} does not validate ({problem})"
                if any(isinstance(e, dict) and e.get("type") == "turn/end" for e in decoded):
                    raise CorruptLog(self.issue)
                return
            if not isinstance(event, dict) or event.get("seq") != len(self.events):
                expected = len(self.events)
                del self.events[len(self.events) - i:]
                got = event.get("seq") if isinstance(event, dict) else None
                self.issue = f"seq gap at line {self.line_no + 1} (expected {expected}, got {got})"
                if any(isinstance(e, dict) and e.get("type") == "turn/end" for e in decoded):
                    raise CorruptLog(self.issue)
                return
            self.events.append(event)
        self.committed = end


def _header(line: bytes) -> dict:
    try:
        return parse_header(line)
    except RecordError as exc:
        raise CorruptLog(str(exc)) from None


def _resumed(lines: _LineScanner, resume: Resume | None, start: int) -> int:
    """Seed ``lines`` with a checkpoint's events; returns the byte offset to go on from."""
    if resume is None:
        return start
    lines.events = list(resume.events)
    lines.consumed = lines.committed = resume.end
    lines.line_no = resume.lines
    return resume.end


def scan_raw(buf: bytes, resume: Resume | None = None) -> LogScan:
    nl = buf.find(b"\n")
    if nl < 0:
        raise CorruptLog("empty or header-less session log")
    scan = LogScan(_header(buf[:nl]), size=len(buf))
    if resume is not None and (resume.end <= nl or buf[resume.end - 1:resume.end] != b"\n"):
        resume = None          # not a line boundary of this log: read it all
    lines = _LineScanner(nl + 1)
    lines.feed(buf[_resumed(lines, resume, nl + 1):])
    if lines.issue is not None:  # a whole line (it ends in a newline) that is bad: damage, not a tear
        raise CorruptLog(f"{lines.issue}; the line is complete, so the log is damaged (a crash "
                         "only ever tears the last line); not trusted")
    scan.events, scan.lines = lines.events, lines.line_no
    if lines.committed < len(buf):
        scan.truncate_to = lines.committed
    return scan


def scan_zstd(buf: bytes, resume: Resume | None = None) -> LogScan:
    try:
        first = frames.scan_frames(buf, max_frames=1)
        if not first.frames:
            raise CorruptLog("empty or header-less Zstandard session log")
        start, end = first.frames[0]
        found = _frames_after_checkpoint(buf, resume.end) if resume is not None and resume.end > end else None
        if found is None:
            found, resume = frames.scan_frames(buf, start=end), None     # the whole log
        _check_checksums(buf, [(start, end), *found.frames])
        head = frames.decompress_frame(buf[start:end])
        if not head or head.find(b"\n") != len(head) - 1:
            raise CorruptLog("first Zstandard frame is not exactly one header line")
        scan = LogScan(_header(head[:-1]), size=len(buf))
        scanner = _LineScanner(len(head))
        _resumed(scanner, resume, len(head))
        for start, end in found.frames:
            scanner.feed(frames.decompress_frame(buf[start:end]))
    except frames.FrameCorruption as exc:
        raise CorruptLog(str(exc)) from None
    if scanner.fragment or scanner.issue is not None:
        raise CorruptLog(f"a complete Zstandard frame contains a torn or bad record ({scanner.issue or 'torn line'})")
    complete, scan.lines = len(scanner.events), scanner.line_no
    if found.torn_start is not None:
        scanner.feed(frames.decompress_prefix(buf[found.torn_start:]))
        scan.truncate_to = found.torn_start
        scan.recovered = scanner.events[complete:]
    scan.events = scanner.events
    return scan


def _frames_after_checkpoint(buf: bytes, end: int) -> frames.FrameScan | None:
    """The frames after a matching checkpoint's ``end``, or None to walk the whole log. Its digest
    binds ``buf[:end]`` to bytes whose frames were walked and checked when it was written, and ``end``
    was a frame boundary of them, so the prefix's ~1,700 frames (a 10,000-event log) need no second
    walk. A frame that does not parse from there sends the scan back to the start, which reports it."""
    try:
        return frames.scan_frames(buf, start=end)
    except frames.FrameCorruption:
        return None


def _check_checksums(buf: bytes, found: list[tuple[int, int]]) -> None:
    unchecked = [s for s, _ in found if not frame_checksummed(buf, s)]
    if unchecked:
        raise CorruptLog(f"the Zstandard frame at byte {unchecked[0]} has no content checksum "
                         "(dsh writes every frame with one); not trusted")


def read_stable(path: Path) -> bytes:
    """The file's bytes, re-read while a writer changes it between two stats (bounded)."""
    for _ in range(50):
        before = os.stat(path)
        data = path.read_bytes()
        after = os.stat(path)
        if (before.st_size, before.st_mtime_ns, before.st_ino) == (after.st_size, after.st_mtime_ns, after.st_ino):
            return data
    return data


def scan_file(path: Path, buf: bytes | None = None, resume: Resume | None = None) -> LogScan:
    """Scan the log (``buf``: its bytes, when already read); ``resume`` skips a prefix already
    decoded and checked (a restore checkpoint whose digest matched these bytes)."""
    buf = read_stable(path) if buf is None else buf
    return scan_zstd(buf, resume) if path.name.endswith(ZSTD_SUFFIX) else scan_raw(buf, resume)


def read_header_only(path: Path) -> dict:
    """The header without reading any event: the first line, or the first frame, in bounded reads."""
    zstd = path.name.endswith(ZSTD_SUFFIX)
    data = b""
    with open(path, "rb") as fh:
        while True:
            chunk = fh.read(8192)
            if not chunk:
                raise CorruptLog("empty or header-less session log")
            data += chunk
            if not zstd:
                nl = data.find(b"\n")
                if nl >= 0:
                    return _header(data[:nl])
                continue
            try:
                found = frames.scan_frames(data, max_frames=1)
                if found.frames:
                    start, end = found.frames[0]
                    head = frames.decompress_frame(data[start:end])
                    if not head or head.find(b"\n") != len(head) - 1:
                        raise CorruptLog("first Zstandard frame is not exactly one header line")
                    return _header(head[:-1])
            except frames.FrameCorruption as exc:
                raise CorruptLog(f"header frame failed validation: {exc}") from None


def raw_text(path: Path) -> str:
    """The logical ``session.jsonl`` text: complete frames decoded and joined (a torn frame omitted)."""
    buf = read_stable(path)
    if not path.name.endswith(ZSTD_SUFFIX):
        return buf.decode("utf-8")
    try:
        found = frames.scan_frames(buf)
        return b"".join(frames.decompress_frame(buf[s:e]) for s, e in found.frames).decode("utf-8")
    except frames.FrameCorruption as exc:
        raise CorruptLog(str(exc)) from None
