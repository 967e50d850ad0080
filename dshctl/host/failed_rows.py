"""What the host says about rows that failed: where their config was set (``config_loc``, beside the
row's own location) and, for a ``--for`` check run, one error naming them."""
from __future__ import annotations

from dshctl.errors import DshctlError, Loc


def fail_if_rows_failed(boot_report: dict | None) -> None:
    """``--for`` runs are checks (CI, the demo): rows that failed to start make the run fail."""
    failed = [r for r in (boot_report or {}).get("rows", []) if r.get("action") == "failed"]
    if failed:
        first = failed[0]
        raise DshctlError(f"{len(failed)} row(s) failed to start: "
                          + ", ".join(f"{r['id']} ({r.get('reason') or 'failed'})" for r in failed),
                          loc=Loc(first["loc"]) if first.get("loc") else None,
                          hint="see the row/failed lines of the log; a port may be taken by another process")


def annotate(report_rows: list, rows: list) -> list:
    """Add ``config_loc`` to failed rows: where their ``config`` was last set (often a user layer,
    while the row's own location is the bundle that inserted it)."""
    from dshctl.core.compose.composition import iter_rows
    by_id = {row.get("id"): row for row, _ in iter_rows(rows)}
    for item in report_rows:
        if item.get("action") != "failed":
            continue
        config = (by_id.get(item["id"].rpartition(":")[2]) or {}).get("config")
        loc = getattr(config, "loc", None)
        if loc is not None and str(loc) != item.get("loc"):
            item["config_loc"] = str(loc)
    return report_rows
