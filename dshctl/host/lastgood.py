"""The last known good composition of a profile (Caddy's autosave, Erlang's permanent release).

Every successful apply records the composed rows, atomically, in ``<profile>/.dshctl/last-good.json``:
``{"version": 1, "saved_at": <ISO time>, "profile", "digest", "rows": [...]}``. ``!!js`` values are
kept unevaluated as ``{"__jsExpr": "<text>"}``, so booting from the record evaluates them afresh;
relative plugin names are stored absolute (see :func:`anchored`). ``"origins"`` holds, for every row
in ``iter_rows`` order, the ``[file, line, column]`` that declared it: a boot from the record gives
each row that position back, so what resolves beside the declaring file (``./plugin.py``, an llm
row's ``script:``, fs-tools' ``root:``) resolves as it did in the layers, not beside the record.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path

from dshctl.core import fsutil
from dshctl.core.yaml.dialect import load_json, read_text
from dshctl.core.yaml.jsvalue import json_dumps
from dshctl.core.yaml.nodes import JsExpr, to_plain
from dshctl.errors import DshctlError, Loc, ParseError

VERSION = 1


@dataclass
class LastGood:
    rows: list
    saved_at: str
    digest: str
    path: Path


def _plain_js(value):
    if isinstance(value, JsExpr):
        return value.to_json()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def rows_digest(rows: list) -> str:
    """A stable fingerprint of composed rows: equal rows give equal digests (positions ignored)."""
    # json encodes YMap/YList (dict/list subclasses) in C directly; only !!js needs the hook. Same
    # text as json.dumps(to_plain(rows)) without first copying every row (a quarter of a reload).
    return _digest_text(row_text(rows))


def row_text(value) -> str:
    """The digest's JSON text of one value (a row, or a whole row list)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=_plain_js)


def texts_digest(texts: list[str]) -> str:
    """``rows_digest(rows)`` from ``[row_text(r) for r in rows]``: a list's compact JSON is its items'
    texts joined by commas, so a host re-encodes only the rows a reload changed."""
    return _digest_text("[" + ",".join(texts) + "]")


def _digest_text(text: str) -> str:
    # surrogatepass: a lone surrogate is a valid JavaScript string, so it must hash, not raise
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def anchored(rows: list) -> list:
    """A copy of ``rows`` whose relative plugin names (``./x.py``) are absolute: they resolve beside
    the file that declared the row, and in the record that file is gone."""
    from dshctl.core.compose.composition import iter_rows
    from dshctl.core.yaml.nodes import clone
    copy = clone(rows)
    for row, _ in iter_rows(copy):
        absolute = _anchored_name(row)
        if absolute is not None:
            row["name"] = absolute
    return copy


def origins(rows: list) -> list:
    """``[file, line, column]`` (or None) of every row, in ``iter_rows`` order."""
    from dshctl.core.compose.composition import iter_rows
    out = []
    for row, _ in iter_rows(rows):
        loc = getattr(row, "loc", None)
        real = loc is not None and loc.file and not loc.file.startswith("<")
        out.append([os.path.abspath(loc.file), loc.line, loc.column] if real else None)
    return out


def _restore_origins(rows: list, recorded: object) -> None:
    """Give the rows read from the record the positions of the files that declared them."""
    from dshctl.core.compose.composition import iter_rows
    if not isinstance(recorded, list):
        return  # a record from before origins were kept: rows resolve beside the record
    for (row, _), origin in zip(iter_rows(rows), recorded):
        if hasattr(row, "loc") and isinstance(origin, list) and len(origin) == 3 and \
                isinstance(origin[0], str) and all(isinstance(n, int) for n in origin[1:]):
            row.loc = Loc(origin[0], origin[1], origin[2])


def _anchored_name(row) -> str | None:
    name, loc = row.get("name"), getattr(row, "loc", None)
    if isinstance(name, str) and name.startswith(("./", "../")) and loc is not None and loc.file:
        return os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(loc.file)), name))
    return None


def record(path: Path, profile: str, rows: list, digest: str | None = None,
           texts: "RecordTexts | None" = None) -> str:
    """Write the record for ``rows`` (atomic: readers see the old record or the new one). The digest
    is that of ``rows`` as composed, so it compares with the running and on-disk trees. ``texts``
    keeps each row's part of the file between records, so a reload re-encodes only what changed."""
    digest = digest or rows_digest(rows)
    text = record_text(profile, rows, digest, time.strftime("%Y-%m-%dT%H:%M:%S%z"), texts)
    from .state_dir import ensure
    ensure(path.parent)
    fsutil.atomic_write(path, text, mode=0o600)
    return digest


