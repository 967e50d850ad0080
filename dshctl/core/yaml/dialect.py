"""Read the entry-list YAML dialect exactly as dsh does, and JSON into the same node model.

dsh parses ``cordis.yml``, ``agent.cordis.yml``, patch files and its dump with js-yaml 4's
``JSON_SCHEMA`` plus one tag, ``!!js``. That means YAML 1.2 JSON-schema scalars (``yes``/``on`` and dates
stay strings), one document per file, no merge keys, duplicate keys rejected. We build values ourselves
(``blockscan`` for the block-style subset most files use, else ``eventtree`` from the parser's event
stream), so every typing rule is ours (not ruamel's YAML 1.1 resolver) and every node keeps its file,
line and column (see docs/dialect.md for the limits and decisions). The YAML parser and the js-yaml
port are imported only when a text needs them.
"""
from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

from dshctl.core.yaml import blockscan
from dshctl.core.yaml.verdict import suspect_text
from dshctl.errors import Loc, ParseError
from dshctl.records import field, record

# Limits (docs/dialect.md). js-yaml shares alias targets by reference; we do too, but refuse inputs
# whose aliases expand (as a consumer walking the tree would see them) to an absurd size.
from .limits import MAX_DEPTH, MAX_EXPANDED_NODES, MAX_FILE_BYTES  # noqa: E402,F401 - re-exported

@record
class Note:
    """A non-fatal observation made while loading (e.g. a stripped BOM)."""

    rule: str
    message: str
    loc: Loc
    severity: str = "warning"


@record
class Document:
    """One loaded file. ``empty`` is true when the stream held no document at all."""

    path: str
    value: Any
    empty: bool = False
    notes: list[Note] = field(default_factory=list)
    # The fast reader saw something it may read differently from js-yaml (an empty implicit key,
    # `: a`), so js-yaml's verdict is asked before the document is used.
    suspect: bool = False

    @property
    def loc(self) -> Loc:
        v = self.value
        return getattr(v, "loc", None) or Loc(self.path, 1, 1)


# ---------------------------------------------------------------------------------------------
# YAML


def load_yaml(text: str, path: str | Path, *, js: bool = True) -> Document:
    """Parse ``text`` (the content of ``path``) in the entry-list dialect.

    ``js=False`` parses without the ``!!js`` tag. Raises ParseError with the file, line and column of
    the first problem. When the fast reader refuses a text, js-yaml's verdict (``jsyaml``, a port of
    dsh's own parser) decides: its message and position are the ones reported, and a text js-yaml
    does load after all is loaded from the port (without node positions).
    """
    path = str(path)
    try:
        return _load_fast(text, path, js)
    except LimitError:
        raise
    except ParseError as err:
        from dshctl.core.yaml import jsyaml
        from dshctl.core.yaml.verdict import schema_for, yaml_error

        found = jsyaml.first_error(text, schema_for(js))
        if found is None:
            return _from_port(text, path, js)
        raise yaml_error(found, text, path, fallback=err) from None


def _from_port(text: str, path: str, js: bool) -> Document:
    from dshctl.core.yaml import jsyaml
    from dshctl.core.yaml.verdict import schema_for, to_nodes

    value = jsyaml.load(text, schema_for(js))
    return Document(path=path, value=to_nodes(value, Loc(path)), empty=value is None and not text.strip())


def _load_fast(text: str, path: str, js: bool) -> Document:
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\x00" in text:
        raise ParseError("a NUL byte is not allowed in YAML", loc=Loc(path))
    value = blockscan.scan(text, path, js)
    if value is not None:
        # The fast reader takes no text suspect_text flags for a real reason (tabs, CRs, directives,
        # an indented first line, `---x`, a property ending its line); on its texts the test only
        # fires on content (`# done!`, a `!` in a prompt) and costs a js-yaml read for nothing.
        return Document(path=path, value=value)
    doc = _from_events(text, path, js)
    if doc.suspect or suspect_text(text):
        return _checked(doc, text, path, js)
    return doc


