"""`dshctl completion bash|zsh|fish`: a shell completion script, and the completions it asks for.

The script is click's (it calls ``dshctl`` back with ``_DSHCTL_COMPLETE=<shell>_complete`` and the
words typed); ``main()`` answers those calls through ``answer_completion_request``. Besides commands
and options it completes profile names, row ids and preset ids (``cli/completers.py``).
"""
from __future__ import annotations

import os
import sys

import typer
from typing_extensions import Annotated

COMPLETE_VAR = "_DSHCTL_COMPLETE"
SHELLS = ("bash", "zsh", "fish")
EPILOG = """Example: eval "$(dshctl completion bash)"   (in ~/.bashrc)

Example: dshctl completion fish > ~/.config/fish/completions/dshctl.fish

Example: dshctl completion zsh > "${fpath[1]}/_dshctl\""""


def register(app: typer.Typer) -> None:
    app.command("completion", epilog=EPILOG)(completion)


def completion(ctx: typer.Context, shell: Annotated[str, typer.Argument(
        help="The shell: bash (4.4+), zsh or fish.", show_default=False)]) -> None:
    """Print a completion script for SHELL (commands, options, profiles, row ids, preset ids)."""
    sys.stdout.write(_completer(shell, ctx.find_root().command).source() + "\n")


def _completer(shell: str, root):
    from click.shell_completion import BashComplete, FishComplete, ZshComplete

    from dshctl.errors import UsageError

    classes = {"bash": BashComplete, "zsh": ZshComplete, "fish": FishComplete}
    if shell not in classes:
        raise UsageError(f"unknown shell {shell!r}", hint="choose one of: " + ", ".join(SHELLS))
    return classes[shell](root, {}, "dshctl", COMPLETE_VAR)


def answer_completion_request(app: typer.Typer) -> bool:
    """When the shell script calls back (``_DSHCTL_COMPLETE`` set), print the completions; True then."""
    instruction = os.environ.get(COMPLETE_VAR)
    if not instruction:
        return False
    shell, _, action = instruction.partition("_")
    try:
        completer = _completer(shell, typer.main.get_command(app))
    except Exception:  # noqa: BLE001 - never break the user's shell
        return True
    sys.stdout.write((completer.source() if action == "source" else completer.complete()) + "\n")
    return True
