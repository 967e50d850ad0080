"""What a bundle operation is asked (``Options``) and what it did (``Outcome`` of ``Change``s): the
installer's request and result, rendered by ``dshctl plugin`` and previewed by ``update --dry-run``."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from dshctl.bundles.limits import Limits
from dshctl.records import field, record


class TransferProgress(str):
    """A progress message about bytes moving (a git fetch's size and rate): worth a terminal's
    live status line, noise in piped output, which leaves it out."""

    is_transfer = True  # what the CLI checks, without importing this module


@record
class Options:
    offline: bool = False
    dry_run: bool = False
    force: bool = False
    allow_plain: bool = False
    fault_at: str | None = None
    limits: Limits = field(default_factory=Limits)
    progress: Callable[[str], None] | None = None
    cwd: Path | None = None  # relative local specs are anchored here


@record
class Change:
    name: str
    action: str  # added | updated | unchanged | removed | installed
    version: str | None = None
    commit: str | None = None
    old_commit: str | None = None
    bundle: bool = True
    position: int | None = None  # 1-based place in dsh.profile.bundles (layer order)
    forced: bool = False
    conflicts: list[dict] = field(default_factory=list)
    stored_path: Path | None = None  # the new tree in the store (for update previews)
    npm_packages: int = 0  # npm dependencies installed with it (removed with it, for remove)

    def to_dict(self) -> dict:
        return {"name": self.name, "action": self.action, "version": self.version,
                "commit": self.commit, "oldCommit": self.old_commit, "bundle": self.bundle,
                "position": self.position, "forced": self.forced, "conflicts": self.conflicts,
                "npmPackages": self.npm_packages}


@record
class Outcome:
    profile: str
    directory: Path
    changes: list[Change]
    warnings: list[str]
    initialized: bool = False
    dry_run: bool = False
    notes: list[str] = field(default_factory=list)  # e.g. optional npm packages skipped
    scripts: list[str] = field(default_factory=list)  # install scripts not run, and how to

    @property
    def changed(self) -> bool:
        return any(c.action != "unchanged" for c in self.changes)

    def to_dict(self) -> dict:
        return {"profile": self.profile, "directory": str(self.directory),
                "initialized": self.initialized, "dryRun": self.dry_run,
                "changes": [c.to_dict() for c in self.changes], "warnings": self.warnings,
                "notes": self.notes, "installScriptsNotRun": self.scripts}
