"""The ``dshctl`` entry point: global options, command groups, and error handling."""
from __future__ import annotations

import errno
import importlib
import os
import sys
from pathlib import Path
from typing import Optional

import click
import typer
from typing_extensions import Annotated

from dshctl import __version__
from dshctl.cli.common import State, checked_home, complete_profiles
from dshctl.errors import EXIT_FINDINGS, EXIT_INTERNAL, EXIT_USAGE, DshctlError, Loc, UsageError

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
    ctx.obj = State(home=checked_home(home), profile=profile, debug=debug)


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


def _never_unencodable() -> None:
    """Text that UTF-8 cannot encode (a lone surrogate, a valid JavaScript string) is printed as a
    ``\\uXXXX`` escape instead of ending the command with UnicodeEncodeError."""
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")


def _check_argv(args: list[str]) -> None:
    """Arguments must be UTF-8: Python hands undecodable bytes (``$'\\xff'``) over as lone
    surrogates, which would end up in files no reader accepts."""
    for n, arg in enumerate(args, 1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError as exc:
            shown = arg.encode("utf-8", "backslashreplace").decode("ascii")
            raise UsageError(f"argument {n} ({shown!r}) is not valid UTF-8 (at character {exc.start + 1})",
                             hint="pass text and paths in UTF-8") from None


def os_error(exc: OSError) -> DshctlError:
    """An OSError the file system raised, as one line naming the path."""
    where = exc.filename if exc.filename is not None else None
    reason = exc.strerror or str(exc)
    hints = {errno.ENAMETOOLONG: "a file or profile name is limited to 255 bytes (and a path to 4,096)",
             errno.ENOTDIR: "a part of the path is a file, not a directory (check --home)",
             errno.ELOOP: "the path goes through a symbolic link loop",
             errno.EACCES: "check the permissions", errno.EPERM: "check the permissions",
             errno.EROFS: "the file system is read-only", errno.ENOSPC: "free some disk space"}
    return DshctlError(reason.lower() if reason[:1].isupper() else reason,
                       loc=Loc(str(where)) if where is not None else None,
                       hint=hints.get(exc.errno, "check the path and try again"))


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
    _never_unencodable()
    try:
        _check_argv(args)
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
    except OSError as exc:  # the file system refused (name too long, not a directory, …): not a bug
        if debug:
            import traceback

            traceback.print_exc()
        _print_error(os_error(exc), args)
        code = EXIT_FINDINGS
    except Exception as exc:  # noqa: BLE001 - the last line of defence
        if debug:
            import traceback

            traceback.print_exc()
        sys.stderr.write(f"dshctl: internal error: {type(exc).__name__}: {exc}\n"
                         "  hint: run again with --debug for the traceback, and report it\n")
        code = EXIT_INTERNAL
    sys.exit(code if isinstance(code, int) else 0)
