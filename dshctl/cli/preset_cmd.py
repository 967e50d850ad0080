"""`dshctl preset`: list, show, path, new and lint agent presets (docs/presets.md)."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer
from typing_extensions import Annotated

from dshctl.cli.common import (FormatOpt, HomeOpt, ProfileOpt, check_format, command_group, complete_presets,
                               effective, print_json)
from dshctl.errors import EXIT_FINDINGS, DshctlError

RootOpt = Annotated[Optional[List[str]], typer.Option(
    "--root", help="A preset root to scan (repeatable, in precedence order); replaces the profile's roots.",
    show_default=False)]
NoUserRootOpt = Annotated[bool, typer.Option(
    "--no-user-root", help="Do not scan $DSH_HOME/.agent-presets.")]


def _note(text: str) -> None:
    from dshctl.cli.preset_list_run import note

    note(text)


def _roster(ctx: typer.Context, home, profile, roots, no_user_root, *, strict: bool = True):
    from dshctl.cli.preset_list_run import roster_of

    state = effective(ctx, home, profile)
    return roster_of(state, roots, no_user_root, strict=strict), state


def cmd_list(ctx: typer.Context, home: HomeOpt = None, profile: ProfileOpt = None, root: RootOpt = None,
             no_user_root: NoUserRootOpt = False, fmt: FormatOpt = "text") -> None:
    """List presets in roster order, with health and shadowing.

    Example: dshctl preset list --format json
    """
    from dshctl.cli import preset_list_run

    raise typer.Exit(preset_list_run.run(effective(ctx, home, profile), root=root, no_user_root=no_user_root,
                                         fmt=fmt))


def cmd_show(ctx: typer.Context, preset_id: Annotated[str, typer.Argument(metavar="ID", help="A preset id (its directory name), e.g. standard.",
                                                            autocompletion=complete_presets)],
             home: HomeOpt = None, profile: ProfileOpt = None, root: RootOpt = None,
             no_user_root: NoUserRootOpt = False, fmt: FormatOpt = "text") -> None:
    """Show one preset: metadata, where it comes from, and its rows as a tree.

    Example: dshctl preset show standard
    """
    check_format(fmt)
    roster, _ = _roster(ctx, home, profile, root, no_user_root)
    preset = roster.require(preset_id)
    rows = _rows_of(preset)
    if fmt == "json":
        from dshctl.core.yaml.nodes import to_plain

        print_json({**preset.to_dict(), "rows": to_plain(rows) if rows is not None else None})
        return
    from dshctl.cli.preset_view import print_details

    print_details(preset, rows)


def _rows_of(preset):
    """The parsed rows of a healthy preset (None for a broken one)."""
    if not preset.health.ok:
        return None
    from dshctl.core.presets.health import parse_composition

    try:
        doc, health = parse_composition(preset.file.read_bytes(), preset.file)
    except OSError:
        return None
    return doc.value if doc is not None and health.ok else None


def cmd_path(ctx: typer.Context, preset_id: Annotated[str, typer.Argument(metavar="ID", help="A preset id, e.g. standard.",
                                                            autocompletion=complete_presets)],
             home: HomeOpt = None, profile: ProfileOpt = None, root: RootOpt = None,
             no_user_root: NoUserRootOpt = False, fmt: FormatOpt = "text") -> None:
    """Print the directory of the preset dsh would use for ID.

    Example: cd "$(dshctl preset path standard)"
    """
    check_format(fmt)
    roster, _ = _roster(ctx, home, profile, root, no_user_root)
    preset = roster.require(preset_id)
    if fmt == "json":
        print_json({"id": preset.id, "dir": str(preset.dir), "path": str(preset.file)})
    else:
        typer.echo(str(preset.dir))


def cmd_new(ctx: typer.Context, new_id: Annotated[str, typer.Argument(metavar="ID", help="The new preset's id: lowercase letters, digits and -.")],
            source: Annotated[str, typer.Option("--from", help="Preset id or directory to copy.")],
            into: Annotated[Optional[Path], typer.Option(
                "--into", help="Root to create it in (default: $DSH_HOME/.agent-presets).",
                show_default=False)] = None,
            home: HomeOpt = None, profile: ProfileOpt = None, root: RootOpt = None,
            no_user_root: NoUserRootOpt = False, fmt: FormatOpt = "text") -> None:
    """Create preset ID as a copy of the preset given with --from (copy-only authoring, as dsh does).

    Example: dshctl preset new reviewer --from standard
    """
    check_format(fmt)
    from dshctl.core.presets import make_root, preset_at, user_root
    from dshctl.core.presets.authoring import copy_preset

    roster, state = _roster(ctx, home, profile, root, no_user_root)
    if Path(source).is_dir():
        origin = preset_at(Path(source))
    else:
        origin = roster.require(source)
    target_root = make_root(into) if into else user_root(state.home)
    created = copy_preset(origin, new_id, target_root.path)
    existing = roster.find(new_id)
    if existing is not None:
        _note(f'another preset "{new_id}" exists at {existing.dir}; the earlier root in precedence wins')
    if fmt == "json":
        print_json({"id": new_id, "dir": str(created), "from": str(origin.dir)})
    else:
        typer.echo(f"created {created} (from {origin.dir})")


def cmd_lint(ctx: typer.Context,
             targets: Annotated[Optional[List[str]], typer.Argument(metavar="[ID|PATH]...", help="Preset ids, preset directories or directories of presets (default: every root).",
                 autocompletion=complete_presets)] = None,
             home: HomeOpt = None, profile: ProfileOpt = None, root: RootOpt = None,
             no_user_root: NoUserRootOpt = False,
             fmt: Annotated[str, typer.Option("--format", "-f", help="auto, text, json, sarif or github.")]
             = "auto") -> None:
    """Lint presets: health, metadata, schema, duplicate ids, missing plugin files, !!js subset.

    Example: dshctl preset lint reviewer ./my-presets
    """
    from dshctl.core.diagnostics import has_errors
    from dshctl.core.presets.lint import lint_presets
    from dshctl.report import FORMATS, render

    check_format(fmt, FORMATS)
    roster, _ = _roster(ctx, home, profile, root, no_user_root, strict=False)
    diags = _lint_targets(roster, targets) if targets else lint_presets(roster)
    render(diags, fmt)
    if has_errors(diags) or any(d.severity == "warning" for d in diags):
        raise typer.Exit(EXIT_FINDINGS)


def _lint_targets(roster, targets: list[str]):
    """Each target is a path when it exists (a preset, its agent.cordis.yml, or a directory of
    presets), else a preset id looked up in the roster."""
    import os

    from dshctl.core.presets import COMPOSITION_FILE, discover, make_root, preset_at
    from dshctl.core.presets.lint import lint_presets

    diags = []
    for target in targets:
        path = Path(target)
        if not os.path.lexists(path):
            diags += lint_presets(roster, [roster.require(target)])
        elif path.name == COMPOSITION_FILE or os.path.lexists(path / COMPOSITION_FILE):
            diags += lint_presets(roster, [preset_at(path)])
        elif path.is_dir():
            diags += lint_presets(discover([make_root(path)]))
        else:
            raise DshctlError(f"{target} is not a preset", hint="give a preset id, a preset directory, "
                              "its agent.cordis.yml, or a directory of presets")
    return diags


def register(app: typer.Typer) -> None:
    group = command_group("List, inspect, author and lint agent presets.")
    group.command("list")(cmd_list)
    group.command("show")(cmd_show)
    group.command("path")(cmd_path)
    group.command("new")(cmd_new)
    group.command("lint")(cmd_lint)
    app.add_typer(group, name="preset")
