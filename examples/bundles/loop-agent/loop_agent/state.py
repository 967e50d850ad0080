"""The sidecar ``$DSH_HOME/profiles/<profile>/.dsh-loop-agent.json``: the global switch and a
continuation override. Missing or unreadable means on, no override; written temp + rename."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from dshctl.core.fsutil import atomic_write

FILE_NAME = ".dsh-loop-agent.json"


@dataclass(frozen=True)
class LoopState:
    disabled: bool = False
    continuation: str | None = None     # None or "" = the row's default

    @property
    def enabled(self) -> bool:
        return not self.disabled


def sidecar_path(home: Path, profile: str) -> Path:
    return Path(home) / "profiles" / profile / FILE_NAME


def read_state(path: Path) -> LoopState:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return LoopState()
    if not isinstance(raw, dict):
        return LoopState()
    continuation = raw.get("continuation")
    return LoopState(disabled=raw.get("disabled") is True,
                     continuation=continuation if isinstance(continuation, str) and continuation else None)


def _raw(path: Path) -> dict:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return raw if isinstance(raw, dict) else {}
    except (OSError, ValueError, UnicodeDecodeError):
        return {}


def write_field(path: Path, key: str, value) -> bool:
    """Set one field (``None`` removes it); False when the file already held that value (no write)."""
    raw = _raw(path)
    current = read_state(path)
    unchanged = (current.disabled == value) if key == "disabled" else (current.continuation == (value or None))
    if unchanged and path.exists():
        return False
    if value is None or value == "":
        raw.pop(key, None)
    else:
        raw[key] = value
    raw.setdefault("disabled", False)
    raw["updatedAt"] = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, (json.dumps(raw, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
    return True


def stamp(path: Path) -> tuple:
    """Cheap change detection for the phase-boundary re-read."""
    try:
        st = os.stat(path)
        return (st.st_mtime_ns, st.st_size, st.st_ino)
    except OSError:
        return ()
