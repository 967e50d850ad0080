"""What every typer command shares: the root state from a click context, the common options, groups
that take --home/--profile before their verb. The typer-free part lives in cli/shared.py (re-exported)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import click
import typer
from typing_extensions import Annotated

from dshctl.cli.shared import (ARGV, State, check_format, checked_home, console, err_console,  # noqa: F401
                               given_options, is_rich, print_json, repeat_options, with_overrides)
from dshctl.core.home import resolve_home


def state(ctx: typer.Context) -> State:
    """The root state (``--home``, ``--profile``, ``--debug`` given before the group)."""
    root = ctx.find_root()
    if not isinstance(root.obj, State):
        root.obj = State(home=resolve_home(None), profile="web")
    return root.obj


def effective(ctx: typer.Context, home: Optional[Path] = None, profile: Optional[str] = None) -> State:
    """Root state with per-command ``--home``/``--profile`` overrides applied (either position works)."""
    # Group callbacks store their --home/--profile in their context's meta (command_group below).
    groups = []
    node = ctx
    while node is not None:
        if node.meta.get("dshctl.overrides"):
            groups.append(node.meta["dshctl.overrides"])
        node = node.parent
    return with_overrides(state(ctx), groups, home, profile)


class HomePath(click.Path):
    """``--home``'s type: a path, but not an empty or blank one, which ``Path('')`` would turn into the
    current directory (or a blank one into the default home) without a word."""

    def convert(self, value, param, ctx):
        if isinstance(value, str) and not value.strip():
            self.fail("the dsh home must not be empty; pass a directory, or leave --home out for "
                      "$DSH_HOME (else ~/.dsh)", param, ctx)
        return super().convert(value, param, ctx)


HomeOpt = Annotated[Optional[Path], typer.Option(
    "--home", help="The dsh home (default: $DSH_HOME, else ~/.dsh).", show_default=False,
    click_type=HomePath())]
def complete_profiles(ctx, incomplete: str) -> list[str]:
    from dshctl.cli.completers import profile_names

    return profile_names(ctx, incomplete)


def complete_rows(ctx, incomplete: str) -> list[str]:
    from dshctl.cli.completers import row_ids

    return row_ids(ctx, incomplete)


def complete_presets(ctx, incomplete: str) -> list[str]:
    from dshctl.cli.completers import preset_ids

    return preset_ids(ctx, incomplete)


def complete_packages(ctx, incomplete: str) -> list[str]:
    from dshctl.cli.completers import installed_packages

    return installed_packages(ctx, incomplete)


def complete_sessions(ctx, incomplete: str) -> list[str]:
    from dshctl.cli.completers import session_ids

    return session_ids(ctx, incomplete)


ProfileOpt = Annotated[Optional[str], typer.Option(
    "--profile", "-p", help="Profile name (default: web).", show_default=False,
    autocompletion=complete_profiles)]
FormatOpt = Annotated[str, typer.Option(
    "--format", "-f", help="Output format: text or json.")]


def command_group(help_text: str) -> typer.Typer:
    """A command group that also accepts ``--home``/``--profile`` before its verb
    (``dshctl plugin --profile web add …``); ``effective()`` picks them up."""
    group = typer.Typer(help=help_text, no_args_is_help=True)

    @group.callback()
    def _group_options(ctx: typer.Context, home: HomeOpt = None, profile: ProfileOpt = None) -> None:
        ctx.meta["dshctl.overrides"] = {"home": home, "profile": profile}

    _group_options.__doc__ = help_text
    return group
