"""A root command group that imports a command module only when one of its commands runs.

``dshctl --help`` lists every command from a table (name → module, one-line help) without importing
the modules, and ``dshctl lint …`` imports only ``lint_cmd``. Each module keeps the usual
``register(app)`` convention: it is called on a scratch ``typer.Typer`` and the click commands it
produced are adopted by the root group.
"""
from __future__ import annotations

import importlib
from typing import Dict, List, Optional, Tuple

import click
import typer
import typer.main
from typer.core import TyperGroup

# name → (module under dshctl.cli, one-line help shown by `dshctl --help`)
CommandTable = Dict[str, Tuple[str, str]]


class LazyCommandGroup(TyperGroup):
    """Root group whose commands come from ``table`` (set by the app, see ``cli/app.py``)."""

    table: CommandTable = {}
    listing = False  # True while `--help` lists the commands: stubs instead of imports

    def list_commands(self, ctx: click.Context) -> List[str]:
        return list(self.commands) + [n for n in self.table if n not in self.commands]

    def get_command(self, ctx: click.Context, cmd_name: str) -> Optional[click.Command]:
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        if cmd_name not in self.table:
            return None
        module, short_help = self.table[cmd_name]
        if self.listing:
            return click.Command(cmd_name, help=short_help, short_help=short_help)
        self.commands.update(load_commands(module, self.table, self.rich_markup_mode))
        return self.commands.get(cmd_name)

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self.listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self.listing = False


def load_commands(module: str, table: CommandTable, markup_mode) -> Dict[str, click.Command]:
    """Import ``dshctl.cli.<module>``, run its ``register(app)`` on a scratch app and return the
    click commands it added that the table names for that module."""
    scratch = typer.Typer(rich_markup_mode=markup_mode)
    importlib.import_module(f"dshctl.cli.{module}").register(scratch)
    built = typer.main.get_group(scratch).commands
    return {name: cmd for name, cmd in built.items() if table.get(name, (None,))[0] == module}
