"""`dshctl lsp`: the language server (dshctl/lsp/) on standard input and output.

pygls is imported only when the command runs, so no other command pays for it (tests/test_cli_lazy.py).
"""
from __future__ import annotations

import typer
from typing_extensions import Annotated

EPILOG = """Example: dshctl lsp --stdio

Your editor starts it: docs/editors.md has the VS Code, Neovim and Helix set-up."""


def register(app: typer.Typer) -> None:
    app.command("lsp", epilog=EPILOG)(lsp)


def lsp(ctx: typer.Context, stdio: Annotated[bool, typer.Option(
        "--stdio", help="Speak LSP over standard input and output (the default and only transport; "
                        "accepted because editors pass it).", show_default=False)] = True) -> None:
    """Run the language server: lint's findings, layers on hover, ids and plugins as you type."""
    from dshctl.cli.common import effective
    from dshctl.lsp.server import serve

    serve(debug=effective(ctx).debug)
