"""What `dshctl plugin` prints: the phase lines while it works and the table after, typer-free.

Piped (or with NO_COLOR) both are plain text written without rich, whose import costs ~40 ms of
start-up; on a terminal the live status line and the table come from rich.
"""
from __future__ import annotations

import contextlib
import sys

from dshctl.cli import plain_table
from dshctl.terminal import color_enabled

RESTART_NOTE = "note: a running host picks up bundle changes only on restart"
SUMMARY_COLUMNS = ["name", "version", "commit", "layer", "npm deps", "action"]
PLAIN_WIDTH = 200  # cli.common.console()'s width when stdout is not a terminal


@contextlib.contextmanager
def progress():
    """The phase on stderr: a live status line on a terminal, one plain line per phase when piped
    (download counts at most every few seconds). Ctrl-C says what was rolled back."""
    import time

    try:
        if not color_enabled(sys.stderr):  # what err_console().is_terminal says, without rich
            last = {"phase": None, "at": 0.0}

            def line(message: str) -> None:
                if getattr(message, "is_transfer", False):  # bundles.outcome.TransferProgress
                    return  # byte counts and rates are for a terminal's status line only
                phase = "".join(ch for ch in message if not ch.isdigit())
                now = time.monotonic()
                if phase != last["phase"] or now - last["at"] > 3:
                    sys.stderr.write(message + "\n")
                    sys.stderr.flush()
                    last.update(phase=phase, at=now)
            yield line
            return
        from dshctl.cli.shared import err_console

        with err_console().status("resolving…") as status:
            yield lambda message: status.update(message)
    except KeyboardInterrupt:
        sys.stderr.write("dshctl: interrupted: every change this run made to the profile was "
                         "rolled back (the store keeps only complete, checked packages)\n")
        raise


def print_table(columns: list[str], rows: list[list[str]]) -> None:
    """A borderless table on stdout, as cli.shared.print_table() prints a rich Table."""
    if not color_enabled(sys.stdout):
        text = plain_table.render(columns, rows, PLAIN_WIDTH)
        if text is not None:
            sys.stdout.write(text)
            return
    from rich.table import Table

    from dshctl.cli.shared import print_table as print_rich_table

    table = Table(box=None, pad_edge=False, show_header=True, header_style="bold")
    for column in columns:
        table.add_column(column)
    for row in rows:
        table.add_row(*row)
    print_rich_table(table)


def summary(outcome, fmt: str, preview: dict | None = None) -> None:
    if fmt == "json":
        from dshctl.cli.shared import print_json

        data = outcome.to_dict()
        if preview is not None:
            data["preview"] = preview
        print_json(data)
        return
    for warning in outcome.warnings:
        sys.stderr.write(warning + "\n")
    for note in outcome.notes:
        sys.stderr.write(f"note: {note}\n")
    if outcome.scripts:
        sys.stderr.write("note: install scripts were not run (dshctl runs no package code):\n")
        for line in outcome.scripts:
            sys.stderr.write(f"  {line}\n")
    if outcome.initialized and not outcome.dry_run:
        sys.stdout.write(f"initialized profile {outcome.profile} at {outcome.directory}\n")
    rows = []
    for c in outcome.changes:
        layer = str(c.position) if c.position else ("plain" if not c.bundle else "-")
        action = c.action + (" (forced)" if c.forced else "")
        if c.action == "removed" and c.npm_packages:  # they went with it: say so
            action += f" with its {c.npm_packages} npm package" + ("s" if c.npm_packages > 1 else "")
        rows.append([c.name, c.version or "-", (c.commit or c.old_commit or "-")[:12], layer,
                     str(c.npm_packages), action])
    print_table(SUMMARY_COLUMNS, rows)
    if outcome.dry_run:
        _line("dry run: nothing was written")
    elif outcome.changed:
        _line(RESTART_NOTE)


def _line(text: str) -> None:
    """One line as console().print writes plain text (no markup in these fixed lines)."""
    if color_enabled(sys.stdout):
        from dshctl.cli.shared import console

        console().print(text)
    else:
        sys.stdout.write(text + "\n")


def tree_lines(node: dict, prefix: str = "", last: bool = True, root: bool = True) -> list[str]:
    """A dependency tree (``{"name", "version", "dependencies": [...]}``) drawn as pnpm draws
    `pnpm list` and `pnpm why`: ``├──``/``└──`` for a leaf, ``├─┬``/``└─┬`` above children."""
    label = f"{node['name']} {node.get('version') or '-'}"
    kids = node.get("dependencies") or []
    if root:
        lines, inner = [label], ""
    else:
        branch = ("└─" if last else "├─") + ("┬ " if kids else "─ ")
        lines, inner = [prefix + branch + label], prefix + ("  " if last else "│ ")
    for i, kid in enumerate(kids):
        lines += tree_lines(kid, inner, i == len(kids) - 1, root=False)
    return lines


def print_trees(title: str, trees: list[dict]) -> None:
    """pnpm's layout: a legend, the project line, then ``dependencies:`` and one tree each."""
    sys.stdout.write("Legend: production dependency, optional only, dev only\n\n")
    sys.stdout.write(f"{title}\n\ndependencies:\n")
    for tree in trees:
        sys.stdout.write("\n".join(tree_lines(tree)) + "\n")
