"""``@dshctl/workspace``: the ``workspace`` service, which sessions the user archived.

dsh keeps ``archivedSessionIds`` in its workspace state; dshctl keeps them in
``$DSH_HOME/profiles/<profile>/.dshctl/workspace.json`` (``{"archivedSessionIds": [...]}``, written
temp + rename under a lock), re-read whenever the file changes, so ``dshctl session archive`` works
with or without a running host. Archiving hides a session; it does not delete or stop anything by
itself — plugins that drive sessions (the loop-agent bundle) look here.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from dshctl.core.fsutil import atomic_write, file_lock

name = "@dshctl/workspace"
schema = {"type": "object", "default": {}}
FILE = Path(".dshctl") / "workspace.json"


def workspace_file(home: Path, profile: str) -> Path:
    return Path(home) / "profiles" / profile / FILE


def read_archived(path: Path) -> list[str]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return []
    ids = raw.get("archivedSessionIds") if isinstance(raw, dict) else None
    return [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []


def set_archived(path: Path, session_id: str, archived: bool) -> bool:
    """Archive (or restore) one session; False when it already was in that state."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(path.with_name(path.name + ".lock")):
        ids = read_archived(path)
        if (session_id in ids) == archived:
            return False
        ids = ids + [session_id] if archived else [i for i in ids if i != session_id]
        atomic_write(path, json.dumps({"archivedSessionIds": ids}, indent=2) + "\n")
    return True


class Workspace:
    def __init__(self, path: Path):
        self.path = path
        self._stamp: tuple = ()
        self._ids: frozenset[str] = frozenset()

    @property
    def archived_session_ids(self) -> frozenset[str]:
        try:
            st = os.stat(self.path)
            stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            stamp = ()
        if stamp != self._stamp:
            self._stamp, self._ids = stamp, frozenset(read_archived(self.path))
        return self._ids

    def archive(self, session_id: str) -> bool:
        return set_archived(self.path, session_id, True)

    def unarchive(self, session_id: str) -> bool:
        return set_archived(self.path, session_id, False)


def apply(ctx, config):
    host = ctx.get("host")
    home = Path(host.options.home) if host is not None else Path.home() / ".dsh"
    profile = host.options.profile if host is not None else "web"
    ctx.provide("workspace", Workspace(workspace_file(home, profile)))