def _from_events(text: str, path: str, js: bool) -> Document:
    from dshctl.core.yaml.eventtree import read_events

    try:
        return read_events(text, path, js, [])
    except AssertionError:  # ruamel asserts on some directives (`%YAML 1.3`): js-yaml decides
        raise ParseError("the YAML parser refused a directive", loc=Loc(path)) from None


def _checked(doc: Document, text: str, path: str, js: bool) -> Document:
    """``doc`` if js-yaml reads ``text`` the same; js-yaml's value (no positions) if it reads it
    differently; a ParseError (js-yaml's, via load_yaml) if js-yaml refuses it."""
    from dshctl.core.yaml import jsyaml
    from dshctl.core.yaml.jsvalue import to_json
    from dshctl.core.yaml.nodes import to_plain
    from dshctl.core.yaml.verdict import schema_for, to_nodes

    try:
        value = jsyaml.load(text, schema_for(js))
    except (jsyaml.JsYamlError, RecursionError):
        raise ParseError("js-yaml refuses this text", loc=Loc(path)) from None
    if to_json(to_plain(doc.value)) == to_json(value):
        return doc
    return Document(path=path, value=to_nodes(value, Loc(path)), empty=doc.empty and value is None)


class LimitError(ParseError):
    """One of dshctl's own limits (alias expansion), not a YAML error: js-yaml is not asked."""


# ---------------------------------------------------------------------------------------------
# JSON


def load_json(text: str, path: str | Path) -> Document:
    """Strict JSON into the node model. ``{"__jsExpr": "..."}`` objects become JsExpr nodes.

    dsh reads manifests with ``JSON.parse``, which rejects a BOM and keeps the last of duplicate keys;
    we load anyway and record both as notes so lint can report them.
    """
    from dshctl.core.yaml.jsonparse import parse_json

    path = str(path)
    notes: list[Note] = []
    if text.startswith("\ufeff"):
        text = text[1:]
        notes.append(Note("json-bom", "the file starts with a UTF-8 BOM, which dsh's JSON.parse "
                          "rejects", Loc(path, 1, 1), severity="error"))
    value = parse_json(text, path, notes)
    return Document(path=path, value=value, empty=False, notes=notes)


# ---------------------------------------------------------------------------------------------
# files


def read_text(path: str | Path) -> str:
    """Read a file as UTF-8, with errors that name the file."""
    p = Path(path)
    where = Loc(str(path))
    try:
        info = p.stat()
        if stat.S_ISDIR(info.st_mode):
            raise ParseError("is a directory, not a file", loc=where, hint="pass the file inside it")
        if not stat.S_ISREG(info.st_mode):  # a FIFO or device would block or never end
            raise ParseError("is not a regular file", loc=where, hint="pass a regular file")
        if info.st_size > MAX_FILE_BYTES:
            raise ParseError(f"file is {info.st_size:,} bytes; the limit is {MAX_FILE_BYTES:,}",
                             loc=where, hint="split the file; no dsh configuration is near this size")
        data = p.read_bytes()
    except FileNotFoundError:
        raise ParseError("file not found", loc=where,
                         hint="check the path (or the target of a symbolic link)") from None
    except OSError as exc:
        raise ParseError(f"cannot read: {exc.strerror or exc}", loc=where,
                         hint="check the file's permissions") from None
    return decode_text(data, path)


def decode_text(data: bytes, path: str | Path) -> str:
    """The UTF-8 text of a file's bytes, or a ParseError at the first bad byte's line:col."""
    if len(data) > MAX_FILE_BYTES:
        raise ParseError(f"file is {len(data):,} bytes; the limit is {MAX_FILE_BYTES:,}", loc=Loc(str(path)),
                         hint="split the file; no dsh configuration is near this size")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ParseError("not valid UTF-8", loc=Loc(str(path), line, col),
                         hint="save the file as UTF-8") from None


def load_file(path: str | Path, *, js: bool = True) -> Document:
    """Load a YAML or JSON file by its extension."""
    text = read_text(path)
    if str(path).endswith(".json"):
        return load_json(text, path)
    return load_yaml(text, path, js=js)
