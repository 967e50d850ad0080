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
    return _scan(state, roots, no_user_root, strict)[1]


def _scan(state, roots: Optional[list[str]], no_user_root: bool, strict: bool = True):
    from dshctl.core.presets import discover, load_scan_cache, resolve_roots, save_scan_cache

    resolved, message = resolve_roots(state.home, state.profile, roots, no_user_root)
    if message:
        note(message)
    cache = load_scan_cache(resolved)
    roster = discover(resolved, cache=cache)
    save_scan_cache(resolved, cache)
    if strict:
        roster.raise_root_errors()
    return resolved, roster, cache


def json_text(roster) -> str | None:
    """``shared.print_json``'s exact text for the roster, written by core/jsontext.py's faster
    indenting encoder (10,000 presets: ~85 ms in the stdlib's pure-Python one); None for a value
    print_json writes its own way (a number that is not finite)."""
    from dshctl.cli import shared
    from dshctl.core.jsontext import dumps_indented
    from dshctl.core.yaml.jsvalue import escape_surrogates

    try:
        text = dumps_indented([p.to_dict() for p in roster.presets], 2, default=shared._json_default,
                              allow_nan=False)
    except ValueError:
        return None
    return escape_surrogates(text) + "\n"


def print_roster_json(resolved, roster, cache) -> None:
    """The roster as JSON; the text of the last run when the roster did not change (rendering.py)."""
    from dshctl.core.presets import rendering

    print_ = rendering.fingerprint(roster, cache)
    text = rendering.load(resolved, "json", print_) if print_ is not None else None
    if text is None:
        text = json_text(roster)
        if text is None:
            from dshctl.cli.shared import print_json

            print_json([p.to_dict() for p in roster.presets])
            return
        if print_ is not None:
            rendering.save(resolved, "json", print_, text)
    sys.stdout.write(text)


def run(state, *, root: Optional[list[str]], no_user_root: bool, fmt: str) -> int:
    """List the presets in roster order; the exit code."""
    check_format(fmt)
    resolved, roster, cache = _scan(state, root, no_user_root)
    if fmt == "json":
        print_roster_json(resolved, roster, cache)
        return EXIT_OK
    from dshctl.cli.preset_view import HEADERS, print_broken, print_table, roster_rows
    from dshctl.core.presets.model import display_name

    for skipped in roster.skipped:
        if skipped.notable:
            note(f"skipped {display_name(str(skipped.path))}: {skipped.reason}")
    print_table(HEADERS, roster_rows(roster))
    print_broken(roster)
    return EXIT_OK
