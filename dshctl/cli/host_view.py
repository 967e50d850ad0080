"""Rendering of reload reports and host status: rich on a terminal, plain text when piped."""
from __future__ import annotations

from dshctl.cli.common import console, is_rich

ACTION_STYLE = {"started": "green", "restarted": "cyan", "updated": "blue", "stopped": "yellow",
                "failed": "bold red", "rolled-back": "magenta", "skipped": "dim"}
STATE_STYLE = {"ACTIVE": "green", "FAILED": "bold red", "PENDING": "yellow", "LOADING": "yellow",
               "DISABLED": "dim", "SKIPPED": "dim", "STOPPED": "dim"}


def print_outcome(outcome: dict) -> None:
    out = console()
    rows = [r for r in outcome["rows"] if r.get("action") != "unchanged"]
    for row in rows:
        why = f"  {row['reason']}" if row.get("reason") else ""
        where = f"  ({row['loc']})" if row.get("loc") and row["action"] == "failed" else ""
        if row.get("config_loc"):
            where += f"  (config set at {row['config_loc']})"
        style = ACTION_STYLE.get(row["action"], "")
        out.print(f"[{style}]{row['action']:<12}[/{style}]{row['id']} ({row['name']}){why}{where}",
                  markup=True, highlight=False)
    for err in outcome["errors"]:
        loc = f"{err['loc']}: " if err.get("loc") else ""
        out.print(f"error: {loc}{err['message']}", markup=False)
        if err.get("hint"):
            out.print(f"  hint: {err['hint']}", markup=False)
    for warning in outcome["warnings"]:
        out.print(f"warning: {warning}", markup=False)
    out.print(outcome["summary"], markup=False)


def print_status(doc: dict) -> None:
    out = console()
    host = doc["host"]
    head = (f"host pid {host['pid']} · profile {host['profile']} · up {host['uptime_s']}s · "
            f"source {host['source']} · tree {host['running_digest']}")
    if is_rich():
        from rich.tree import Tree
        tree = Tree(head)
        _add_rows(tree, doc["rows"])
        out.print(tree)
    else:
        out.print(head, markup=False)
        _plain_rows(out, doc["rows"], 1)
    last = doc.get("last_reload")
    out.print("last reload: " + (last["summary"] if last else "none"), markup=False)
    children = doc.get("subagents") or []
    if children:
        out.print(f"live sub-agents ({len(children)}):", markup=False)
    for child in children:
        out.print(f"  {child['id']}  {child['label'] or '-'}  {child['model'] or '-'}  {child['state']}  "
                  f"(parent {child['parent']})", markup=False)
    for line in host["drift"] or ["running tree = files on disk = last-good record"]:
        out.print(line, markup=False)


def _label(row: dict) -> str:
    err = f" — {row['error']}" if row.get("error") else ""
    return f"{row['id']} ({row['name']}) {row['state']}{err}"


def _add_rows(tree, rows: list) -> None:
    from rich.markup import escape
    for row in rows:
        style = STATE_STYLE.get(row["state"], "")
        node = tree.add(f"[{style}]{escape(_label(row))}[/{style}]")
        _add_rows(node, row.get("children") or [])


def _plain_rows(out, rows: list, depth: int) -> None:
    for row in rows:
        out.print("  " * depth + _label(row), markup=False)
        _plain_rows(out, row.get("children") or [], depth + 1)
