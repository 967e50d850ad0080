"""Where the dsh home is, resolved as dsh does (dsh-config.md §1)."""
from __future__ import annotations

import os
from pathlib import Path


def expand_tilde(path: str) -> str:
    """A leading ``~``, ``~/`` or ``~\\`` becomes the OS home; ``~user/...`` is left as is."""
    if path == "~" or path.startswith(("~/", "~\\")):
        return str(Path.home()) + path[1:]
    return path


def resolve_home(explicit: str | os.PathLike | None = None) -> Path:
    """An explicit path, else ``$DSH_HOME`` when set and not blank, else ``~/.dsh``; made absolute."""
    if explicit is not None and str(explicit).strip():
        raw = str(explicit)
    elif os.environ.get("DSH_HOME", "").strip():
        raw = os.environ["DSH_HOME"]
    else:
        raw = "~/.dsh"
    return Path(os.path.abspath(expand_tilde(raw)))
