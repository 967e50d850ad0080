"""How `dshctl profile` prints explanations, diffs and profile lists (rich on a terminal, else plain)."""
from __future__ import annotations

from typing import Any

from dshctl.cli.common import console, is_rich
from dshctl.core.yaml import emit
from dshctl.core.yaml.nodes import to_plain


def _value(value: Any) -> str:
    from dshctl.core.compose.explain import MISSING

    if value is MISSING:
        return "(absent)"
    text = emit.dump(to_plain(value, js="keep")).strip() if isinstance(value, (dict, list)) \
        else emit.scalar(value)
    return text.replace("\n", "\n      ")


def _table(headers: list[str], rows: list[list[str]]) -> None:
    out = console()
    if is_rich():
        from rich.table import Table

        table = Table(*headers, show_edge=False, header_style="bold")
        for row in rows:
            table.add_row(*row)
        out.print(table)
        return
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    out.print("  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip(), markup=False)
    for row in rows:
        out.print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip(), markup=False)


def print_explanation(exp, comp) -> None:
    out = console()
    subject = exp.row_id + ("." + ".".join(exp.path) if exp.path else "")
    out.print(f"{subject} in profile {comp.profile}", markup=False)
    if not exp.steps:
        out.print("  no layer touched it", markup=False)
    winner = _winner(exp)
    for n, step in enumerate(exp.steps, start=1):
        mark = "  <- winner" if step is winner else ""
        out.print(f"  {n}. [{step.layer}] {step.message or step.action}"
                  + (f" at {step.loc}" if step.loc else "") + mark, markup=False)
        if step.action in ("set", "inserted") and exp.path:
            out.print(f"      value: {_value(step.value)}", markup=False)
    if exp.in_tree:
        out.print(f"  final: {_value(exp.final) if exp.path else 'present'}", markup=False)
    else:
        out.print("  final: the row is not in the composed tree", markup=False)
    if not exp.path and exp.in_tree:
        state = exp.disabled_by or "enabled"
        out.print(f"  state: {state}" + (f" (at {exp.disabled_loc})" if exp.disabled_loc else ""),
                  markup=False)


def _winner(exp):
    for step in reversed(exp.steps):
        if step.action in ("set", "inserted"):
            return step
    return None


def explanation_json(exp, comp) -> dict:
    from dshctl.core.compose.explain import MISSING

    def val(v):
        return None if v is MISSING else to_plain(v)

    winner = _winner(exp)
    return {
        "profile": comp.profile, "row": exp.row_id, "path": exp.path, "in_tree": exp.in_tree,
        "final": val(exp.final), "final_present": exp.final is not MISSING,
        "disabled_by": exp.disabled_by,
        "steps": [{"layer": s.layer, "action": s.action, "message": s.message,
                   "value": val(s.value), "present": s.value is not MISSING,
                   "file": s.loc.file if s.loc else None, "line": s.loc.line if s.loc else None,
                   "column": s.loc.column if s.loc else None, "winner": s is winner}
                  for s in exp.steps],
    }


def print_diff(result, a: str, b: str) -> None:
    out = console()
    if not result.changes:
        out.print(f"no differences between {a} and {b}", markup=False)
        return
    out.print(f"--- {a}\n+++ {b}", markup=False)
    for change in result.changes:
        sign = {"added": "+", "removed": "-"}.get(change.kinds[0], "~")
        detail = f" ({change.detail})" if change.detail else ""
        out.print(f"{sign} {change.row_id}: {', '.join(change.kinds)}{detail}", markup=False)
        for f in change.fields:
            if f.change == "added":
                out.print(f"    + {f.path}: {_value(f.new)}", markup=False)
            elif f.change == "removed":
                out.print(f"    - {f.path}: {_value(f.old)}", markup=False)
            else:
                out.print(f"    ~ {f.path}: {_value(f.old)} -> {_value(f.new)}", markup=False)
    a_n, b_n = result.unkeyed
    if a_n or b_n:
        out.print(f"({a_n} / {b_n} rows without an id were not compared)", markup=False)


def print_profiles(home, statuses) -> None:
    if not statuses:
        console().print(f"no profiles in {home}/profiles", markup=False)
        return
    rows = []
    for s in statuses:
        bad = [layer for layer in s.layers if not layer.ok]
        layers = f"{len(s.layers) - len(bad)}/{len(s.layers)} parse"
        problem = s.error or (bad[0].error if bad else "")
        rows.append([s.name, str(s.bundles), layers, "ok" if s.ok else "BROKEN", problem or ""])
    _table(["PROFILE", "BUNDLES", "LAYERS", "STATUS", "PROBLEM"], rows)
