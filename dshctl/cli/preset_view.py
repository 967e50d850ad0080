"""How `dshctl preset` prints presets: rich on a terminal, plain aligned text when piped."""
from __future__ import annotations

from typing import Any

from dshctl.cli.shared import console, is_rich


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def roster_rows(roster) -> list[list[str]]:
    """One row per copy: each winner, then the copies it shadows."""
    rows = []
    for preset in roster.presets:
        rows.append(_row(preset, "shadows " + ", ".join(str(p.root.path) for p in preset.shadowed)
                         if preset.shadowed else ""))
        for copy in preset.shadowed:
            rows.append(_row(copy, f"shadowed by {preset.root.path}"))
    return rows


def _row(preset, relation: str) -> list[str]:
    return [preset.id, _cell(preset.metadata.name), _cell(preset.metadata.order), str(preset.root.path),
            preset.root.trust, preset.status, relation]


HEADERS = ["ID", "NAME", "ORDER", "ROOT", "TRUST", "STATUS", "SHADOWS / SHADOWED BY"]


def print_table(headers: list[str], rows: list[list[str]]) -> None:
    out = console()
    if is_rich():
        from rich.table import Table
        from rich.text import Text

        table = Table(*headers, show_lines=False)
        for row in rows:
            style = "red" if "broken" in row else ("dim" if "shadowed" in row else None)
            table.add_row(*(Text(cell) for cell in row), style=style)  # Text: no markup in user data
        out.print(table)
        return
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    for line in [headers] + rows:
        out.print("  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip(), markup=False)


def print_broken(roster) -> None:
    out = console()
    broken = [p for p in roster.all_copies() if not p.health.ok]
    if broken:
        out.print("\nbroken:", markup=False)
    for preset in broken:
        out.print(f"  {preset.id}: {preset.health.broken} ({preset.health.loc})", markup=False)


def print_details(preset, rows: Any) -> None:
    out = console()
    meta = preset.metadata
    fields = [("id", preset.id), ("name", meta.name), ("description", meta.description),
              ("order", meta.order), ("file", preset.file), ("root", f"{preset.root.path} ({preset.root.trust})"),
              ("status", preset.status)]
    if preset.health.broken:
        fields.append(("broken", f"{preset.health.broken} ({preset.health.loc})"))
    for copy in preset.shadowed:
        fields.append(("shadows", copy.file))
    for key, value in fields:
        out.print(f"{key + ':':<13}{_cell(value)}", markup=False)
    if isinstance(rows, list):
        out.print("rows:", markup=False)
        _print_rows(out, rows)


def row_label(row: Any) -> str:
    if not isinstance(row, dict):
        return repr(row)
    label = f"{row.get('id') or '<no id>'} ({row.get('name')})"
    disabled = row.get("disabled")
    if disabled is not None and disabled is not False:
        expr = getattr(disabled, "expr", None)  # a JsExpr
        label += f" [disabled: {'!!js ' + expr if expr else disabled}]"
    if isinstance(row.get("isolate"), dict) and row["isolate"]:
        label += " [isolate: " + ", ".join(row["isolate"]) + "]"
    return label


def _children(row: Any) -> list:
    if isinstance(row, dict) and row.get("group") is True and isinstance(row.get("config"), list):
        return row["config"]
    return []


def _print_rows(out, rows: list) -> None:
    if is_rich():
        from rich.tree import Tree

        tree = Tree("rows", hide_root=True)
        _add_rich(tree, rows)
        out.print(tree)
        return
    _print_plain(out, rows, "  ")


def _add_rich(node, rows: list) -> None:
    from rich.markup import escape

    for row in rows:
        _add_rich(node.add(escape(row_label(row))), _children(row))


def _print_plain(out, rows: list, indent: str) -> None:
    for row in rows:
        out.print(f"{indent}- {row_label(row)}", markup=False)
        _print_plain(out, _children(row), indent + "  ")
