"""`dshctl plugin store verify|prune`: the package store shared by every profile (docs/bundles.md,
"The store"). The work is in bundles/store_admin.py."""
from __future__ import annotations

import sys

import typer
from typing_extensions import Annotated

from dshctl.cli.common import FormatOpt, HomeOpt, command_group, effective


def register(plugin_group: typer.Typer) -> None:
    group = command_group("Check and clean the package store shared by all profiles.")
    group.command("verify")(verify)
    group.command("prune")(prune)
    plugin_group.add_typer(group, name="store")


def verify(ctx: typer.Context, fmt: FormatOpt = "text", home: HomeOpt = None,
           repair: Annotated[bool, typer.Option(
               "--repair", help="Unpack a damaged npm tree again from its checked tarball, or "
                                "drop an entry that cannot be rebuilt (the next install fetches "
                                "it).")] = False) -> None:
    """Re-hash every store entry against its recorded integrity; exit 1 if any is corrupt.

    Example: dshctl plugin store verify
    """
    from dshctl.bundles.store_admin import verify as verify_
    from dshctl.cli.common import check_format, print_json

    check_format(fmt)
    st = effective(ctx, home)
    checks = verify_(st.home, repair=repair)
    bad = [c for c in checks if c.problems]
    if fmt == "json":
        print_json({"ok": not bad or all(c.repaired for c in bad),
                    "entries": [c.to_dict() for c in checks]})
    else:
        for c in bad:
            done = f" -> {c.repaired}" if c.repaired else ""
            sys.stdout.write(f"corrupt  {c.kind} {c.label} ({c.key[:20]}): "
                             f"{'; '.join(c.problems)}{done}\n")
        sys.stdout.write(f"{len(checks)} store entries checked, {len(bad)} corrupt"
                         + (", repaired" if bad and repair else "") + "\n")
        if bad and not repair:
            sys.stdout.write("repair: dshctl plugin store verify --repair, then dshctl plugin "
                             "install in each profile that uses them\n")
    if bad and not repair:
        raise typer.Exit(1)


def prune(ctx: typer.Context, fmt: FormatOpt = "text", home: HomeOpt = None,
          dry_run: Annotated[bool, typer.Option(
              "--dry-run", help="Show what would be removed; remove nothing.")] = False) -> None:
    """Remove store entries that no profile's lock refers to.

    Example: dshctl plugin store prune --dry-run
    """
    from dshctl.bundles.store_admin import prune as prune_
    from dshctl.cli.common import check_format, print_json

    check_format(fmt)
    st = effective(ctx, home)
    result = prune_(st.home, dry_run=dry_run)
    if fmt == "json":
        print_json({**result.to_dict(), "dryRun": dry_run})
        return
    verb = "would remove" if dry_run else "removed"
    for label in result.removed:
        sys.stdout.write(f"{verb} {label}\n")
    sys.stdout.write(f"{verb} {len(result.removed)} store entries "
                     f"({result.bytes_freed / 1024:.0f} KiB), kept {result.kept}\n")
