"""The ``dshctl`` entry point: global options, command groups, and error handling."""
from __future__ import annotations

import os
import sys

from dshctl import __version__

# Every command of the root, in `dshctl --help` order: name → (module under dshctl.cli, one-line
# help). A module is imported only when one of its commands runs; its `register(app)` adds the
# commands (a group via `app.add_typer(group, name=…)` or a command via `app.command(name)`). To add
# a command group: write `dshctl/cli/<name>_cmd.py` with `register(app)`, add its row here, and
# keep the help text equal to the group's own (tests/test_cli_lazy.py checks both directions).
COMMANDS: dict[str, tuple[str, str]] = {
    "lint": ("lint_cmd", "Lint dsh config files (dialect, schemas, rules); exit 1 on errors."),
    "reload": ("host_cmd", "Reload the running host's configuration and report per row."),
    "status": ("host_cmd", "Show the running host's tree and how it compares to disk and last-good."),
    "schema": ("schema_cmd", "Show the JSON Schemas for dsh files (for editors and CI)."),
    "profile": ("profile_cmd", "Compose, inspect and edit dsh profiles."),
    "preset": ("preset_cmd", "List, inspect, author and lint agent presets."),
    "plugin": ("plugin_cmd", "Install bundles from git sources into a profile."),
    "host": ("host_cmd", "Run a profile on dshctl's Python host."),
    "fleet": ("fleet_cmd", "Publish one profile to many hosts through etcd; see their verdicts; roll back."),
    "agent": ("agent_cmd", "Run the profile's agent: one turn, or an interactive chat."),
    "session": ("session_cmd", "List, show, export and archive the session logs of a home."),
    "lsp": ("lsp_cmd", "Run the language server: lint's findings, layers on hover, ids and plugins as you type."),
    "completion": ("completion_cmd",
                   "Print a completion script for SHELL (commands, options, profiles, row ids, preset ids)."),
}

_ROOT_OPTIONS_WITH_VALUE = ("--home", "--profile", "-p")
_ROOT_FLAGS = ("--debug", "--no-cache")
COMPLETE_VAR = "_DSHCTL_COMPLETE"   # set by the shell completion script calling back


def build_app(*, rich_help: bool = True):
    """The typer app: root options (cli/root.py); commands loaded lazily from COMMANDS."""
    from dshctl.cli.root import build_root

    return build_root(COMMANDS, rich_help=rich_help)


def __getattr__(name: str):
    if name == "app":  # `from dshctl.cli.app import app` for tools that want the typer object
        return build_app()
    raise AttributeError(name)


def _asks_only_for_version(args: list[str]) -> bool:
    """`dshctl [root options] --version`: answered without importing typer (start-up budget)."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--version":
            return True
        if arg in _ROOT_FLAGS or arg.startswith(("--home=", "--profile=")):
            i += 1
        elif arg in _ROOT_OPTIONS_WITH_VALUE:
            i += 2
        else:
            return False
    return False


def _print_error(err, argv: list[str]) -> None:
    from dshctl.cli.shared import given_options, repeat_options

    given = given_options(argv)
    sys.stderr.write(f"dshctl: error: {repeat_options(str(err), given)}\n")
    if err.hint:
        sys.stderr.write(f"  hint: {repeat_options(err.hint, given)}\n")


def _print_usage_error(err) -> None:
    # Same shape as every other error (docs/cli.md) instead of click's four-line usage block.
    command = err.ctx.command_path if err.ctx is not None else "dshctl"
    sys.stderr.write(f"dshctl: error: {err.format_message()}\n"
                     f"  hint: run '{command} --help' for usage\n")


def _internal(exc: BaseException, debug: bool) -> int:
    from dshctl.errors import EXIT_INTERNAL

    if debug:
        import traceback

        traceback.print_exc()
    sys.stderr.write(f"dshctl: internal error: {type(exc).__name__}: {exc}\n"
                     "  hint: run again with --debug for the traceback, and report it\n")
    return EXIT_INTERNAL


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; map every failure to one clear line and a documented exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if _asks_only_for_version(args):
        sys.stdout.write(f"dshctl {__version__}\n")
        sys.exit(0)
    sys.exit(_run(args))


def program() -> None:
    """The installed ``dshctl`` command and ``python -m dshctl``: ``main`` in a process of its
    own, which then exits without tearing down its modules (cli/quick_exit.py). ``main`` itself
    is what tests and other in-process callers use."""
    try:
        main()
    except SystemExit as done:
        if type(done.code) is not int or not 0 <= done.code <= 255:
            raise
        from dshctl.cli.quick_exit import leave

        leave(done.code)


def _run(args: list[str]) -> int:
    debug = "--debug" in args
    import dshctl.cli.shared as shared
    from dshctl.cli.failures import check_argv, never_unencodable, os_error
    from dshctl.errors import EXIT_FINDINGS, DshctlError

    shared.ARGV[:] = args
    never_unencodable()
    try:
        check_argv(args)
        code = None
        if not os.environ.get(COMPLETE_VAR):
            code = _run_fast(args)
        if code is None:
            code = _run_typer(args)
    except DshctlError as err:
        if debug:
            import traceback

            traceback.print_exc()
        _print_error(err, args)
        code = err.exit_code
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
        code = _internal(exc, debug)
    cache = sys.modules.get("dshctl.core.cache.disk")
    if cache is not None:  # --no-cache holds for one invocation (main may be called in-process)
        cache.set_enabled(True)
    return code if isinstance(code, int) else 0


def _run_fast(args: list[str]) -> int | None:
    """A hot command, or the root help on a terminal, without typer's start-up; else None."""
    if args in (["--help"], ["-h"]):
        from dshctl.cli.root_help import print_root_help

        return 0 if print_root_help(COMMANDS) else None  # rich's panels, drawn without rich
    from dshctl.cli.fastpath import run_fast

    return run_fast(args)


def _run_typer(args: list[str]):
    """The command through typer and click; click's own outcomes mapped to dshctl's exit codes."""
    import click

    from dshctl.errors import EXIT_USAGE
    from dshctl.terminal import color_enabled

    # Help is rich on a terminal and click's plain text when piped or under NO_COLOR (docs/cli.md);
    # the plain path never imports rich, which keeps `dshctl --help | less` within its budget.
    app = build_app(rich_help=color_enabled(sys.stdout))
    if os.environ.get(COMPLETE_VAR):
        from dshctl.cli.completion_cmd import answer_completion_request

        if answer_completion_request(app):  # the completion script calling back
            return 0
    try:
        return app(args=args, prog_name="dshctl", standalone_mode=False)
    except click.exceptions.UsageError as err:
        if type(err).__name__ == "NoArgsIsHelpError" and err.ctx is not None:
            sys.stdout.write(err.ctx.get_help() + "\n")  # `dshctl` or `dshctl profile` alone: the help
        else:
            _print_usage_error(err)
        return EXIT_USAGE
    except click.exceptions.Abort:
        sys.stderr.write("dshctl: aborted\n")
        return 130
    except click.exceptions.Exit as exc:
        return exc.exit_code
