"""`dshctl lint PATH…`: check dsh configuration files and report diagnostics."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer
from typing_extensions import Annotated

from dshctl.cli.common import effective

EPILOG = """Example: dshctl lint .

Example: dshctl lint --select schema,duplicate-id presets/

Example: dshctl lint --strict --format sarif .

Example: dshctl lint - --kind cordis.patch --stdin-filename profiles/web/my.yml

Config: the nearest .dshctl-lint.yaml (or pyproject.toml with a tool.dshctl.lint table) above each file;
see docs/cli.md."""


def register(app: typer.Typer) -> None:
    app.command("lint", epilog=EPILOG)(lint)


def lint(
    ctx: typer.Context,
    paths: Annotated[Optional[List[str]], typer.Argument(
        help="Files or directories to lint, or - for standard input. Directories are searched for "
             "cordis.yml, *.cordis.yml, cordis.patch*.yml, *.cordis.patch.yml, *.overlay.yml, preset.yml, package.json and "
             "a dsh home's settings.yaml; a file named here that is none of these is skipped with a note.",
        show_default=False)] = None,
    fmt: Annotated[str, typer.Option(
        "--format", "-f", help="auto (github under GitHub Actions, else text), text, json, sarif, github.")
    ] = "auto",
    config: Annotated[Optional[Path], typer.Option(
        "--config", help="Use this config file (.dshctl-lint.yaml or pyproject.toml) for every file "
                         "instead of the nearest one.", show_default=False)] = None,
    select: Annotated[Optional[str], typer.Option(
        "--select", help="Run only these rules (comma-separated ids, e.g. schema,duplicate-id).",
        show_default=False)] = None,
    ignore: Annotated[Optional[str], typer.Option(
        "--ignore", help="Turn these rules off (comma-separated ids).", show_default=False)] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Warnings fail too (exit 1).")] = False,
    kind: Annotated[Optional[str], typer.Option(
        "--kind", help="Lint the named files (and -) as this kind: entry-list, cordis.patch, preset, "
                       "package.json or settings.", show_default=False)] = None,
    stdin_filename: Annotated[Optional[str], typer.Option(
        "--stdin-filename", help="The path standard input stands for: reported in findings, and its "
                                 "name and directory pick the kind and the config.",
        show_default=False)] = None,
    list_rules: Annotated[bool, typer.Option(
        "--list-rules", help="Describe every rule with its level under the config (of the first PATH, "
                             "else the current directory) and exit.")] = False,
    jobs: Annotated[Optional[int], typer.Option(
        "--jobs", "-j", help="Files linted in parallel (default: the cores available).",
        show_default=False, min=1, max=1024)] = None,
    no_cache: Annotated[bool, typer.Option(
        "--no-cache", help="Lint every file again; neither read nor write the result cache.")] = False,
) -> None:
    """Lint dsh config files (dialect, schemas, rules); exit 1 on errors.

    Warnings fail too with --strict.
    """
    from dshctl.cli import lint_run

    raise typer.Exit(lint_run.run(effective(ctx), paths=paths, fmt=fmt, config=config, select=select,
                                  ignore=ignore, strict=strict, kind=kind, stdin_filename=stdin_filename,
                                  list_rules=list_rules, jobs=jobs, no_cache=no_cache))