def record_text(profile: str, rows: list, digest: str, saved_at: str, texts: "RecordTexts | None" = None) -> str:
    head = {"version": VERSION, "saved_at": saved_at, "profile": profile, "digest": digest,
            "origins": origins(rows)}    # before "rows", which stays the last key (RecordTexts splices it)
    if texts is None or not rows:
        return json_dumps({**head, "rows": _strict_json(to_plain(anchored(rows)))}, indent=1) + "\n"
    # "rows" is the last key: its items sit two spaces deep, comma-separated
    stem = json_dumps({**head, "rows": [0]}, indent=1).rpartition("\n  0\n ]\n}")[0]
    return stem + "\n" + ",\n".join(texts.parts(rows)) + "\n ]\n}\n"


class RecordTexts:
    """Each top-level row's text in the last-good file, kept from the previous record (issue 30).

    Writing the record of 1,000 rows (copy, absolute names, plain JSON, indented text) was ~12 ms of
    every reload, though a reload changes one or two rows. A row's part of the file is a function of
    its value (key order and types included, which its compact JSON text keeps) and of the absolute
    plugin names its relative ones become; that pair is the key, so a hit is exact whatever wrote
    into the row. Only the entries the last record used are kept."""

    def __init__(self) -> None:
        self._parts: dict = {}
        self._names: dict = {}   # (declaring file, relative name) -> absolute name
        self._encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=_plain_js).encode

    def parts(self, rows: list) -> list[str]:
        old, new, out = self._parts, {}, []
        for row in rows:
            key = (self._encode(row), self._anchors(row) if isinstance(row, dict) else ())
            part = old.get(key) or new.get(key)
            if part is None:
                text = json_dumps(_strict_json(to_plain(anchored([row])[0])), indent=1)
                part = "  " + text.replace("\n", "\n  ")
            new[key] = part
            out.append(part)
        self._parts = new
        return out

    def _anchors(self, row: dict) -> tuple:
        """The absolute names :func:`anchored` gives this row and the rows of its groups, in order."""
        from dshctl.core.compose.composition import iter_rows
        out = []
        for r, _ in iter_rows([row]):
            name, loc = r.get("name"), getattr(r, "loc", None)
            if not (isinstance(name, str) and name.startswith(("./", "../")) and loc is not None and loc.file):
                out.append(None)
                continue
            if not os.path.isabs(loc.file):   # depends on the working directory: not memoized
                out.append(_anchored_name(r))
                continue
            absolute = self._names.get((loc.file, name))
            if absolute is None:
                absolute = self._names[(loc.file, name)] = _anchored_name(r)
            out.append(absolute)
        return tuple(out)


def _strict_json(value):
    """``value`` with infinities (``.inf``, a huge JSON integer) as ``!!js 1e999``, which strict JSON
    can hold and a boot from the record evaluates back to the number; NaN is ``null``, as
    ``JSON.stringify`` writes it."""
    if isinstance(value, float) and not math.isfinite(value):
        return None if value != value else {"__jsExpr": "1e999" if value > 0 else "-1e999"}
    if isinstance(value, dict):
        return {k: _strict_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_strict_json(v) for v in value]
    return value


def load(path: Path) -> LastGood | None:
    """The record at ``path``, or None when there is none. A damaged record is an error, not None."""
    try:
        text = read_text(path)
    except ParseError as exc:
        if exc.message == "file not found":
            return None
        raise DshctlError(f"cannot read the last-good record: {exc.message}", loc=Loc(str(path)),
                          hint="delete it; the next successful apply writes a new one") from None
    try:
        doc = load_json(text, path).value
    except ParseError as exc:
        raise DshctlError(f"the last-good record is not valid JSON: {exc.message}", loc=exc.loc,
                          hint="delete it; the next successful apply writes a new one") from None
    if not isinstance(doc, dict) or doc.get("version") != VERSION or not isinstance(doc.get("rows"), list):
        raise DshctlError("the last-good record has an unknown shape", loc=Loc(str(path), 1, 1),
                          hint="it was written by another dshctl version; delete it")
    _restore_origins(doc["rows"], doc.get("origins"))
    return LastGood(doc["rows"], str(doc.get("saved_at", "")), str(doc.get("digest", "")), path)
