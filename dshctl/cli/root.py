"""The root of the ``dshctl`` command: its global options and callback (commands: ``cli/app.py``)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
import typer.core
from typing_extensions import Annotated

from dshctl import __version__
from dshctl.cli.common import State
from dshctl.cli.lazy_group import CommandTable, LazyCommandGroup
from dshctl.core.home import resolve_home

_RICH_INSTALLED = typer.core.HAS_RICH


def build_root(table: CommandTable, *, rich_help: bool) -> typer.Typer:
    """The typer app with the global options; its commands are loaded lazily from ``table``."""

    # Plain help is typer's rich-less mode: without it typer still imports rich (~70 ms) to escape
    # "[default: …]" (and prints the escape) even when it formats with click.
    typer.core.HAS_RICH = rich_help and _RICH_INSTALLED

    class RootGroup(LazyCommandGroup):
        pass

    RootGroup.table = table
    app = typer.Typer(
        name="dshctl",
        help="Compose, lint, install and host dsh (DeepSeek Harness) configurations.",
        cls=RootGroup,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode="rich" if rich_help else None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.callback()(root)
    return app


def _version(value: bool) -> None:
    if value:
        typer.echo(f"dshctl {__version__}")
        raise typer.Exit()


def root(
    ctx: typer.Context,
    home: Annotated[Optional[Path], typer.Option(
        "--home", help="The dsh home (default: $DSH_HOME, else ~/.dsh).", show_default=False)] = None,
    profile: Annotated[str, typer.Option("--profile", "-p", help="Profile name.")] = "web",
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks for internal errors.")] = False,
    version: Annotated[Optional[bool], typer.Option(
        "--version", callback=_version, is_eager=True, help="Print the version and exit.")] = None,
    no_cache: Annotated[bool, typer.Option(
        "--no-cache", help="Neither read nor write dshctl's caches ($XDG_CACHE_HOME/dshctl).")] = False,
) -> None:
    from dshctl.core.diskcache import set_enabled

    set_enabled(not no_cache)
    ctx.obj = State(home=resolve_home(home), profile=profile, debug=debug)
