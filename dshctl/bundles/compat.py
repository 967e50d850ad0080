"""Which dsh APIs dshctl implements, and whether a bundle's declared ranges admit them.

This is the ONE place the implemented versions are declared (docs/bundles.md, "Compatibility").
"""
from __future__ import annotations

from typing import Any

from dshctl.bundles.semver import InvalidRange, Range, workspace_range
from dshctl.records import record

# The dsh release whose configuration model dshctl reproduces, and the Cordis it ships.
IMPLEMENTED_APIS: dict[str, str] = {
    "@deepseek-ai/dsh": "0.1.1-rc.2",
    "@deepseek-ai/cordis": "4.0.1",
    "@deepseek-ai/cordis-plugin-loader": "1.0.2",
}
DSH_VERSION = IMPLEMENTED_APIS["@deepseek-ai/dsh"]
_ANY = {"", "*", "x", "X", "latest"}


@record(frozen=True)
class Conflict:
    """A declared range that the implemented version does not satisfy."""

    field: str  # e.g. "peerDependencies.@deepseek-ai/dsh" or "engines.dsh"
    range: str
    version: str

    def describe(self) -> str:
        return f"{self.field} requires {self.range!r}, dshctl implements {self.version}"

    def to_dict(self) -> dict[str, str]:
        return {"field": self.field, "range": self.range, "version": self.version}


def _admits(spec: str, version: str) -> bool:
    """npm range semantics, with two documented exceptions: a wildcard admits every version
    (prereleases too, as pnpm's peer check does) and ``workspace:`` specs are resolved first."""
    spec = spec.strip()
    if spec.startswith("workspace:"):
        spec = workspace_range(spec, version)
    if spec in _ANY:
        return True
    try:
        return Range.parse(spec).test(version)
    except InvalidRange:
        return False


def check(manifest: dict[str, Any]) -> list[Conflict]:
    """Every ``@deepseek-ai/*`` peer range and ``engines.dsh`` range the implemented APIs fail.

    Peers on ``@deepseek-ai/*`` packages dshctl does not implement are not judged: they are bundles or
    libraries the profile installs itself, not host APIs.
    """
    conflicts = []
    peers = manifest.get("peerDependencies")
    if isinstance(peers, dict):
        for name, spec in peers.items():
            version = IMPLEMENTED_APIS.get(name)
            if version and isinstance(spec, str) and not _admits(spec, version):
                conflicts.append(Conflict(f"peerDependencies.{name}", spec, version))
    engines = manifest.get("engines")
    if isinstance(engines, dict) and isinstance(engines.get("dsh"), str):
        if not _admits(engines["dsh"], DSH_VERSION):
            conflicts.append(Conflict("engines.dsh", engines["dsh"], DSH_VERSION))
    return conflicts
