"""The environment a confined process gets: an allow-list, never the host's environment minus a few
names. The host holds the model's API key, registry tokens and the like in its environment; none of
them reaches a confined process unless the caller names it in ``pass_env`` (the user's explicit
choice)."""
from __future__ import annotations

import os
from typing import Iterable

# Harmless facts a command needs to behave normally (locale, terminal type, time zone).
KEPT = ("LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "LC_COLLATE", "LC_NUMERIC", "LC_TIME", "TERM",
        "COLORTERM", "NO_COLOR", "TZ")
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def confined_env(temp_dir: str, *, base: dict | None = None, pass_env: Iterable[str] = (),
                 extra: dict | None = None, hidden: Iterable[str] = ()) -> dict:
    """``PATH`` and the ``KEPT`` names from ``base`` (the host's environment by default), ``HOME`` and
    ``TMPDIR`` pointing at the private temp directory, then the ``pass_env`` names the user passed on
    explicitly, then ``extra`` (values the caller sets itself). ``PATH`` loses the entries inside ``hidden``."""
    source = os.environ if base is None else base
    env = {name: source[name] for name in KEPT if name in source}
    shut = [h.rstrip("/") for h in hidden]
    # PATH entries inside hidden directories would only answer EACCES (and name the user's tools).
    path = [p for p in (source.get("PATH") or DEFAULT_PATH).split(":")
            if p and not any(p == h or p.startswith(h + "/") for h in shut)]
    env["PATH"] = ":".join(path) or DEFAULT_PATH
    env.setdefault("LANG", "C.UTF-8")
    env.update(HOME=temp_dir, TMPDIR=temp_dir)
    for name in pass_env:
        if name in source:
            env[name] = source[name]
    env.update(extra or {})
    return env
