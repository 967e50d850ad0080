"""``SessionStore``: the sessions under a home, where dsh keeps them (``<home>/sessions``).

``create`` publishes a new log (header frame, durable); ``open`` restores one for writing — torn tail
repaired, crash-orphaned turn closed with dsh's synthetic closers, every event re-validated;
``read`` restores for looking only (nothing written, closers reported not appended); ``list`` reads
headers only. A root holds one encoding, as in dsh: a store configured for ``zstd`` refuses to
create next to ``.jsonl`` logs and vice versa, since dsh would then refuse the whole root.
"""
from __future__ import annotations

import os
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dshctl.agents.session import reader, writer
from dshctl.agents.session.api import SESSION_FORMAT_VERSION
from dshctl.agents.session.layout import (
    COMPRESSIONS, RAW_SUFFIX, ZSTD_SUFFIX, encode_segment, log_file_name, log_path, sessions_root,
)
from dshctl.agents.session.log import SessionLog, lock_session
from dshctl.agents.session.reader import CorruptLog
from dshctl.agents.session.repair import interrupted_turn_closers
from dshctl.agents.session.restore import refresh, restore, validate_stored  # noqa: F401 (validate_stored: API)
from dshctl.agents.session.trace import LogTrace
from dshctl.agents.session.validate import EventRejected


ID_PREFIX = "session-"


class SessionNotFound(LookupError):
    pass


class AmbiguousSessionId(LookupError):
    """A prefix names more than one session."""


def new_session_id() -> str:
    """A fresh id as dsh mints them (headless runner, host API): ``session-<uuid4>``."""
    return ID_PREFIX + str(uuid.uuid4())


def id_matches_prefix(session_id: str, wanted: str) -> bool:
    """``wanted`` starts the id, or starts its uuid after dsh's ``session-`` (so ``3f2a`` finds
    ``session-3f2a…`` as it found the bare uuids dshctl wrote before)."""
    return session_id.startswith(wanted) or (
        session_id.startswith(ID_PREFIX) and session_id[len(ID_PREFIX):].startswith(wanted))


@dataclass
class SessionInfo:
    """One listed session: header fields only (no event body is read), or why it could not be read."""
    id: str
    path: Path
    compression: str
    size: int
    modified: float
    header: dict = field(default_factory=dict)
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "path": str(self.path), "compression": self.compression,
                               "size": self.size, "modified": int(self.modified * 1000)}
        for key in ("createdAt", "cwd", "agentPreset", "parentSession", "origin", "delegationDepth"):
            if key in self.header:
                out[key] = self.header[key]
        if self.error is not None:
            out["error"] = self.error
        return out


@dataclass
class SessionRead:
    """A session restored for looking: events as stored, and what a resume would still append."""
    path: Path
    header: dict
    events: list[dict]
    closers: list[dict]
    torn_bytes: int = 0


def _compression_of(path: Path) -> str:
    return "zstd" if path.name.endswith(ZSTD_SUFFIX) else "none"


