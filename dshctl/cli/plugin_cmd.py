"""`dshctl plugin`: install bundles from git sources into a profile (docs/bundles.md).

``--home``/``--profile`` work before the verb (``dshctl plugin --profile web add …``, as dsh users
type it) and after it. Heavy modules are imported inside the commands. ``add`` runs on the fast path
(cli/fastpath.py): its body is cli/plugin_run.py.
"""
from __future__ import annotations

import sys
from typing import List, Optional

import typer
from typing_extensions import Annotated

from dshctl.cli import plugin_run
from dshctl.cli.common import FormatOpt, HomeOpt, ProfileOpt, command_group, effective
from dshctl.cli.common import complete_packages
from dshctl.cli.plugin_output import print_table
from dshctl.cli.plugin_output import progress as _progress
from dshctl.cli.plugin_output import summary as _summary

OfflineOpt = Annotated[bool, typer.Option(
    "--offline", help="Use only the store and remembered resolutions; no network.")]
DryRunOpt = Annotated[bool, typer.Option("--dry-run", help="Show what would change; write nothing.")]
ForceOpt = Annotated[bool, typer.Option(
    "--force", help="Install despite incompatible dsh/Cordis ranges (the lock records it).")]
PlainOpt = Annotated[bool, typer.Option(
    "--allow-plain", help="Accepted for old scripts: a package without dsh.bundle installs as a plain "
                     "dependency anyway (with dsh's warning).")]
# Bounded, so a value like 1e400 is a usage error, not an overflow: a terabyte is far past any bundle.
MaxPackageOpt = Annotated[float, typer.Option(
    "--max-package-mb", min=0.001, max=1_000_000,
    help="Refuse a package (bundle or npm) unpacking to more than this.")]
MaxFilesOpt = Annotated[int, typer.Option("--max-files", min=1, max=100_000_000,
                                          help="Refuse a package with more files.")]
MaxFileOpt = Annotated[float, typer.Option(
    "--max-file-mb", min=0.001, max=1_000_000, help="Refuse a package holding a larger file.")]
MaxPackumentOpt = Annotated[float, typer.Option(
    "--max-packument-mb", min=0.001, max=1_000_000,
    help="Refuse an npm packument (registry metadata) larger than this.")]


def register(app: typer.Typer) -> None:
    group = command_group("Install bundles from git sources into a profile.")
    group.command("add")(add)
    group.command("remove")(remove)
    group.command("update")(update)
    group.command("install")(install)
    group.command("list")(list_)
    group.command("why")(why)
    group.command("verify")(verify)
    from dshctl.cli import plugin_store_cmd

    plugin_store_cmd.register(group)
    app.add_typer(group, name="plugin")


# -- shared output ----------------------------------------------------------------------------


def _installer(ctx, home, profile, **flags):
    st = effective(ctx, home, profile)
    return st, plugin_run.installer(st, **flags)


def _print_preview(preview: dict) -> None:
    from dshctl.cli.common import console

    con = console()
    if not preview["changes"]:
        con.print("composed profile: no row changes")
        return
    what = "composed profile" if preview["kind"] == "composed" else "bundle patch entries"
    con.print(f"{what} changes:")
    for change in preview["changes"]:
        detail = f" ({change['detail']})" if change.get("detail") else ""
        con.print(f"  {'/'.join(change['changes'])}: {change['id']}{detail}")
        for field in change.get("fields", [])[:8]:
            con.print(f"      {field['change']} {field['path']}")


# -- commands ---------------------------------------------------------------------------------


