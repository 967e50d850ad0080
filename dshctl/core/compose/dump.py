"""Render a composition the way ``dsh --dump-config`` does, plus dshctl's JSON form.

YAML: consecutive top-level rows with the same provenance are printed under one
``# == <origin>[, patched by <label>, ...]`` comment; ``!!js`` is printed verbatim; the whole output is
one loadable YAML list. (dsh prints nothing but a newline for an empty composition; dshctl prints
``[]`` so the output always loads as a list, see docs/compose.md.)
"""
from __future__ import annotations

from typing import Any

from dshctl.core.yaml import emit
from dshctl.core.compose.composition import Composition, iter_rows
from dshctl.core.yaml.nodes import to_plain


def render_yaml(comp: Composition) -> str:
    sources = comp.provenance.sources
    if not comp.rows:
        return "[]\n"
    out: list[str] = []
    group: list[Any] = []
    current: str | None = None
    dump_rows = emit.rows_dumper()
    for row, source in zip(comp.rows, sources):
        label = source.label
        if label != current and group:
            out.append(f"# == {current}")
            out.append(dump_rows(group).rstrip())
            group = []
        current = label
        group.append(row)
    out.append(f"# == {current}")
    out.append(dump_rows(group).rstrip())
    return "\n".join(out) + "\n"


def all_ids(comp: Composition) -> list[str]:
    """Every string id in the composed tree, in tree order."""
    return [row["id"] for row, _ in iter_rows(comp.rows) if isinstance(row.get("id"), str)]


def suggest(target: Any, ids: list[str]) -> str | None:
    """The closest existing id to a patch target that matched nothing."""
    import difflib

    if not isinstance(target, (str, int, float)) or isinstance(target, bool):
        return None
    found = difflib.get_close_matches(str(target), ids, n=1, cutoff=0.6)
    return found[0] if found else None


def warning_records(comp: Composition) -> list[dict[str, Any]]:
    ids = None  # the whole tree's ids, gathered only for a warning that suggests one
    records = []
    for w in comp.warnings:
        record = w.to_dict()
        if w.code in ("not-found", "insert-not-found"):
            ids = all_ids(comp) if ids is None else ids
            record["suggestion"] = suggest(w.target, ids)
        records.append(record)
    return records


def render_json(comp: Composition) -> dict[str, Any]:
    """``{"rows", "warnings", "layers"}``; ``!!js`` nodes become ``{"__jsExpr": ...}``."""
    return {
        "rows": to_plain(comp.rows),
        "warnings": warning_records(comp),
        "layers": [layer.to_dict() for layer in comp.layers],
    }


def warning_lines(comp: Composition) -> list[str]:
    """Text-mode warnings: ``[<layer>] <message>`` then where, and a hint when one helps."""
    lines = []
    for record in warning_records(comp):
        where = record["file"]
        if record["line"]:
            where += f":{record['line']}:{record['column']}"
        lines.append(f"[{record['layer']}] {record['message']}" + (f" ({where})" if where else ""))
        if record.get("suggestion"):
            lines.append(f"  hint: did you mean \"{record['suggestion']}\"?")
    return lines
