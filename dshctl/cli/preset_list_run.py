"""The body of `dshctl preset list` without typer: the typer command (cli/preset_cmd.py) and the fast
path (cli/fastpath.py) both call ``run``."""
from __future__ import annotations

import sys
from typing import Optional

from dshctl.cli.shared import check_format
from dshctl.errors import EXIT_OK


def note(text: str) -> None:
    sys.stderr.write(f"dshctl: note: {text}\n")


def roster_of(state, roots: Optional[list[str]], no_user_root: bool, *, strict: bool = True):
    """The roster of the given (or the profile's) roots, through the persistent scan cache."""
    from dshctl.core.presets import discover, load_scan_cache, resolve_roots, save_scan_cache

    resolved, message = resolve_roots(state.home, state.profile, roots, no_user_root)
    if message:
        note(message)
    cache = load_scan_cache(resolved)
    roster = discover(resolved, cache=cache)
    save_scan_cache(resolved, cache)
    if strict:
        roster.raise_root_errors()
    return roster


def print_json(obj) -> None:
    """``shared.print_json``'s exact text, written by core/jsontext.py's faster indenting encoder
    (10,000 presets: ~85 ms in the stdlib's pure-Python one)."""
    from dshctl.cli import shared
    from dshctl.core.jsontext import dumps_indented
    from dshctl.core.yaml.jsvalue import escape_surrogates

    try:
        text = dumps_indented(obj, 2, default=shared._json_default, allow_nan=False)
    except ValueError:  # a number that is not finite: print_json writes it as null
        shared.print_json(obj)
        return
    sys.stdout.write(escape_surrogates(text) + "\n")


def run(state, *, root: Optional[list[str]], no_user_root: bool, fmt: str) -> int:
    """List the presets in roster order; the exit code."""
    check_format(fmt)
    roster = roster_of(state, root, no_user_root)
    if fmt == "json":
        print_json([p.to_dict() for p in roster.presets])
        return EXIT_OK
    from dshctl.cli.preset_view import HEADERS, print_broken, print_table, roster_rows
    from dshctl.core.presets.model import display_name

    for skipped in roster.skipped:
        if skipped.notable:
            note(f"skipped {display_name(str(skipped.path))}: {skipped.reason}")
    print_table(HEADERS, roster_rows(roster))
    print_broken(roster)
    return EXIT_OK