def add(ctx: typer.Context,
        specs: Annotated[List[str], typer.Argument(
            help="Git sources (URL, github:o/r, path; #ref or #semver:<range>) or registry names "
                 "(name, name@^1, @scope/name@tag).")],
        offline: OfflineOpt = False, dry_run: DryRunOpt = False, force: ForceOpt = False,
        allow_plain: PlainOpt = False, fmt: FormatOpt = "text",
        home: HomeOpt = None, profile: ProfileOpt = None, max_package_mb: MaxPackageOpt = 256,
        max_files: MaxFilesOpt = 50_000, max_file_mb: MaxFileOpt = 128,
        max_packument_mb: MaxPackumentOpt = 64) -> None:
    """Add bundles from git sources (and their npm dependencies); appends them to
    dsh.profile.bundles.

    Example: dshctl plugin --profile web add github:owner/dsh-hello#v1.2.0
    """
    raise typer.Exit(plugin_run.add(
        effective(ctx, home, profile), specs=specs, offline=offline, dry_run=dry_run, force=force,
        allow_plain=allow_plain, fmt=fmt, max_package_mb=max_package_mb, max_files=max_files,
        max_file_mb=max_file_mb, max_packument_mb=max_packument_mb))


def remove(ctx: typer.Context,
           names: Annotated[List[str], typer.Argument(help="Package names to remove.",
                                                      autocompletion=complete_packages)],
           dry_run: DryRunOpt = False, fmt: FormatOpt = "text",
           home: HomeOpt = None, profile: ProfileOpt = None) -> None:
    """Remove packages: dependency, bundle layer, lock entry and node_modules copy.

    Example: dshctl plugin remove dsh-hello
    """
    from dshctl.cli.common import check_format

    check_format(fmt)
    _st, installer = _installer(ctx, home, profile, dry_run=dry_run)
    _summary(installer.remove(list(names)), fmt)


def update(ctx: typer.Context,
           names: Annotated[Optional[List[str]], typer.Argument(help="Packages (default: all).")] = None,
           offline: OfflineOpt = False, dry_run: DryRunOpt = False, force: ForceOpt = False,
           fmt: FormatOpt = "text", home: HomeOpt = None, profile: ProfileOpt = None,
           max_package_mb: MaxPackageOpt = 256, max_files: MaxFilesOpt = 50_000,
           max_file_mb: MaxFileOpt = 128, max_packument_mb: MaxPackumentOpt = 64) -> None:
    """Move packages to what their refs point at now and re-resolve their npm ranges; shows the
    composed change first.

    Example: dshctl plugin update dsh-hello --dry-run
    """
    from dshctl.bundles.preview import update_preview
    from dshctl.cli.common import check_format

    check_format(fmt)
    st, installer = _installer(ctx, home, profile, offline=offline, dry_run=True, force=force,
                               limits=plugin_run.limits(max_package_mb, max_files, max_file_mb,
                                                        max_packument_mb))
    with _progress() as progress:
        installer.opts.progress = progress
        planned = installer.update(list(names or []))
    preview = update_preview(st.home, st.profile, planned.changes)
    if fmt != "json":
        _print_preview(preview)
    if dry_run or not planned.changed:
        planned.dry_run = dry_run
        _summary(planned, fmt, preview)
        return
    installer.opts.dry_run = False
    pins = {c.name: c.commit for c in planned.changes if c.commit}
    _summary(installer.update(list(names or []), pins=pins), fmt, preview)


def install(ctx: typer.Context, offline: OfflineOpt = False, fmt: FormatOpt = "text",
            home: HomeOpt = None, profile: ProfileOpt = None, max_package_mb: MaxPackageOpt = 256,
            max_files: MaxFilesOpt = 50_000, max_file_mb: MaxFileOpt = 128,
            max_packument_mb: MaxPackumentOpt = 64) -> None:
    """Re-create exactly the locked state in node_modules (npm dependencies from the store).

    Example: dshctl plugin --profile web install
    """
    from dshctl.cli.common import check_format

    check_format(fmt)
    _st, installer = _installer(ctx, home, profile, offline=offline,
                                limits=plugin_run.limits(max_package_mb, max_files, max_file_mb,
                                                         max_packument_mb))
    with _progress() as progress:
        installer.opts.progress = progress
        outcome = installer.install()
    _summary(outcome, fmt)


