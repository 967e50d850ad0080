"""`dshctl profile disable|enable|set|unset|insert`: safe edits of a user patch layer (core/compose/edit.py)."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer
from typing_extensions import Annotated

from dshctl.cli.common import HomeOpt, ProfileOpt, complete_rows, effective

HomeLayerOpt = Annotated[bool, typer.Option(
    "--home-layer", help="Edit the home layer ($DSH_HOME/cordis.patch.yml) instead of the profile's.")]
FormatOpt = Annotated[str, typer.Option("--format", "-f", help="text or json.")]


def register(group: typer.Typer) -> None:
    group.command("disable")(disable)
    group.command("enable")(enable)
    group.command("set")(set_value)
    group.command("unset")(unset_value)
    group.command("insert")(insert)


def _report(outcome, fmt: str) -> None:
    from dshctl.cli.common import check_format, print_json

    check_format(fmt)
    if fmt == "json":
        print_json({"file": str(outcome.path), "created": outcome.created,
                    "summary": outcome.summary, "note": outcome.note or None})
        return
    made = " (created)" if outcome.created else ""
    sys.stdout.write(f"{outcome.summary} in {outcome.path}{made}\n")
    if outcome.note:
        sys.stdout.write(f"note: {outcome.note}\n")


def _split(target: str) -> tuple[str, list[str]]:
    from dshctl.errors import UsageError

    row, _, rest = target.partition(".")
    if not row or not rest:
        raise UsageError(f"expected ROW.config.a.b, got {target!r}",
                         hint="e.g. dshctl profile set http.config.port 9090")
    keys = rest.split(".")
    if "" in keys:
        raise UsageError(f"empty key in {target!r} (two dots in a row, or a dot at the end)",
                         hint="e.g. dshctl profile set http.config.port 9090")
    return row, keys


def _parse_value(text: str):
    """VALUE is read as YAML in dsh's dialect: 9090 is a number, '{a: 1}' a mapping, '!!js x' an
    expression; quote it for a string that looks like something else."""
    from dshctl.core.yaml.dialect import load_yaml
    from dshctl.core.yaml.nodes import to_plain

    doc = load_yaml(text, "<value>")
    return None if doc.empty else to_plain(doc.value, js="keep")


def disable(ctx: typer.Context, row: Annotated[str, typer.Argument(help="Row id, e.g. llm-main.", autocompletion=complete_rows)],
            home_layer: HomeLayerOpt = False, fmt: FormatOpt = "text",
            home: HomeOpt = None, profile: ProfileOpt = None) -> None:
    """Disable a row (writes `- id: ROW` / `disabled: true`).

    Example: dshctl --profile web profile disable llm-main
    """
    from dshctl.core.compose.edit import set_disabled

    st = effective(ctx, home, profile)
    _report(set_disabled(st.home, st.profile, row, True, home_layer=home_layer), fmt)


def enable(ctx: typer.Context, row: Annotated[str, typer.Argument(help="Row id, e.g. llm-main.", autocompletion=complete_rows)],
           home_layer: HomeLayerOpt = False, fmt: FormatOpt = "text",
           home: HomeOpt = None, profile: ProfileOpt = None) -> None:
    """Enable a row (writes `disabled: false`, which re-enables a row a lower layer disabled).

    Example: dshctl profile enable llm-main
    """
    from dshctl.core.compose.edit import set_disabled

    st = effective(ctx, home, profile)
    _report(set_disabled(st.home, st.profile, row, False, home_layer=home_layer), fmt)


def set_value(ctx: typer.Context,
              target: Annotated[str, typer.Argument(help="ROW.config.a.b (or ROW.<key>).", autocompletion=complete_rows)],
              value: Annotated[str, typer.Argument(help="A YAML value: 9090, true, '{a: 1}', '!!js x'.")],
              home_layer: HomeLayerOpt = False, fmt: FormatOpt = "text",
              home: HomeOpt = None, profile: ProfileOpt = None) -> None:
    """Set a config field. dsh replaces config whole, so the complete config is written.

    Example: dshctl profile set http.config.port 9090   (or: dshctl profile set web.disabled '!!js process.env.CI')
    """
    from dshctl.core.compose.edit import set_field

    st = effective(ctx, home, profile)
    row, path = _split(target)
    _report(set_field(st.home, st.profile, row, path, _parse_value(value), home_layer=home_layer), fmt)


def unset_value(ctx: typer.Context,
                target: Annotated[str, typer.Argument(help="ROW.config.a.b", autocompletion=complete_rows)],
                home_layer: HomeLayerOpt = False, fmt: FormatOpt = "text",
                home: HomeOpt = None, profile: ProfileOpt = None) -> None:
    """Remove a config field (the complete remaining config is written).

    Example: dshctl profile unset http.config.port
    """
    from dshctl.core.compose.edit import set_field

    st = effective(ctx, home, profile)
    row, path = _split(target)
    _report(set_field(st.home, st.profile, row, path, None, unset=True, home_layer=home_layer), fmt)


def insert(ctx: typer.Context,
           file: Annotated[Path, typer.Option("--file", help="A YAML file holding a list of rows.")],
           into: Annotated[Optional[str], typer.Option("--into", help="A group row to insert into.")] = None,
           home_layer: HomeLayerOpt = False, fmt: FormatOpt = "text",
           home: HomeOpt = None, profile: ProfileOpt = None) -> None:
    """Insert rows at the top level or into a group (`- insert: [...]`).

    Example: dshctl profile insert --file rows.yml --into tools
    """
    from dshctl.core.yaml.dialect import load_file
    from dshctl.core.compose.edit import insert_rows
    from dshctl.core.yaml.nodes import to_plain
    from dshctl.errors import DshctlError, Loc

    st = effective(ctx, home, profile)
    doc = load_file(file)
    if doc.empty or not isinstance(doc.value, list) or not all(isinstance(r, dict) for r in doc.value):
        raise DshctlError(f"{file} must hold a YAML list of rows (mappings)", loc=Loc(str(file), 1, 1),
                          hint="e.g. - id: hello\n         name: dsh-hello-plugin")
    rows = to_plain(doc.value, js="keep")
    _report(insert_rows(st.home, st.profile, rows, into=into, home_layer=home_layer), fmt)