class SessionStore:
    def __init__(self, home: str | os.PathLike, *, compression: str = "zstd", pack_chunks: bool = True):
        if compression not in COMPRESSIONS:
            raise ValueError(f"compression must be one of {', '.join(COMPRESSIONS)}")
        self.root = sessions_root(Path(home))
        self.compression = compression
        self.pack_chunks = pack_chunks

    # --- discovery ---------------------------------------------------------------------------

    def _session_dirs(self):
        try:
            projects = sorted(p for p in self.root.iterdir() if p.is_dir())
        except FileNotFoundError:
            return
        for project in projects:
            for entry in sorted(project.iterdir()):
                if entry.is_dir():
                    yield entry

    def _artifacts(self):
        for directory in self._session_dirs():
            for name in (log_file_name("zstd"), log_file_name("none")):
                path = directory / name
                if path.is_file():
                    yield path

    def find(self, session_id: str) -> Path:
        """The one log file of ``session_id`` in any project directory."""
        if not session_id:
            raise SessionNotFound("a session id must not be empty")
        segment = encode_segment(session_id)
        try:
            projects = [p for p in self.root.iterdir() if p.is_dir()]
        except FileNotFoundError:
            projects = []
        matches = [p / segment / log_file_name(c) for p in projects for c in COMPRESSIONS
                   if (p / segment / log_file_name(c)).is_file()]
        if not matches:
            raise SessionNotFound(f"no session {session_id!r} under {self.root}")
        if len(matches) > 1:
            raise CorruptLog(f"session id {session_id!r} appears more than once: "
                             + ", ".join(str(m) for m in matches))
        return matches[0]

    def resolve(self, wanted: str, also: tuple[str, ...] = ()) -> str:
        """The id ``wanted`` names: itself when such a session exists, else the one session (stored,
        or among ``also``, e.g. live ones not yet listed) whose id it starts (see
        :func:`id_matches_prefix`)."""
        if wanted in also:
            return wanted
        try:
            self.find(wanted)
            return wanted
        except SessionNotFound:
            if not wanted:
                raise
        known = {i.id for i in self.list() if i.id} | set(also)
        matches = sorted(i for i in known if id_matches_prefix(i, wanted))
        if len(matches) == 1:
            return matches[0]
        if matches:
            shown = ", ".join(matches[:5]) + (", …" if len(matches) > 5 else "")
            raise AmbiguousSessionId(f"session id prefix {wanted!r} is ambiguous ({shown})")
        raise SessionNotFound(f"no session {wanted!r} under {self.root}")

    def list(self) -> list[SessionInfo]:
        """Every session's header, newest first; a log that cannot be read is listed with its error."""
        out = []
        for path in self._artifacts():
            stat = path.stat()
            info = SessionInfo(id="", path=path, compression=_compression_of(path), size=stat.st_size,
                               modified=stat.st_mtime)
            try:
                info.header = reader.read_header_only(path)
                info.id = info.header["id"]
            except CorruptLog as exc:
                info.error = str(exc)
            except OSError as exc:
                info.error = exc.strerror or str(exc)
            out.append(info)
        out.sort(key=lambda i: (i.header.get("createdAt", 0), i.id), reverse=True)
        return out

    # --- create / open / read ----------------------------------------------------------------

    def _refuse_mixed_root(self) -> None:
        other = RAW_SUFFIX if self.compression == "zstd" else ZSTD_SUFFIX
        for path in self._artifacts():
            if path.name == "session" + other:
                raise CorruptLog(f"{path} uses {other}, but this store writes "
                                 f"{'.jsonl.zstd' if self.compression == 'zstd' else '.jsonl'}; "
                                 "dsh keeps one encoding per root")

    def create(self, *, cwd: str | None = None, agent_preset: str | None = None, session_id: str | None = None,
               parent_session: str | None = None, seed_length: int | None = None, origin: str | None = None,
               delegation_depth: int = 0, created_at: int | None = None) -> SessionLog:
        if cwd is not None and not os.path.isabs(cwd):
            raise ValueError(f"session cwd must be an absolute path, got {cwd!r}")
        self._refuse_mixed_root()
        header = {"version": SESSION_FORMAT_VERSION, "id": session_id or new_session_id(),
                  "createdAt": int(time.time() * 1000) if created_at is None else created_at,
                  "cwd": cwd, "parentSession": parent_session, "seedLength": seed_length,
                  "origin": origin, "delegationDepth": delegation_depth, "agentPreset": agent_preset}
        header = {k: v for k, v in header.items() if v is not None}
        path = log_path(self.root, cwd, header["id"], self.compression)
        try:
            writer.publish_new(path, writer.encode_header(header, self.compression))
        except FileExistsError:
            raise EventRejected(f"session {header['id']!r} already exists at {path}") from None
        lock = lock_session(path.parent)
        return SessionLog(path, header, [], compression=self.compression, pack_chunks=self.pack_chunks,
                          trace=LogTrace(), lock_fd=lock)

    def read(self, session_id: str) -> SessionRead:
        path = self.find(session_id)
        scan = restore(path, strict=False, save=False,
                       check_header=lambda header: self._check_identity(path, header, session_id)).scan
        torn = 0 if scan.truncate_to is None else scan.size - scan.truncate_to
        return SessionRead(path, scan.header, scan.events, interrupted_turn_closers(scan.events), torn)

    def open(self, session_id: str) -> SessionLog:
        """Restore for writing: repair durably (torn tail, open turn), then continue appending."""
        path = self.find(session_id)
        lock = lock_session(path.parent)
        try:
            restored = restore(path, strict=True, save=True,
                               check_header=lambda header: self._check_identity(path, header, session_id))
            scan, trace = restored.scan, restored.trace
            compression = _compression_of(path)
            events = scan.events
            closers = interrupted_turn_closers(events)
            for closer in closers:
                trace.accept(trace.check(closer))
            if scan.truncate_to is not None:
                writer.truncate_durably(path, scan.truncate_to)
            repaired = scan.recovered + closers
            if repaired:
                writer.append_durably(path, writer.encode_batch(repaired, compression, self.pack_chunks))
            log = SessionLog(path, scan.header, events + closers, compression=compression,
                             pack_chunks=self.pack_chunks, trace=trace, lock_fd=lock)
            if not log.events or log.events[-1]["type"] != "session/end-seed":
                log.append("session/end-seed", {})    # dsh's seed boundary; durable with the next commit
            return log
        except BaseException:
            os.close(lock)
            raise

    def checkpoint(self, session_id: str) -> bool:
        """Refresh the session's restore checkpoint (after it was closed: the next restore then decodes
        nothing); best effort, False when it was not written."""
        try:
            return refresh(self.find(session_id))
        except (SessionNotFound, CorruptLog, OSError):
            return False

    def _check_identity(self, path: Path, header: dict, session_id: str) -> None:
        if header["id"] != session_id:
            raise CorruptLog(f"{path}: header id {header['id']!r} does not match session {session_id!r}")
        expected = log_path(self.root, header.get("cwd"), header["id"], _compression_of(path))
        if expected != path:
            raise CorruptLog(f"{path}: header id and cwd name another location ({expected})")

    def raw_text(self, session_id: str) -> str:
        """The logical ``session.jsonl`` text of a session, as written (packed rows kept)."""
        return reader.raw_text(self.find(session_id))
