"""`dshctl --help` on a terminal is drawn without rich (cli/root_help.py): byte for byte what typer's
rich renderer draws (DSHCTL_FASTPATH=0 forces typer's), at every width it handles, importing neither
typer, click nor rich; where it does not handle the screen, typer draws it."""
from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import struct
import subprocess
import sys
import termios

import pytest

from dshctl.cli import root_help
from dshctl.cli.app import COMMANDS

from test_cli_conventions import clean_env, read_terminal
from test_cli_lazy import PROBE

ANSI = re.compile(rb"\x1b\[[0-9;]*m")


def on_a_terminal(args: list[str], columns: int, **env: str) -> tuple[bytes, set[str]]:
    """Run the entry point with stdin and stdout on a pseudo-terminal of ``columns`` columns; what it
    drew there and the modules it imported."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    try:
        environment = {k: v for k, v in clean_env().items() if k not in ("COLUMNS", "LINES")} | env
        environment.setdefault("TERM", "xterm")
        proc = subprocess.Popen([sys.executable, "-c", PROBE, *args], stdin=slave, stdout=slave,
                                stderr=subprocess.PIPE, env=environment)
        os.close(slave)
        drawn = read_terminal(master)
        err = proc.stderr.read().decode()
        proc.wait(timeout=60)
    finally:
        os.close(master)
    marker = err.rindex("\nMODULES ")
    return drawn, set(json.loads(err[marker + len("\nMODULES "):]))


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in ("typer", "click", "rich", "markdown_it"))


@pytest.mark.parametrize("columns", [root_help.MIN_WIDTH, 67, 80, 100, 133, 200])
def test_terminal_help_is_typers_byte_for_byte_without_typer(columns):
    ours, modules = on_a_terminal(["--help"], columns)
    typers, typer_modules = on_a_terminal(["--help"], columns, DSHCTL_FASTPATH="0")
    assert "rich" in typer_modules  # the reference really is typer's rich rendering
    assert heavy(modules) == []
    assert ours == typers
    text = ANSI.sub(b"", ours).decode()
    assert "Usage: dshctl [OPTIONS] COMMAND [ARGS]..." in text and "─ Commands ─" in text
    assert all(name in text for name in COMMANDS) and b"\x1b[1;36m" in ours  # styled, as typer's


def test_columns_overrides_the_terminal_width_as_in_rich():
    ours, modules = on_a_terminal(["--help"], 100, COLUMNS="72")
    assert heavy(modules) == [] and ours == on_a_terminal(["--help"], 100, COLUMNS="72", DSHCTL_FASTPATH="0")[0]
    assert max(len(line) for line in ANSI.sub(b"", ours).decode().splitlines()) == 72


def test_short_help_option_too():
    ours, modules = on_a_terminal(["-h"], 90)
    assert heavy(modules) == [] and ours == on_a_terminal(["-h"], 90, DSHCTL_FASTPATH="0")[0]


@pytest.mark.parametrize("columns,env", [(root_help.MIN_WIDTH - 1, {}), (100, {"TERM": "dumb"}),
                                         (100, {"TERMINAL_WIDTH": "70"}), (100, {"COLUMNS": "50"})])
def test_what_it_does_not_draw_typer_draws(columns, env):
    ours, modules = on_a_terminal(["--help"], columns, **env)
    assert "rich" in modules
    assert ours == on_a_terminal(["--help"], columns, DSHCTL_FASTPATH="0", **env)[0]


def test_a_help_text_rich_would_read_as_markup_is_left_to_typer(monkeypatch):
    monkeypatch.setattr(root_help, "terminal_width", lambda: 100)
    assert not root_help.print_root_help({**COMMANDS, "x": ("x_cmd", "Use [bold]x[/bold].")})
    assert not root_help.print_root_help({**COMMANDS, "y": ("y_cmd", "Say :smile: once.")})


def test_wrapping_is_greedy_by_words():
    assert root_help.wrap("aa bb cc dd", 5) == ["aa bb", "cc dd"]
    assert root_help.wrap("aa bb cc dd", 4) == ["aa", "bb", "cc", "dd"]
    assert root_help.wrap("aaaa", 4) == ["aaaa"]
    with pytest.raises(root_help._Decline):
        root_help.wrap("aaaaa b", 4)
