"""`dshctl --help` on a terminal without importing typer, click or rich (start-up budget: ~80 ms saved).

typer draws the root help with rich (usage, description, then an Options and a Commands panel) and
imports rich and markdown-it at module level to do it. This module draws the same screen, byte for
byte, from the root's own texts (below, also used by cli/root.py's declaration) and the COMMANDS
table of cli/app.py. It covers what the root help needs and declines everything else, leaving it
to typer: a terminal narrower than ``MIN_WIDTH`` (where rich starts folding words and columns), a
dumb terminal, the environment variables that change rich's or typer's console, or a text that
rich would read as markup. ``tests/test_root_help.py`` compares both renderings at several widths;
``DSHCTL_FASTPATH=0`` forces typer's.
"""
from __future__ import annotations

import os
import re
import sys

DESCRIPTION = "Compose, lint, install and host dsh (DeepSeek Harness) configurations."
USAGE = "dshctl [OPTIONS] COMMAND [ARGS]..."
# The root options' help texts (cli/root.py declares the options with these).
HOME_HELP = "The dsh home (default: $DSH_HOME, else ~/.dsh)."
PROFILE_HELP = "Profile name."
DEBUG_HELP = "Show tracebacks for internal errors."
VERSION_HELP = "Print the version and exit."
NO_CACHE_HELP = "Neither read nor write dshctl's caches ($XDG_CACHE_HOME/dshctl)."
# (long name, short name, metavar, help, default shown) in declaration order; click adds --help.
OPTIONS = (
    ("--home", "", "PATH", HOME_HELP, None),
    ("--profile", "-p", "TEXT", PROFILE_HELP, "web"),
    ("--debug", "", "", DEBUG_HELP, None),
    ("--version", "", "", VERSION_HELP, None),
    ("--no-cache", "", "", NO_CACHE_HELP, None),
    ("--help", "-h", "", "Show this message and exit.", None),
)
MIN_WIDTH = 60
# Variables that make rich or typer draw differently (forced terminal, fixed width, notebooks…).
_CONSOLE_VARIABLES = ("TERMINAL_WIDTH", "_TYPER_FORCE_DISABLE_TERMINAL", "FORCE_COLOR", "PY_COLORS",
                      "GITHUB_ACTIONS", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "JUPYTER_COLUMNS",
                      "JUPYTER_LINES", "NO_COLOR")
_MARKUP = re.compile(r"[\[\]\\]|:[^\s:]+:")  # rich markup or an :emoji: code in a help text

# rich's styles as typer sets them: bold, dim, and the option / switch / metavar colours.
BOLD, DIM, USAGE_STYLE, OPTION, SWITCH, METAVAR = "1", "2", "1;33", "1;36", "1;32", "1;33"
# typer's option highlighter: a switch (-x, or each -word of a long name), then the long option.
_SWITCH = re.compile(r"(^|\W)(?P<s>-\w+)(?![a-zA-Z0-9])")
_LONG = re.compile(r"(^|\W)(?P<s>--[\w-]+)(?![a-zA-Z0-9])")


def print_root_help(commands: dict[str, tuple[str, str]]) -> bool:
    """Write the root help to a terminal as typer would; False (nothing written) to leave it to typer."""
    width = terminal_width()
    if width is None or not _plain_texts(commands):
        return False
    try:
        text = render(commands, width)
    except _Decline:
        return False
    sys.stdout.write(text)
    sys.stdout.flush()
    return True


def terminal_width() -> int | None:
    """The width rich would use for stdout, or None where this module does not draw."""
    env = os.environ
    if env.get("DSHCTL_FASTPATH") == "0" or any(v in env for v in _CONSOLE_VARIABLES):
        return None
    if env.get("TERM", "").lower() in ("dumb", "unknown") or not sys.stdout.isatty():
        return None
    width = 0
    for fd in (0, 1, 2):  # rich asks stdin first, then stdout, then stderr
        try:
            width = os.get_terminal_size(fd).columns
        except (AttributeError, ValueError, OSError):
            continue
        break
    columns = env.get("COLUMNS", "")
    if columns.isdigit():  # rich lets $COLUMNS override the terminal's width
        width = int(columns)
    elif not width:
        width = 80
    return width if width >= MIN_WIDTH else None


def _plain_texts(commands) -> bool:
    texts = [DESCRIPTION] + [o[3] for o in OPTIONS] + [h for _, h in commands.values()] + list(commands)
    return all(t.isascii() and t.isprintable() and not _MARKUP.search(t) for t in texts)


