"""Where session logs live, named as dsh names them (``session-persistence-jsonl`` ``format.ts``).

``<home>/sessions/<project key>/<encoded id>/session.jsonl.zstd`` (or ``session.jsonl``), where the
project key is ``--<cwd with separators as '-'>--`` (``_no-cwd`` without a cwd) and the id is escaped
injectively: a safe character stays, anything else becomes ``~XXXX`` (its UTF-16 code unit in hex).
"""
from __future__ import annotations

import re
from pathlib import Path

ZSTD_SUFFIX = ".jsonl.zstd"
RAW_SUFFIX = ".jsonl"
COMPRESSIONS = ("zstd", "none")
NO_CWD_DIR = "_no-cwd"
_SAFE = re.compile(r"[A-Za-z0-9._-]")


def suffix_for(compression: str) -> str:
    return ZSTD_SUFFIX if compression == "zstd" else RAW_SUFFIX


def log_file_name(compression: str) -> str:
    return "session" + suffix_for(compression)


def _code_units(text: str):
    """The UTF-16 code units of ``text`` (JavaScript's view of a string), as ints."""
    data = text.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(data), 2):
        yield data[i] | (data[i + 1] << 8)


def _escape_unit(unit: int) -> str:
    ch = chr(unit) if unit < 0xD800 or unit > 0xDFFF else ""
    if ch and ch != "~" and _SAFE.fullmatch(ch):
        return ch
    return f"~{unit:04X}"


def encode_segment(raw: str) -> str:
    """One safe path segment for ``raw``, decodable back to it; never ``.`` or ``..``."""
    if not raw:
        raise ValueError("cannot encode an empty path segment")
    if raw == ".":
        return "~002E"
    if raw == "..":
        return "~002E~002E"
    return "".join(_escape_unit(unit) for unit in _code_units(raw))


def decode_segment(segment: str) -> str:
    """The inverse of :func:`encode_segment`."""
    units: list[int] = []
    i = 0
    while i < len(segment):
        if segment[i] == "~":
            units.append(int(segment[i + 1:i + 5], 16))
            i += 5
        else:
            units.append(ord(segment[i]))
            i += 1
    data = b"".join(u.to_bytes(2, "little") for u in units)
    return data.decode("utf-16-le", "surrogatepass")


def project_key(cwd: str) -> str:
    """The readable, lossy directory name dsh groups a project's sessions under."""
    if not cwd:
        raise ValueError("cannot encode an empty project path")
    out: list[str] = []
    separator_run = False
    for unit in _code_units(cwd):
        if unit in (0x2F, 0x5C, 0x3A):            # '/', '\\', ':'
            if not separator_run:
                out.append("-")
            separator_run = True
        else:
            out.append(_escape_unit(unit))
            separator_run = False
    slug = "".join(out).lstrip("-") or "root"
    return f"--{slug[:251]}--"


def sessions_root(home: Path) -> Path:
    """dsh's base bundle sets the JSONL backend's root to ``dshHomePath('sessions')``."""
    return Path(home) / "sessions"


def project_dir(root: Path, cwd: str | None) -> Path:
    return root / (NO_CWD_DIR if cwd is None else project_key(cwd))


def session_dir(root: Path, cwd: str | None, session_id: str) -> Path:
    return project_dir(root, cwd) / encode_segment(session_id)


def log_path(root: Path, cwd: str | None, session_id: str, compression: str) -> Path:
    return session_dir(root, cwd, session_id) / log_file_name(compression)
