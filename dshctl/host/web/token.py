"""The per-host token a state-changing request must carry (``X-Dshctl-Token``), so another local user,
who can reach loopback TCP like anyone on the machine, cannot drive the host.

It lives in ``http.token`` beside the control socket (mode 0600 in the 0700 state directory), is kept
across restarts and reloads (an open page keeps working) and is replaced when unreadable. The page gets
it from the URL ``dshctl host run`` logs (``http://127.0.0.1:8787/#token=…``); CLI clients read the file.
"""
from __future__ import annotations

import hmac
import os
import re
import secrets
from pathlib import Path

HEADER = "x-dshctl-token"
FILE = "http.token"
_SHAPE = re.compile(r"^[A-Za-z0-9_-]{32,128}$")


def new_token() -> str:
    return secrets.token_urlsafe(32)


def load_or_create(directory: Path) -> tuple[str, Path]:
    """The token stored in ``directory`` (created 0600 if missing, malformed or readable by others)."""
    path = Path(directory) / FILE
    try:
        st = os.stat(path)
        text = path.read_text(encoding="ascii").strip()
        if _SHAPE.match(text) and st.st_uid == os.getuid() and not st.st_mode & 0o077:
            return text, path
    except (OSError, UnicodeDecodeError):
        pass
    token = new_token()
    tmp = path.with_name(f".{FILE}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.write(token + "\n")
    os.replace(tmp, path)
    return token, path


def matches(expected: str, given: str | None) -> bool:
    return given is not None and hmac.compare_digest(expected.encode(), given.strip().encode())