def render(commands: dict[str, tuple[str, str]], width: int) -> str:
    """The root help as typer's rich renderer writes it at ``width`` columns (ANSI styles included)."""
    lines = [_styled(" " * width, BOLD)]
    usage = "Usage: " + USAGE
    lines.append(_styled(" ", BOLD) + _styled("Usage: ", USAGE_STYLE) + _styled(USAGE, BOLD)
                 + _styled(" " * (width - 2 - len(usage)), BOLD) + _styled(" ", BOLD))
    lines.append(_styled(" " * width, BOLD))
    lines += [" " + line.ljust(width - 2) + " " for line in wrap(DESCRIPTION, width - 2)]
    lines.append(" " * width)
    lines += _panel("Options", _option_rows(width - 4), width)
    lines += _panel("Commands", _command_rows(commands, width - 4), width)
    return "\n".join(lines) + "\n\n"  # click echoes the (empty) help text after rich printed it


def _option_rows(inner: int) -> list[str]:
    long_w = max(len(o[0]) for o in OPTIONS)
    short_w = max(len(o[1]) for o in OPTIONS)
    meta_w = max(len(o[2]) for o in OPTIONS)
    # columns: long (no left pad), short, two empty ones (negative flags), metavar, help (no right pad)
    lead = (long_w + 1) + (short_w + 2) + 2 + 2 + (meta_w + 2)
    help_w = inner - lead - 1
    rows = []
    for long, short, meta, text, default in OPTIONS:
        first = (_highlight(long) + " " * (long_w - len(long) + 1)
                 + " " + _styled(short, SWITCH) + " " * (short_w - len(short) + 1) + "    "
                 + " " + _styled(meta.ljust(meta_w), METAVAR) + " " + " ")
        cell = _help_cell(text, default, help_w)
        rows.append(first + cell[0])
        rows += [" " * (lead + 1) + more for more in cell[1:]]
    return rows


def _help_cell(text: str, default: str | None, width: int) -> list[str]:
    if default is None:
        return [line.ljust(width) for line in wrap(text, width)]
    shown = f"[default: {default}]"
    if len(text) + 1 + len(shown) > width:
        raise _Decline  # rich would fold the text and the default into two columns
    return [text + " " + _styled(shown, DIM) + " " * (width - len(text) - 1 - len(shown))]


def _command_rows(commands: dict[str, tuple[str, str]], inner: int) -> list[str]:
    name_w = max(len(name) for name in commands)
    text_w = inner - (name_w + 1) - 1
    rows = []
    for name, (_, text) in commands.items():
        lines = wrap(text, text_w)
        rows.append(_styled(name.ljust(name_w), OPTION) + _styled(" ", OPTION) + " " + lines[0].ljust(text_w))
        rows += [_styled(" " * (name_w + 1), OPTION) + " " + more.ljust(text_w) for more in lines[1:]]
    return rows


def _panel(title: str, rows: list[str], width: int) -> list[str]:
    head = f" {title} "
    top = (_styled("╭─", DIM) + _styled(head, DIM) + _styled("─" * (width - 4 - len(head)), DIM)
           + _styled("─╮", DIM))
    side = _styled("│", DIM)
    return [top] + [f"{side} {row} {side}" for row in rows] + [_styled("╰" + "─" * (width - 2) + "╯", DIM)]


class _Decline(Exception):
    pass


def wrap(text: str, width: int) -> list[str]:
    """Greedy word wrap as rich's ``divide_line`` does it (single spaces; no word is wider than
    ``width`` here, else _Decline: rich would fold it)."""
    lines: list[str] = []
    line = ""
    for word in text.split(" "):
        if len(word) > width:
            raise _Decline
        if not line:
            line = word
        elif len(line) + 1 + len(word) <= width:
            line += " " + word
        else:
            lines.append(line)
            line = word
    lines.append(line)
    return lines


def _styled(text: str, style: str) -> str:
    return f"\x1b[{style}m{text}\x1b[0m" if text else ""


def _highlight(option: str) -> str:
    """A long option as typer's highlighter styles it: cut where any highlight starts or ends."""
    cuts = {0, len(option)}
    for pattern in (_SWITCH, _LONG):
        for m in pattern.finditer(option):
            cuts.update(m.span("s"))
    edges = sorted(cuts)
    return "".join(_styled(option[a:b], OPTION) for a, b in zip(edges, edges[1:]))
