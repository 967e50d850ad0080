"""The restore checkpoint: a sidecar file that lets a restore skip re-reading a long log's prefix.

Restoring a session decodes every frame, expands the packed chunk rows and re-validates every event
(~45 ms for 10,000 events). ``<session dir>/.restore`` keeps the result of that work for the log's
first ``end`` bytes: the decoded events and the validation state after them (turn/step nesting and the
surface). It is a cache, never a source: it is bound to the log by the SHA-256 of those bytes, so a log
that was truncated, rewritten, replaced or belongs to another session does not match and is read in
full; the file itself is one checksummed Zstandard frame, so a damaged or torn checkpoint does not
decode and is ignored the same way. Only a prefix validated under the strict (resume) rules is ever
saved, from events decoded from the file (not the live log's memory), so what a checkpoint restores
is what a full restore of the same bytes would. dsh ignores the file (it lists ``session.jsonl*``
only); it is written with temp + rename and without fsync: a lost one only costs a full read.

Its events are trusted once it matches, and the log's digest alone is no proof of who wrote them (anyone
can hash a log): the frame is sealed with a keyed BLAKE2b under a key of this user's dshctl cache
(``$XDG_CACHE_HOME/dshctl/restore.key``, 0600), checked before anything is decoded. A session directory
copied from elsewhere, or a sidecar forged beside a log, fails the seal and the log is read in full;
with the caches off (``--no-cache``, ``DSHCTL_CACHE=0``) no checkpoint is read or written.
"""
from __future__ import annotations

import hashlib
import marshal
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from dshctl.agents.session import frames
from dshctl.agents.session.trace import LogTrace, TraceState
from dshctl.core.gcpause import build_long_lived

FILE_NAME = ".restore"
_MAGIC = b"dshctl-restore/3\n"
_SEAL = 32            # bytes of the keyed BLAKE2b after the magic line
SAVE_AFTER = 1000     # events a restore decoded beyond the checkpoint before it writes a new one


@dataclass
class Checkpoint:
    end: int                  # bytes of the log the checkpoint covers (a frame or line boundary)
    events: list[dict]        # the events of those bytes, in seq order
    state: tuple              # TraceState fields after them
    surface: list[int]
    lines: int                # the event lines of those bytes

    def trace(self, *, nested: bool) -> LogTrace:
        """The validation state after the checkpoint's events, for checking the ones after them."""
        open_turn, open_step, next_turn, next_step, pending = self.state
        state = TraceState(open_turn, open_step, next_turn, next_step, frozenset(pending)) if nested else TraceState()
        return LogTrace(state=state, surface=list(self.surface), nested=nested, last_seq=len(self.events) - 1)


def _digest(log_name: str, prefix: bytes) -> bytes:
    return hashlib.sha256(log_name.encode() + b"\0" + prefix).digest()


def load(log_path: Path, buf: bytes) -> Checkpoint | None:
    """The checkpoint of ``log_path`` when it matches ``buf`` (the log's bytes), else None."""
    try:
        data = (log_path.parent / FILE_NAME).read_bytes()
    except OSError:
        return None
    key = _key(create=False)
    if key is None or not data.startswith(_MAGIC):
        return None
    seal, frame = data[len(_MAGIC):len(_MAGIC) + _SEAL], data[len(_MAGIC) + _SEAL:]
    if not secrets.compare_digest(seal, _seal(key, frame)):
        return None      # not written by this user's dshctl (copied, forged) or damaged
    try:
        # ~30,000 containers for 10,000 events, all kept (and acyclic): nothing to collect, ever
        body = frames.decompress_frame(frame)
        end, digest, events, state, surface, lines = build_long_lived(lambda: marshal.loads(body))
    except (frames.FrameCorruption, ValueError, EOFError, TypeError):
        return None
    if not (type(end) is int and 0 < end <= len(buf) and type(events) is list and type(surface) is list
            and type(state) is tuple and len(state) == 5 and type(lines) is int):
        return None
    if digest != _digest(log_path.name, buf[:end]):
        return None      # stale after a truncation, a rewrite, another session's log
    if events and (type(events[-1]) is not dict or events[-1].get("seq") != len(events) - 1):
        return None
    return Checkpoint(end, events, state, surface, lines)


def save(log_path: Path, prefix: bytes, events: list[dict], trace: LogTrace, lines: int) -> bool:
    """Record ``events`` (decoded from ``prefix``, the log's first bytes) and ``trace`` after them.
    Best effort: a failure leaves the old checkpoint (or none), never a partial one."""
    s = trace.state
    state = (s.open_turn, s.open_step, s.next_turn, s.next_step, tuple(s.pending_calls))
    key = _key(create=True)
    if key is None:
        return False
    try:
        body = marshal.dumps((len(prefix), _digest(log_path.name, prefix), events, state, trace.surface, lines), 4)
    except ValueError:
        return False
    frame = frames.compress_frame(body)
    directory = log_path.parent
    tmp = directory / f"{FILE_NAME}.{secrets.token_hex(6)}.tmp"
    try:
        with open(tmp, "xb") as fh:
            fh.write(_MAGIC + _seal(key, frame) + frame)
        os.replace(tmp, directory / FILE_NAME)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False
    _sweep_orphans(directory)
    return True


def _seal(key: bytes, frame: bytes) -> bytes:
    return hashlib.blake2b(frame, key=key, digest_size=_SEAL).digest()


def _key(*, create: bool) -> bytes | None:
    """This user's sealing key (made once, 0600, by exclusive create), None with the caches off."""
    from dshctl.core.cache.disk import cache_root

    root = cache_root()
    if root is None:
        return None
    path = root / "restore.key"
    try:
        key = path.read_bytes()
        return key if len(key) == 32 else None
    except FileNotFoundError:
        if not create:
            return None
    except OSError:
        return None
    try:
        root.mkdir(parents=True, exist_ok=True)
        tmp = root / f"restore.key.{secrets.token_hex(6)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(secrets.token_bytes(32))
        try:
            os.link(tmp, path)      # first writer wins; a racing one reads the winner's key
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)
        key = path.read_bytes()
        return key if len(key) == 32 else None
    except OSError:
        return None


def _sweep_orphans(directory: Path) -> None:
    """Remove temp files a writer killed between write and rename left (a minute old: not a live one)."""
    try:
        for orphan in directory.glob(f"{FILE_NAME}.*.tmp"):
            if orphan.stat().st_mtime < time.time() - 60:
                orphan.unlink()
    except OSError:
        pass
