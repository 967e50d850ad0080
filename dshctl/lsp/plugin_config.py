"""Hover and completion from a row's plugin (plugin_schemas.py): the plugin on its ``name:``, the
property under the cursor in its ``config:``, the keys not written yet, the values a key allows.

The row's plugin is its own ``name:``; a patch entry that names none (``- id: http`` / ``config: …``)
patches a row of a layer below, whose name the profile's composition knows.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from dshctl.core.compose.profile import profile_dir as profile_dir_of
from dshctl.lsp import profiles
from dshctl.lsp.cursor import Cursor, config_path, cursor_at, line_indent, mapping_keys, row_value
from dshctl.lsp.flow_config import flow_key_at
from dshctl.lsp.plugin_schemas import PluginDoc, plugin_doc
from dshctl.lsp.schema_docs import allowed_values, as_json, at_path, describe, properties, type_words

VALUE, PROPERTY, ENUM_MEMBER = 12, 10, 20  # LSP CompletionItemKind


def row_plugin(path: Path, text: str, lines: list[str], row_line: int, preferred: str | None) -> PluginDoc | None:
    name = row_value(lines, row_line, "name")
    declared_in = Path(path).resolve().parent
    found = profiles.profile_of(path, preferred)
    home, profile_dir = (found[0], profile_dir_of(*found)) if found else (None, None)
    if name is None:
        row_id = row_value(lines, row_line, "id")
        pv = profiles.view(path, text, preferred) if row_id else None
        if pv is None:
            return None
        name, declared_in = _composed_name(pv, row_id, declared_in)
        if name is None:
            return None
    return plugin_doc(name, declared_in, profile_dir, home)


def _composed_name(pv, row_id: str, fallback: Path) -> tuple[str | None, Path]:
    from dshctl.core.compose.composition import iter_rows

    name = next((row.get("name") for row, _ in iter_rows(pv.comp.rows) if row.get("id") == row_id), None)
    declared = fallback
    for touch in pv.comp.provenance.touches:
        if touch.kind == "insert" and touch.row_id == row_id and touch.loc and touch.loc.file:
            declared = Path(touch.loc.file).resolve().parent  # relative names resolve beside it
    return (name if isinstance(name, str) else None), declared


def summary(doc: PluginDoc) -> str:
    parts = [f"**`{doc.name}`**" + (f" — {doc.description}" if doc.description else "")]
    if doc.schema is not None:
        keys = list(properties(doc.schema, doc.schema))
        parts.append("config: " + (", ".join(f"`{k}`" for k in keys) if keys else "no keys declared"))
    elif doc.note:
        parts.append(doc.note)
    parts.append(f"from {doc.source}")
    return "\n\n".join(parts)


def hover_parts(path: Path, text: str, lines: list[str], cur: Cursor, preferred: str | None) -> list[str] | None:
    """Markdown about the plugin at the cursor; None when the cursor is not in a row's plugin business
    (the caller says what it knows), ``[]`` when it is but nothing is known."""
    spot = config_path(lines, cur.line, cur.column)
    if spot is not None:
        if cur.key is None or not cur.on_key:
            return []
        return _about_config_key(path, text, lines, spot[0], spot[1], cur.key, preferred)
    inline = flow_key_at(text, path, cur.line, cur.column)
    if inline is not None:  # config: {port: 9090} — after the line-based spot, which is cheaper
        return _about_config_key(path, text, lines, inline[0], list(inline[1]), inline[2], preferred)
    if cur.row_line is not None and (cur.key in ("name", "id") or (cur.key == "config" and cur.on_key)):
        doc = row_plugin(path, text, lines, cur.row_line, preferred)
        return [summary(doc)] if doc else []
    return None


def _about_config_key(path: Path, text: str, lines: list[str], row_line: int, above: list[str],
                      key: str, preferred: str | None) -> list[str]:
    doc = row_plugin(path, text, lines, row_line, preferred)
    schema = at_path(doc.schema, above) if doc and doc.schema else None
    prop = properties(schema, doc.schema).get(key) if schema is not None else None
    if prop is None:
        return []
    return [describe(".".join([*above, key]), prop, doc.schema) + f"\n\nconfig of `{doc.name}`"]


def complete(path: Path, text: str, lines: list[str], line: int, column: int,
             preferred: str | None) -> list[dict] | None:
    """Config keys and values of the row's plugin; None when the cursor is not in a ``config:``."""
    spot = config_path(lines, line, column)
    if spot is None:
        return None
    doc = row_plugin(path, text, lines, spot[0], preferred)
    schema = at_path(doc.schema, spot[1]) if doc and doc.schema else None
    if schema is None:
        return []
    props = properties(schema, doc.schema)
    cur = cursor_at(lines, line, column)
    if cur.key is not None and cur.in_value:
        prop = props.get(cur.key)
        return [] if prop is None else [_value_item(v, prop, doc) for v in allowed_values(prop, doc.schema)]
    if not re.fullmatch(r"\s*[A-Za-z_][\w.-]*|\s*", lines[line][:column] if line < len(lines) else ""):
        return []
    written = mapping_keys(lines, line, line_indent(lines, line, column)) - ({cur.key} if cur.key else set())
    return [{"label": key, "kind": PROPERTY, "detail": type_words(prop, doc.schema) or "config key",
             "documentation": {"kind": "markdown", "value": describe(key, prop, doc.schema)},
             "insertText": f"{key}: "} for key, prop in props.items() if key not in written]


def _value_item(value: Any, prop: dict, doc: PluginDoc) -> dict:
    text = yaml_scalar(value)
    is_default = "default" in prop and prop["default"] == value and type(prop["default"]) is type(value)
    return {"label": text, "kind": ENUM_MEMBER if "enum" in prop else VALUE,
            "detail": f"{doc.name}" + (" (default)" if is_default else ""),
            "documentation": f"{as_json(value)}"}


def yaml_scalar(value: Any) -> str:
    """``value`` written so that dsh's YAML reads it back as the same value (a string stays a string)."""
    from dshctl.core.yaml.dialect import load_yaml
    from dshctl.errors import ParseError

    if isinstance(value, str):
        try:
            back = load_yaml(f"v: {value}\n", "<completion>").value
        except ParseError:
            back = None
        plain = isinstance(back, dict) and back.get("v") == value and isinstance(back.get("v"), str)
        return value if plain and value.strip() == value and value else as_json(value)
    return as_json(value)
