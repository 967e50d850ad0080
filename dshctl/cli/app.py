"""The ``dshctl`` entry point: global options, command groups, and error handling."""
from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from typing import Optional

import click
import typer
from typing_extensions import Annotated

from dshctl import __version__
from dshctl.cli.common import State, complete_profiles
from dshctl.core.home import resolve_home
from dshctl.errors import EXIT_INTERNAL, EXIT_USAGE, DshctlError

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


_keep_argument_help()

app = typer.Typer(
    name="dshctl",
    help="Compose, lint, install and host dsh (DeepSeek Harness) configurations.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

# One module per command or group; each exposes register(app). See docs/architecture.md.
COMMAND_MODULES = ["schema_cmd", "lint_cmd", "profile_cmd", "preset_cmd", "plugin_cmd", "host_cmd", "agent_cmd",
                   "session_cmd", "completion_cmd"]


def _version(value: bool) -> None:
    if value:
        typer.echo(f"dshctl {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    home: Annotated[Optional[Path], typer.Option(
        "--home", help="The dsh home (default: $DSH_HOME, else ~/.dsh).", show_default=False)] = None,
    profile: Annotated[str, typer.Option("--profile", "-p", help="Profile name.",
                                         autocompletion=complete_profiles)] = "web",
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks for internal errors.")] = False,
    version: Annotated[Optional[bool], typer.Option(
        "--version", callback=_version, is_eager=True, help="Print the version and exit.")] = None,
) -> None:
    ctx.obj = State(home=resolve_home(home), profile=profile, debug=debug)


for _name in COMMAND_MODULES:
    importlib.import_module(f"dshctl.cli.{_name}").register(app)


def _print_error(err: DshctlError, argv: list[str]) -> None:
    from dshctl.cli.common import given_options, repeat_options

    given = given_options(argv)
    sys.stderr.write(f"dshctl: error: {repeat_options(str(err), given)}\n")
    if err.hint:
        sys.stderr.write(f"  hint: {repeat_options(err.hint, given)}\n")


def _print_usage_error(err: click.exceptions.UsageError) -> None:
    # Same shape as every other error (docs/cli.md) instead of click's four-line usage block.
    command = err.ctx.command_path if err.ctx is not None else "dshctl"
    sys.stderr.write(f"dshctl: error: {err.format_message()}\n"
                     f"  hint: run '{command} --help' for usage\n")


def _plain_help_under_no_color() -> None:
    """typer's rich help honours only part of NO_COLOR (bold and dim stay); drop all styling."""
    if os.environ.get("NO_COLOR"):
        import typer.rich_utils

        typer.rich_utils.COLOR_SYSTEM = None


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; map every failure to one clear line and a documented exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    import dshctl.cli.common as common

    common.ARGV[:] = args
    debug = "--debug" in args
    _plain_help_under_no_color()
    from dshctl.cli.completion_cmd import answer_completion_request

    if answer_completion_request(app):  # the completion script calling back
        sys.exit(0)
    try:
        code = app(args=args, prog_name="dshctl", standalone_mode=False)
    except DshctlError as err:
        if debug:
            import traceback

            traceback.print_exc()
        _print_error(err, args)
        code = err.exit_code
    except click.exceptions.UsageError as err:
        _print_usage_error(err)
        code = EXIT_USAGE
    except click.exceptions.Abort:
        sys.stderr.write("dshctl: aborted\n")
        code = 130
    except click.exceptions.Exit as exc:
        code = exc.exit_code
    except KeyboardInterrupt:
        code = 130
    except BrokenPipeError:
        code = 0
    except Exception as exc:  # noqa: BLE001 - the last line of defence
        if debug:
            import traceback

            traceback.print_exc()
        sys.stderr.write(f"dshctl: internal error: {type(exc).__name__}: {exc}\n"
                         "  hint: run again with --debug for the traceback, and report it\n")
        code = EXIT_INTERNAL
    sys.exit(code if isinstance(code, int) else 0)
