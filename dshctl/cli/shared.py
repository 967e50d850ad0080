"""What every command shares that needs no typer (the fast path uses it too, see cli/fastpath.py):
the root state, the home check, hints that repeat the user's options, consoles and JSON output."""
from __future__ import annotations

import math
import sys
from pathlib import Path

TYPE_CHECKING = False  # typing is not imported at run time (a cached lint's start-up)
if TYPE_CHECKING:
    from typing import Any, Optional

from dshctl.core.home import resolve_home
from dshctl.records import Record
from dshctl.terminal import color_enabled

if TYPE_CHECKING:  # rich is imported only by commands that print through it (start-up time)
    from rich.console import Console


class State(Record):
    """The root options every command runs with (a Record: the fast path must not pay for importing
    ``dataclasses``)."""

    __slots__ = ("home", "profile", "debug")
    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass was

    def __init__(self, home: Path, profile: str, debug: bool = False):
        self.home = home
        self.profile = profile
        self.debug = debug


def checked_home(explicit: Optional[Path] = None) -> Path:
    """The resolved home; one that exists but is not a directory (``--home /dev/null``) is an error."""
    import os

    from dshctl.errors import UsageError

    home = resolve_home(explicit)
    if os.path.exists(home) and not os.path.isdir(home):
        raise UsageError(f"the dsh home {home} is not a directory",
                         hint="pass a directory with --home (or $DSH_HOME), e.g. --home ~/.dsh")
    return home


def root_state(*, home: Optional[Path], profile: str, debug: bool, no_cache: bool) -> State:
    """What the root options set up for every command (typer's root callback and the fast path)."""
    from dshctl.core.cache.disk import set_enabled

    set_enabled(not no_cache)
    return State(home=checked_home(home), profile=profile, debug=debug)


def with_overrides(root: State, groups: list[dict], home: Optional[Path] = None,
                   profile: Optional[str] = None) -> State:
    """``root`` with the ``--home``/``--profile`` given to groups (``groups``: innermost first, each
    ``{"home": …, "profile": …}``) and to the command itself; the innermost given value wins."""
    g_home = next((g["home"] for g in groups if g.get("home")), None)
    g_profile = next((g["profile"] for g in groups if g.get("profile")), None)
    return State(
        home=checked_home(home) if home else (checked_home(g_home) if g_home else root.home),
        profile=profile or g_profile or root.profile,
        debug=root.debug,
    )


# Commands whose hints get the user's --profile repeated (the rest do not take one).
_PROFILE_COMMANDS = ("profile", "plugin", "host", "status", "reload")
_COMMANDS = _PROFILE_COMMANDS + ("preset", "lint", "schema", "completion")


ARGV: list[str] = []  # the command line main() runs (set there; hints repeat its options)


def given_options(argv: list[str] | None = None) -> dict[str, str]:
    """The ``--home``/``--profile`` values on the command line, wherever they were given."""
    argv = ARGV if argv is None else argv
    found: dict[str, str] = {}
    for i, arg in enumerate(argv):
        for name, flags in (("home", ("--home",)), ("profile", ("--profile", "-p"))):
            if arg in flags and i + 1 < len(argv):
                found[name] = argv[i + 1]
            elif any(arg.startswith(f + "=") for f in flags if f.startswith("--")):
                found[name] = arg.split("=", 1)[1]
    return found


def repeat_options(text: str, given: dict[str, str]) -> str:
    """``text`` with every suggested ``dshctl <command>`` carrying the --home/--profile the user gave,
    so a hint can be pasted back as it is."""
    import re
    import shlex

    if not given or "dshctl " not in text:
        return text

    def add(m: re.Match) -> str:
        command = m.group(1)
        suggested = re.split(r"['`\n]", text[m.end():], maxsplit=1)[0]  # the rest of this command
        extra = ["--home", shlex.quote(given["home"])] if "home" in given else []
        if "profile" in given and command in _PROFILE_COMMANDS and "--profile" not in suggested:
            extra += ["--profile", shlex.quote(given["profile"])]
        return "dshctl " + " ".join(extra + [command])
    return re.sub(r"\bdshctl (" + "|".join(_COMMANDS) + r")\b", add, text)


def console() -> "Console":
    """stdout: rich on a terminal, plain text when piped or NO_COLOR is set."""
    from rich.console import Console

    rich_ok = color_enabled(sys.stdout)
    return Console(file=sys.stdout, force_terminal=rich_ok, no_color=not rich_ok,
                   highlight=False, soft_wrap=not rich_ok, width=None if rich_ok else 200)


def err_console() -> "Console":
    from rich.console import Console

    rich_ok = color_enabled(sys.stderr)
    return Console(file=sys.stderr, force_terminal=rich_ok, no_color=not rich_ok,
                   highlight=False, soft_wrap=True)


def is_rich() -> bool:
    return color_enabled(sys.stdout)


def print_table(table) -> None:
    """A rich ``Table`` on stdout. Plain (piped or NO_COLOR), each line without the padding rich pads
    the last column with: trailing spaces are noise in a diff, a log or a ``grep 'x$'``."""
    out = console()
    if color_enabled(sys.stdout):
        out.print(table)
        return
    with out.capture() as captured:
        out.print(table)
    sys.stdout.write(without_trailing_spaces(captured.get()))


def without_trailing_spaces(text: str) -> str:
    return "".join(line.rstrip() + "\n" for line in text.splitlines())


def print_json(obj: Any) -> None:
    """``obj`` as JSON the way ``JSON.stringify`` writes it: lone surrogates escaped, and a number
    that is not finite (a huge JSON integer reads as Infinity) written as ``null``."""
    from dshctl.core.yaml.jsvalue import json_dumps

    try:
        text = json_dumps(obj, indent=2, default=_json_default, allow_nan=False)
    except ValueError:  # rare: walk once to null the non-finite numbers
        text = json_dumps(_finite(obj), indent=2, default=_json_default, allow_nan=False)
    sys.stdout.write(text + "\n")


def _finite(o: Any) -> Any:
    if isinstance(o, float) and not math.isfinite(o):
        return None
    if isinstance(o, dict):
        return {k: _finite(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_finite(v) for v in o]
    return o


def _json_default(o: Any) -> Any:
    from dshctl.core.yaml.nodes import JsExpr

    if isinstance(o, JsExpr):
        return o.to_json()
    if isinstance(o, Path):
        return str(o)
    if hasattr(o, "to_dict"):
        return o.to_dict()
    raise TypeError(f"not JSON serializable: {type(o).__name__}")


def check_format(fmt: str, allowed: tuple[str, ...] = ("text", "json")) -> str:
    from dshctl.errors import UsageError

    if fmt not in allowed:
        raise UsageError(f"unknown format {fmt!r}", hint="choose one of: " + ", ".join(allowed))
    return fmt
