"""`dshctl profile …`: compose, dump, explain, diff, list, init and edit profiles (docs/compose.md).

Heavy modules are imported inside the commands: start-up time counts for `profile dump`.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer
from typing_extensions import Annotated

from dshctl.cli.common import HomeOpt, ProfileOpt, complete_rows, effective
from dshctl.cli.common import complete_profiles

PatchOpt = Annotated[Optional[List[Path]], typer.Option(
    "--patch", help="An extra patch file applied last (repeatable, in order).", show_default=False)]
BundleRootOpt = Annotated[Optional[List[Path]], typer.Option(
    "--bundle-root", help="A directory holding bundle packages (<root>/<name>/package.json).",
    show_default=False)]
StrictOpt = Annotated[bool, typer.Option("--strict", help="Treat patch warnings as errors (exit 1).")]
TextFormatOpt = Annotated[str, typer.Option("--format", "-f", help="text or json.")]


def register(app: typer.Typer) -> None:
    from dshctl.cli import profile_edit_cmd

    group = typer.Typer(help="Compose, inspect and edit dsh profiles.", no_args_is_help=True)
    group.command("dump")(dump)
    group.command("explain")(explain)
    group.command("diff")(diff)
    group.command("list")(list_profiles)
    group.command("init")(init)
    profile_edit_cmd.register(group)
    app.add_typer(group, name="profile")


def compose_for(ctx: typer.Context, home, profile, patches=None, *, default_only=False,
                bundle_roots=None, launcher_overlays=False, touches=True):
    from dshctl.core.compose.composition import compose_profile

    st = effective(ctx, home, profile)
    return compose_profile(st.home, st.profile, patches=patches or (), default_only=default_only,
                           bundle_roots=bundle_roots or (), launcher_overlays=launcher_overlays,
                           touches=touches)


def _fail_if_strict(comp, strict: bool) -> None:
    if strict and comp.warnings:
        from dshctl.cli.profile_dump import raise_strict
        from dshctl.core.compose.dump import warning_records

        raise_strict(warning_records(comp))


def dump(
    ctx: typer.Context,
    patch: PatchOpt = None,
    default_only: Annotated[bool, typer.Option(
        "--default-only", help="Bundle layers only (dsh --dump-default-config): the user layers are not read; no --patch.")] = False,
    fmt: Annotated[str, typer.Option("--format", "-f", help="yaml or json.")] = "yaml",
    strict: StrictOpt = False,
    bundle_root: BundleRootOpt = None,
    home: HomeOpt = None,
    profile: ProfileOpt = None,
) -> None:
    """Print the composed rows as dsh's --dump-config does (yaml), or as JSON.

    Example: dshctl --home ~/.dsh profile dump --format json
    """
    from dshctl.cli import profile_dump

    raise typer.Exit(profile_dump.run(effective(ctx, home, profile), patch=patch, default_only=default_only,
                                      fmt=fmt, strict=strict, bundle_root=bundle_root))


def explain(
    ctx: typer.Context,
    target: Annotated[str, typer.Argument(help="ROW-ID, or ROW-ID.config.a.b for one field.",
                                          autocompletion=complete_rows)],
    patch: PatchOpt = None,
    fmt: TextFormatOpt = "text",
    strict: StrictOpt = False,
    bundle_root: BundleRootOpt = None,
    home: HomeOpt = None,
    profile: ProfileOpt = None,
) -> None:
    """Show every layer that touched a row or field, in order, with values and positions.

    Example: dshctl profile explain http.config.port
    """
    from dshctl.cli import profile_view
    from dshctl.cli.common import check_format, print_json
    from dshctl.core.compose.explain import explain as run_explain

    check_format(fmt)
    comp = compose_for(ctx, home, profile, patch, bundle_roots=bundle_root)
    exp = run_explain(comp, target)
    if fmt == "json":
        print_json(profile_view.explanation_json(exp, comp))
    else:
        profile_view.print_explanation(exp, comp)
    _fail_if_strict(comp, strict)


def diff(
    ctx: typer.Context,
    a: Annotated[str, typer.Argument(help="A profile name (e.g. web), or git:REV: the --profile as "
                                          "committed at REV in the home's git repository (e.g. git:HEAD~1).",
                                     autocompletion=complete_profiles)],
    b: Annotated[str, typer.Argument(help="The other side, in the same forms (e.g. dev, or git:main).",
                                     autocompletion=complete_profiles)],
    patch_a: Annotated[Optional[List[Path]], typer.Option("--patch-a", help="--patch for side A.")] = None,
    patch_b: Annotated[Optional[List[Path]], typer.Option("--patch-b", help="--patch for side B.")] = None,
    exit_code: Annotated[bool, typer.Option("--exit-code", help="Exit 1 when the sides differ.")] = False,
    fmt: TextFormatOpt = "text",
    bundle_root: BundleRootOpt = None,
    home: HomeOpt = None,
    profile: ProfileOpt = None,
) -> None:
    """Semantic diff of two compositions keyed by row id.

    Example: dshctl profile diff web git:HEAD~1   (or: dshctl profile diff web dev)
    """
    from dshctl.cli import profile_view
    from dshctl.cli.common import check_format, print_json
    from dshctl.core.compose.diff import diff_rows

    check_format(fmt)
    st = effective(ctx, home, profile)
    rows_a = _side_rows(st, a, patch_a, bundle_root)
    rows_b = _side_rows(st, b, patch_b, bundle_root)
    result = diff_rows(rows_a, rows_b)
    if fmt == "json":
        print_json({"a": a, "b": b, **result.to_dict()})
    else:
        profile_view.print_diff(result, a, b)
    if exit_code and result.changes:
        raise typer.Exit(1)


def _side_rows(st, side: str, patches, bundle_roots) -> list:
    from dshctl.core.compose.composition import compose_profile
    from dshctl.core.compose.homerev import home_at_revision
    from dshctl.core.compose.profile import profile_dir

    roots = list(bundle_roots or ())
    if not side.startswith("git:"):
        return compose_profile(st.home, side, patches=patches or (), bundle_roots=roots,
                               touches=False).rows
    rev = side[4:] or "HEAD"
    # Bundles are rarely tracked: fall back to the ones installed in the live home.
    live = profile_dir(st.home, st.profile)
    roots += [live / "node_modules", st.home / "profiles" / "node_modules"]
    with home_at_revision(st.home, rev) as old_home:
        return compose_profile(old_home, st.profile, patches=patches or (), bundle_roots=roots,
                               touches=False).rows


def list_profiles(
    ctx: typer.Context,
    fmt: TextFormatOpt = "text",
    bundle_root: BundleRootOpt = None,
    home: HomeOpt = None,
) -> None:
    """List the profiles of the home: bundle count and whether each layer parses.

    Example: dshctl --home ~/.dsh profile list
    """
    from dshctl.cli import profile_view
    from dshctl.cli.common import check_format, print_json
    from dshctl.core.compose.profile_status import home_status

    check_format(fmt)
    st = effective(ctx, home, None)
    status = home_status(st.home, bundle_roots=bundle_root or ())
    if fmt == "json":
        print_json({"home": str(st.home), "profiles": [s.to_dict() for s in status]})
    else:
        profile_view.print_profiles(st.home, status)


def init(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The new profile's name.")],
    from_: Annotated[Optional[str], typer.Option(
        "--from", help="Copy another profile's manifest and layers (default: the host-base template).",
        show_default=False)] = None,
    fmt: TextFormatOpt = "text",
    home: HomeOpt = None,
) -> None:
    """Create a profile: package.json with dsh.profile.bundles and an empty cordis.patch.yml.

    Example: dshctl profile init dev --from web
    """
    from dshctl.cli.common import check_format, print_json
    from dshctl.core.compose.profile_status import init_profile

    check_format(fmt)
    st = effective(ctx, home, None)
    created = init_profile(st.home, name, template=from_)
    if fmt == "json":
        print_json({"profile": name, "directory": str(created.directory),
                    "created": [str(p) for p in created.written],
                    "missingBundles": created.missing_bundles})
        return
    sys.stdout.write(f"initialized profile {name} at {created.directory}\n")
    for p in created.written:
        sys.stdout.write(f"  wrote {p}\n")
    if created.missing_bundles:
        from dshctl.bundles import lock

        locked = lock.read(created.directory / lock.LOCK_NAME)
        unlocked = [b for b in created.missing_bundles if b not in locked]
        sys.stderr.write(f"note: not installed in {name} yet: {', '.join(created.missing_bundles)}\n")
        if unlocked:  # `install` re-creates the lock only; these were vendored or never locked
            sys.stderr.write(f"  hint: {', '.join(unlocked)} {'is' if len(unlocked) == 1 else 'are'} not in "
                             f"the lock: add {'it' if len(unlocked) == 1 else 'them'} with 'dshctl plugin "
                             f"--profile {name} add <git url>', or copy node_modules/{unlocked[0]} from "
                             f"{from_}\n")
        else:
            sys.stderr.write(f"  hint: run 'dshctl plugin --profile {name} install'\n")
