"""Start-up budget: `dshctl --version` imports nothing but dshctl's entry module, `dshctl --help`
lists every command from cli/app.py's table without importing a command module or rich, and that
table agrees with what each module's register(app) really adds."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import typer

from dshctl.cli.app import COMMANDS
from dshctl.cli.lazy_group import load_commands

from test_cli_conventions import HEAVY, _on_a_terminal, clean_env

PROBE = """
import json, sys
from dshctl.cli.app import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
sys.stderr.write("\\nMODULES " + json.dumps(sorted(sys.modules)) + "\\n")
"""


def imported_by(*args: str) -> tuple[str, set[str]]:
    """Run the entry point in a fresh interpreter (stdout piped); return its stdout and sys.modules."""
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True,
                          env=clean_env(), timeout=60)
    marker = proc.stderr.rindex("\nMODULES ")
    return proc.stdout, set(json.loads(proc.stderr[marker + len("\nMODULES "):]))


def under(modules: set[str], *packages: str) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in packages))


def test_version_imports_no_cli_framework():
    out, modules = imported_by("--version")
    assert out.startswith("dshctl ")
    assert under(modules, "typer", "click", "rich", "dshctl.core", "dshctl.cli.common", *HEAVY) == []
    assert under(modules, "dshctl") == ["dshctl", "dshctl.cli", "dshctl.cli.app"]


@pytest.mark.parametrize("args", [["--home", "/nowhere", "--debug", "--version"], ["-p", "work", "--version"]])
def test_version_after_root_options_is_the_fast_path_too(args):
    out, modules = imported_by(*args)
    assert out.startswith("dshctl ") and under(modules, "typer", "click") == []


def test_help_imports_no_command_module_and_no_rich():
    out, modules = imported_by("--help")
    assert all(name in out for name in COMMANDS)
    command_modules = sorted({f"dshctl.cli.{module}" for module, _ in COMMANDS.values()})
    assert under(modules, *command_modules) == []
    assert under(modules, "rich", "markdown_it", *HEAVY) == []


def test_a_command_imports_only_its_own_module():
    out, modules = imported_by("schema", "path", "preset")
    assert out.strip().endswith(".json")
    others = sorted({f"dshctl.cli.{m}" for m, _ in COMMANDS.values()} - {"dshctl.cli.schema_cmd"})
    assert "dshctl.cli.schema_cmd" in modules and under(modules, *others) == []


def test_unknown_command_is_still_a_usage_error():
    proc = subprocess.run([sys.executable, "-m", "dshctl", "frobnicate"], capture_output=True, text=True,
                          env=clean_env(), timeout=60)
    assert proc.returncode == 2 and "No such command 'frobnicate'" in proc.stderr


@pytest.mark.parametrize("module", sorted({m for m, _ in COMMANDS.values()}))
def test_table_matches_what_each_module_registers(module):
    """Every name a module registers is in the table under that module, with the same one-line help."""
    import importlib

    scratch = typer.Typer()
    importlib.import_module(f"dshctl.cli.{module}").register(scratch)
    built = typer.main.get_group(scratch).commands
    assert sorted(built) == sorted(n for n, (m, _) in COMMANDS.items() if m == module)
    for name, command in load_commands(module, COMMANDS, "rich").items():
        assert command.get_short_help_str(limit=1000) == COMMANDS[name][1], name


def test_rich_help_on_a_terminal_lists_the_table():
    out = _on_a_terminal(["--help"], {"COLUMNS": "200"}).decode()
    assert "\x1b[" in out
    for name, (_, short_help) in COMMANDS.items():
        assert name in out and short_help in out


@pytest.mark.parametrize("args", [[], ["profile"]])
def test_no_arguments_print_the_help_on_stdout(args):
    proc = subprocess.run([sys.executable, "-m", "dshctl", *args], capture_output=True, text=True,
                          env=clean_env(), timeout=60)
    assert proc.returncode == 2 and proc.stdout.startswith("Usage: dshctl") and proc.stderr == ""
    assert "Commands:" in proc.stdout