def list_(ctx: typer.Context, fmt: FormatOpt = "text",
          home: HomeOpt = None, profile: ProfileOpt = None,
          depth: Annotated[int, typer.Option(
              "--depth", min=0, max=1000,
              help="Show npm dependencies this many levels below each package (as pnpm list "
                   "--depth; 0: none).")] = 0) -> None:
    """Bundles in layer order, then plain dependencies.

    Example: dshctl plugin list --depth 2
    """
    from dshctl.bundles.query import dependency_trees, list_packages
    from dshctl.cli.common import check_format, print_json

    check_format(fmt)
    st = effective(ctx, home, profile)
    rows = list_packages(st.home, st.profile)
    trees = dependency_trees(st.home, st.profile, depth) if depth else {}
    for r in rows:
        if r.problem:
            sys.stderr.write(f"dshctl: warning: {r.problem}; run `dshctl plugin --profile "
                             f"{st.profile} install` to resolve its npm dependencies again\n")
    if fmt == "json":
        print_json({"profile": st.profile, "packages": [
            {**r.to_dict(), **({"dependencies": trees[r.name].get("dependencies", [])}
                               if r.name in trees else {})} for r in rows]})
        return
    if depth:  # pnpm's tree: each package, its npm dependencies below it
        from dshctl.cli.plugin_output import print_trees
        from dshctl.core.compose.profile import profile_dir

        print_trees(f"{st.profile} {profile_dir(st.home, st.profile)}",
                    [trees.get(r.name) or {"name": r.name, "version": r.version or (
                        "(template)" if r.template else None)} for r in rows])
        return
    out = []
    for r in rows:
        layer = str(r.position) if r.position else "plain"
        source = "template" if r.template else (r.source or r.spec or "-")
        state = "" if r.installed or r.template else " (not installed)"
        out.append([layer, r.name + state, r.version or "-", (r.commit or "-")[:12], source])
    print_table(["layer", "name", "version", "commit", "source"], out)


def why(ctx: typer.Context, name: Annotated[str, typer.Argument(help="Package name.")],
        fmt: FormatOpt = "text", home: HomeOpt = None, profile: ProfileOpt = None) -> None:
    """Why a package is part of the profile.

    Example: dshctl plugin why dsh-hello
    """
    from dshctl.bundles.query import why as why_
    from dshctl.cli.common import check_format, print_json

    check_format(fmt)
    st = effective(ctx, home, profile)
    data = why_(st.home, st.profile, name)
    if fmt == "json":
        print_json(data)
        return
    own = [r for r in data["reasons"] if not r.startswith("npm dependency of ")]
    if own:
        sys.stdout.write(f"{name} in profile {st.profile}:\n")
        for reason in own:
            sys.stdout.write(f"  {reason}\n")
    if data["npm"]:  # through npm dependencies: the chains from each bundle, as pnpm prints them
        from dshctl.cli.plugin_output import print_trees

        if own:
            sys.stdout.write("\n")
        print_trees(f"{st.profile} {data['directory']}", data["npm"])


def verify(ctx: typer.Context, fmt: FormatOpt = "text",
           home: HomeOpt = None, profile: ProfileOpt = None) -> None:
    """Check installed packages against the lock; exit 1 if any file was modified.

    Example: dshctl plugin verify
    """
    from dshctl.bundles.query import verify as verify_
    from dshctl.cli.common import check_format, print_json

    check_format(fmt)
    st = effective(ctx, home, profile)
    results = verify_(st.home, st.profile)
    bad = [r for r in results if r.status != "ok"]
    if fmt == "json":
        print_json({"profile": st.profile, "ok": not bad, "packages": [r.to_dict() for r in results]})
    else:
        for r in results:
            sys.stdout.write(f"{r.status:8} {r.name}\n")
            for kind, paths in r.files.items():
                for path in paths:
                    sys.stdout.write(f"           {kind}: {path}\n")
        sys.stdout.write(f"{len(results) - len(bad)} ok, {len(bad)} not as locked\n")
    if bad:
        raise typer.Exit(1)
