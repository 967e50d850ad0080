"""Preset health: dsh's shape check of ``agent.cordis.yml``, with its exact reason texts.

Health is a shape check only (dsh-config.md §7): the file must load as a top-level list whose rows are
mappings with a non-empty ``name``, and every ``group: true`` row must hold a list of rows, checked
recursively. An unresolvable plugin is not a health problem (lint reports missing relative files).
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from dshctl.core.yaml.limits import MAX_FILE_BYTES
from dshctl.errors import Loc, ParseError

from .model import COMPOSITION_FILE, Health

if TYPE_CHECKING:  # the parser is imported on the first parse: a cached scan never needs it
    from dshctl.core.yaml.dialect import Document

MISSING = (f"the composition file {COMPOSITION_FILE} is missing — the directory still occupies the id; "
           "delete it or restore the file")
UNREADABLE = f"the composition file {COMPOSITION_FILE} cannot be read"
INVALID_YAML = "the composition is not valid YAML: {}"
NOT_A_LIST = "the composition must be a top-level list of plugin rows"
NOT_A_ROW = '{}row {} is not a plugin row (expected a map with a "name")'
NO_NAME = '{}row {} names no plugin (a "name" string is required)'
GROUP_NOT_LIST = "{}group row {} must hold a list of plugin rows"
BROKEN_HINT = "dsh lists this preset as broken and refuses to mount it"  # lint's hint for a reason

# Over this size the file is not read at all (a preset composition is a few kilobytes).
MAX_COMPOSITION_BYTES = MAX_FILE_BYTES


def decode(data: bytes) -> str:
    """Bytes as Node's ``readFile(..., 'utf8')`` gives them: invalid sequences become U+FFFD."""
    return data.decode("utf-8", errors="replace")


def parse_composition(data: bytes, path: Path) -> tuple[Document | None, Health]:
    """Load the composition and check its shape. Returns the document (None when unparsable)."""
    try:
        from dshctl.core.yaml.dialect import load_yaml

        doc = load_yaml(decode(data), path)
    except ParseError as err:
        return None, health_of_parse_error(err, path)
    return doc, check_rows_shape(doc.value, path)


def composition_health_of(data: bytes, file: str) -> Health:
    """``parse_composition``'s health, for a scan that keeps no tree (``preset list``). A text the
    fast reader takes is read without positions (``blockshape``); only a finding, which needs its
    line:col, or a text outside that reader's subset goes the full way."""
    from dshctl.core.yaml.blockshape import scan_values

    text = decode(data)
    if text.startswith("\ufeff"):
        text = text[1:]  # as load_yaml: a NUL byte is left to it (its error)
    if "\x00" not in text:
        value = scan_values(text, file)
        if isinstance(value, list) and _first_bad_row(value, "") is None:  # (None: outside the subset)
            return Health()
    return parse_composition(data, Path(file))[1]


def health_of_parse_error(err: ParseError, path: Path) -> Health:
    """dsh's invalid-YAML reason: js-yaml's first message line, ending in its ``(line:col)``."""
    loc = err.loc or Loc(str(path))
    if err.js_message:
        return Health(INVALID_YAML.format(err.js_message), loc)
    where = f" ({loc.line}:{loc.column})" if loc.line else ""
    return Health(INVALID_YAML.format(err.message + where), loc)


def check_rows_shape(value: Any, path: Path) -> Health:
    if not isinstance(value, list):
        return Health(NOT_A_LIST, getattr(value, "loc", None) or Loc(str(path), 1, 1))
    found = _first_bad_row(value, "")
    if found is None:
        return Health()
    reason, loc = found
    return Health(reason, loc or Loc(str(path), 1, 1))


def _first_bad_row(rows: list, prefix: str) -> tuple[str, Loc | None] | None:
    for index, row in enumerate(rows):  # every row of every preset of a scan: positions only on a finding
        if not isinstance(row, dict):
            return NOT_A_ROW.format(prefix, index + 1), _row_loc(rows, index)
        name = row.get("name")
        if not isinstance(name, str) or not name:
            return NO_NAME.format(prefix, index + 1), _row_loc(rows, index)
        if row.get("group") is True:
            children = row.get("config")
            if not isinstance(children, list):
                child_loc = row.loc_of("config") if hasattr(row, "loc_of") else _row_loc(rows, index)
                return GROUP_NOT_LIST.format(prefix, index + 1), child_loc
            nested = _first_bad_row(children, f"{prefix}row {index + 1} ")
            if nested is not None:
                return nested
    return None


def _row_loc(rows: list, index: int) -> Loc | None:
    return rows.loc_of(index) if hasattr(rows, "loc_of") else None


def health_of_read_error(exc: OSError | None, path: Path, *, missing: bool = False,
                         size: int | None = None) -> Health:
    """The health of a composition that could not be read (or was too large to read)."""
    if missing:
        return Health(MISSING, Loc(str(path)))
    if size is not None:
        return Health(UNREADABLE, Loc(str(path)),
                      f"the file is {size:,} bytes; dshctl reads at most {MAX_COMPOSITION_BYTES:,}")
    detail = exc.strerror if exc is not None and exc.strerror else (str(exc) if exc else None)
    return Health(UNREADABLE, Loc(str(path)), detail)
