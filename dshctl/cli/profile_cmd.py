"""`dshctl profile` (placeholder until its issue lands)."""
from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="profile commands.", no_args_is_help=True)
    app.add_typer(group, name="profile")
