"""`dshctl schema list | show NAME | path NAME`: the JSON Schemas dshctl ships."""
from __future__ import annotations

import sys

import typer
from typing_extensions import Annotated

from pathlib import Path

from dshctl.cli.common import FormatOpt, check_format, print_json
from dshctl.cli.shared import print_table

NameArg = Annotated[str, typer.Argument(
    help="Schema name: entry-list, cordis.patch, preset, profile-manifest, bundle-manifest, "
         "settings (aliases: cordis, agent.cordis, patch, profile, bundle, …).",
    show_default=False)]


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="Show the JSON Schemas for dsh files (for editors and CI).",
                        no_args_is_help=True)
    group.command("list")(list_schemas)
    group.command("show")(show)
    group.command("path")(path)
    group.command("export", epilog="Example: dshctl schema export .vscode/dshctl-schemas")(export)
    app.add_typer(group, name="schema")


def list_schemas(fmt: FormatOpt = "text") -> None:
    """List the schemas: name, title and file.

    Example: dshctl schema list --format json
    """
    from dshctl.core import schemas

    check_format(fmt)
    rows = []
    for name in schemas.SCHEMAS:
        schema = schemas.load_schema(name)
        rows.append({"name": name, "title": schema.get("title", ""),
                     "path": str(schemas.schema_path(name)),
                     "aliases": sorted(a for a, n in schemas.ALIASES.items() if n == name)})
    if fmt == "json":
        print_json(rows)
        return
    from rich.table import Table

    table = Table(box=None, show_edge=False, pad_edge=False)
    for column in ("NAME", "TITLE", "ALIASES"):
        table.add_column(column, no_wrap=column == "NAME")
    for row in rows:
        table.add_row(row["name"], row["title"], ", ".join(row["aliases"]))
    print_table(table)


def show(name: NameArg) -> None:
    """Print a schema's JSON (e.g. dshctl schema show cordis.patch).

    Example: dshctl schema show cordis.patch > cordis.patch.schema.json
    """
    from dshctl.core import schemas

    sys.stdout.write(schemas.schema_path(name).read_text(encoding="utf-8"))


def path(name: NameArg) -> None:
    """Print the schema file's path (for `# yaml-language-server: $schema=<path>`).

    Example: dshctl schema path entry-list
    """
    from dshctl.core import schemas

    sys.stdout.write(f"{schemas.schema_path(name)}\n")


def export(directory: Annotated[Path, typer.Argument(
        help="Directory to write into (created if missing), e.g. .vscode/dshctl-schemas.",
        show_default=False)]) -> None:
    """Write every schema (relative $refs, no URLs) plus ready-to-paste editor settings into DIR.

    Example: dshctl schema export .vscode/dshctl-schemas
    """
    from dshctl.core.schema_export import export as export_schemas

    for written in export_schemas(directory, Path.cwd()):
        sys.stdout.write(f"{written}\n")
