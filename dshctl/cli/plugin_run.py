"""The body of `dshctl plugin add` without typer: the typer command (cli/plugin_cmd.py) and the
fast path (cli/fastpath.py) both call ``add``; it imports neither typer, click nor rich (rich only
to draw on a terminal)."""
from __future__ import annotations

import os
from pathlib import Path

from dshctl.cli.plugin_output import progress, summary


def limits(max_package_mb: float, max_files: int, max_file_mb: float,
           max_packument_mb: float = 64):
    import math

    from dshctl.bundles.limits import MB, Limits
    from dshctl.errors import UsageError

    for flag, value in (("--max-package-mb", max_package_mb), ("--max-file-mb", max_file_mb),
                        ("--max-packument-mb", max_packument_mb)):
        if not math.isfinite(value):   # nan slips through a range check: no comparison holds
            raise UsageError(f"{flag} takes a number of megabytes, not {value}",
                             hint=f"for example {flag} 512")
    return Limits(total_bytes=int(max_package_mb * MB), files=max_files,
                  file_bytes=int(max_file_mb * MB), packument_bytes=int(max_packument_mb * MB))


def installer(state, **flags):
    from dshctl.bundles.install import Installer, Options

    return Installer(state.home, state.profile, Options(cwd=Path(os.getcwd()), **flags))


def add(state, *, specs: list[str], offline: bool, dry_run: bool, force: bool, allow_plain: bool,
        fmt: str, max_package_mb: float, max_files: int, max_file_mb: float,
        max_packument_mb: float = 64) -> int:
    """Add bundles from git sources (and their npm dependencies) to ``state.profile``."""
    from dshctl.cli.shared import check_format

    check_format(fmt)
    inst = installer(state, offline=offline, dry_run=dry_run, force=force, allow_plain=allow_plain,
                     limits=limits(max_package_mb, max_files, max_file_mb, max_packument_mb))
    with progress() as report:
        inst.opts.progress = report
        outcome = inst.add(list(specs))
    summary(outcome, fmt)
    return 0
