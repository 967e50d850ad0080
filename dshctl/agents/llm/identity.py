"""Who is asking, on every provider request: the ``User-Agent`` and dsh's ``x-deepseek-harness-*`` headers.

dsh sends ``User-Agent: <product>/<version> (+<url>)``; dshctl sends the same shape naming itself (a
request dshctl makes is not dsh's). With ``harnessHeaders`` (``@dshctl/llm-deepseek``'s default, as dsh's
DeepSeek adapter) it adds ``x-deepseek-harness-user-id`` — the anonymous id dsh keeps in
``$DSH_HOME/.anonymous-user-id`` (default ``~/.dsh``), read or created there the way dsh does, so both
tools on one machine are one user — ``x-deepseek-harness-session-id`` (the session's id, when the request
belongs to one) and ``x-deepseek-harness-compact: 1`` for a compaction request. The key is never in them.
"""
from __future__ import annotations

import os
import re
import uuid
from pathlib import Path

from dshctl import __version__

USER_AGENT = f"dshctl/{__version__} (+https://pypi.org/project/dshctl/)"
ID_FILE = ".anonymous-user-id"
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)
_MEMO: dict[str, str] = {}


def dsh_home() -> Path:
    return Path(os.path.expanduser(os.environ.get("DSH_HOME") or "~/.dsh"))


def _read(path: Path) -> str | None:
    try:
        value = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return value if _UUID.match(value) else None


def anonymous_user_id() -> str:
    """The persisted id, created once with O_EXCL (a racing process's id wins); one that is not an id is
    replaced; an unwritable home gives a per-process id."""
    path = dsh_home() / ID_FILE
    key = str(path)
    if key in _MEMO:
        return _MEMO[key]
    found = _read(path)
    if found is None:
        created = str(uuid.uuid4())
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(created + "\n")
            found = created
        except OSError:
            found = _read(path)
            if found is None:     # unreadable or not an id: replace it, as dsh does (best effort)
                found = created
                from dshctl.core.fsutil import atomic_write
                try:
                    atomic_write(path, created + "\n", mode=0o600)   # never a torn id for the next reader
                except OSError:
                    pass
    _MEMO[key] = found
    return found


def harness_headers(session_id: str | None, compaction: bool) -> dict[str, str]:
    headers = {"x-deepseek-harness-user-id": anonymous_user_id()}
    if session_id is not None:
        headers["x-deepseek-harness-session-id"] = str(session_id)
    if compaction:
        headers["x-deepseek-harness-compact"] = "1"
    return headers
