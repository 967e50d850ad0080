"""The root of the ``dshctl`` command: its global options and callback (commands: ``cli/app.py``)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
import typer.core
from typing_extensions import Annotated

from dshctl import __version__
from dshctl.cli import root_help as texts  # the root's texts: its rich-free --help draws them too
from dshctl.cli.common import HomePath, complete_profiles
from dshctl.cli.shared import root_state
from dshctl.cli.lazy_group import CommandTable, LazyCommandGroup

_RICH_INSTALLED = typer.core.HAS_RICH


def _keep_argument_help() -> None:
    """typer 0.20 stores an argument's help, then calls click's ``Parameter.__init__``, which since
    click 8.5.1 takes ``help`` itself and resets it to None: every argument's help vanished from
    ``--help``. Store it again after the base initialiser (a no-op on versions without the clash)."""
    import typer.core

    original = typer.core.TyperArgument.__init__
    if getattr(original, "_dshctl_keeps_help", False):
        return

    def init(self, *args, help=None, **kwargs):  # noqa: A002 - click's parameter name
        original(self, *args, help=help, **kwargs)
        self.help = help

    init._dshctl_keeps_help = True
    typer.core.TyperArgument.__init__ = init
    # click 8.5 also lists documented arguments itself ("Positional arguments"), next to typer's own
    # "Arguments" section of the plain help: keep typer's, once.
    for cls in (typer.core.TyperCommand, typer.core.TyperGroup):
        if hasattr(cls, "format_arguments"):
            cls.format_arguments = lambda self, ctx, formatter: None


_keep_argument_help()


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
        help=texts.DESCRIPTION,
        cls=RootGroup,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode="rich" if rich_help else None,
        # Plain help uses the terminal's width (up to 200 columns), so an example stays on one line.
        context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 200},
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
        "--home", help=texts.HOME_HELP, show_default=False, click_type=HomePath())] = None,
    profile: Annotated[str, typer.Option("--profile", "-p", help=texts.PROFILE_HELP,
                                         autocompletion=complete_profiles)] = "web",
    debug: Annotated[bool, typer.Option("--debug", help=texts.DEBUG_HELP)] = False,
    version: Annotated[Optional[bool], typer.Option(
        "--version", callback=_version, is_eager=True, help=texts.VERSION_HELP)] = None,
    no_cache: Annotated[bool, typer.Option(
        "--no-cache", help=texts.NO_CACHE_HELP)] = False,
) -> None:
    ctx.obj = root_state(home=home, profile=profile, debug=debug, no_cache=no_cache)
