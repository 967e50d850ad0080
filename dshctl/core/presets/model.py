"""The values preset discovery produces: roots, presets, skipped entries, the roster."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dshctl.errors import DshctlError, Loc

# The id is the directory name (dsh-config.md §7). fullmatch, so "x\n" does not pass as "x".
PRESET_ID_RE = re.compile(r"[a-z0-9][a-z0-9-]*")
COMPOSITION_FILE = "agent.cordis.yml"
METADATA_FILE = "preset.yml"
TRUST_LEVELS = ("system", "user")
_SEP_COMPOSITION = os.sep + COMPOSITION_FILE


def is_preset_id(name: str) -> bool:
    return PRESET_ID_RE.fullmatch(name) is not None


_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")


def display_name(name: str) -> str:
    """A name safe to print on one line: undecodable bytes (surrogate escapes) and control characters
    (a newline in a directory name) become ``\\xNN``."""
    text = name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return _CONTROL_RE.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


@dataclass(frozen=True)
class Root:
    """One directory of presets. ``origin`` says where it came from: profile, cli, shipped or user."""

    path: Path
    trust: str = "user"
    origin: str = "profile"

    def to_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "trust": self.trust, "origin": self.origin}


@dataclass(frozen=True)
class MetadataProblem:
    message: str
    loc: Loc
    hint: str | None = None


@dataclass(frozen=True)
class Metadata:
    """``preset.yml`` after dsh's tolerance: only well-typed fields survive."""

    name: str | None = None
    description: str | None = None
    order: float | int | None = None
    problems: tuple[MetadataProblem, ...] = ()


@dataclass(frozen=True)
class Health:
    """``broken`` is dsh's exact reason text, or None for a healthy preset."""

    broken: str | None = None
    loc: Loc | None = None
    detail: str | None = None  # what dshctl knows beyond dsh's text (e.g. the byte limit)

    @property
    def ok(self) -> bool:
        return self.broken is None


@dataclass(eq=False)
class Preset:
    id: str
    dir_str: str  # a string: building 10,000 Path objects per scan costs more than the scan
    root: Root
    metadata: Metadata
    health: Health
    shadowed: list["Preset"] = field(default_factory=list)  # later copies this one hides
    shadowed_by: "Preset | None" = None

    @property
    def dir(self) -> Path:
        return Path(self.dir_str)

    @property
    def file(self) -> Path:
        return Path(self.dir_str, COMPOSITION_FILE)

    @property
    def file_str(self) -> str:
        """``str(self.file)`` without building a Path (10,000 of them per listing)."""
        return self.dir_str + _SEP_COMPOSITION

    @property
    def status(self) -> str:
        if self.shadowed_by is not None:
            return "shadowed"
        return "ok" if self.health.ok else "broken"

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "path": self.file_str,
            "dir": self.dir_str,
            "root": str(self.root.path),
            "trust": self.root.trust,
            "name": self.metadata.name,
            "description": self.metadata.description,
            "order": self.metadata.order,
            "status": self.status,
            "broken": self.health.broken,
            "brokenAt": str(self.health.loc) if self.health.loc else None,
            "shadowed": [p.file_str for p in self.shadowed],
            "shadowedBy": self.shadowed_by.file_str if self.shadowed_by else None,
        }


@dataclass(frozen=True)
class Skipped:
    """A root entry dsh silently skips, kept so lint can explain the surprising ones."""

    root: Root
    name: str  # printable (see display_name)
    path: Path
    reason: str
    notable: bool  # worth a lint warning (looks like a preset, or an unprintable name)
    hint: str | None = None


@dataclass
class Roster:
    roots: list[Root]
    presets: list[Preset]  # winners, roster order: roots in order, each root by order then id
    shadowed: list[Preset]  # copies that lost to an earlier root
    skipped: list[Skipped]
    root_errors: list[DshctlError]

    def find(self, preset_id: str) -> Preset | None:
        return next((p for p in self.presets if p.id == preset_id), None)

    def require(self, preset_id: str) -> Preset:
        """The winning preset, or dsh's not-found error listing what is available."""
        found = self.find(preset_id)
        if found is None:
            available = ", ".join(p.id for p in self.presets) or "none"
            raise DshctlError(f'agent-presets: preset "{preset_id}" not found (available: {available})',
                              hint="run `dshctl preset list` to see every root and preset")
        return found

    def raise_root_errors(self) -> None:
        """dsh fails a listing when a root cannot be read; so do the commands that list."""
        if self.root_errors:
            raise self.root_errors[0]

    def all_copies(self) -> list[Preset]:
        return self.presets + self.shadowed
