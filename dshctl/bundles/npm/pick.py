"""Which version of a packument a dependency spec selects: npm-pick-manifest's rules.

The ``latest`` dist-tag wins when it satisfies the range (and is not deprecated); otherwise the
highest satisfying version, non-deprecated ones first. A spec that names a dist-tag selects it.
``engines.node`` is not weighed (dshctl does not know which Node will run dsh). Specs that are not
registry ranges (``file:``, ``link:``, ``workspace:``, ``npm:`` aliases, git and tarball URLs) are
refused with a hint.
"""
from __future__ import annotations

import os
import sys

from dshctl.bundles.semver import InvalidRange, InvalidVersion, Range, Version

_NOT_REGISTRY = ("file:", "link:", "workspace:", "npm:", "git+", "git:", "github:", "gitlab:",
                 "bitbucket:", "http:", "https:", "portal:", "patch:", "catalog:")


class NoMatch(Exception):
    """One line: why no version was selected."""


def _node_platform() -> tuple[str, str]:
    os_name = {"linux": "linux", "darwin": "darwin", "win32": "win32"}.get(sys.platform, sys.platform)
    if hasattr(os, "uname"):  # what platform.machine() reads on POSIX, without importing it
        machine = os.uname().machine.lower()
    else:
        import platform

        machine = platform.machine().lower()
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64",
            "i686": "ia32", "i386": "ia32", "armv7l": "arm"}.get(machine, machine)
    return os_name, arch


PLATFORM = _node_platform()


def platform_problem(manifest: dict) -> str | None:
    """npm's ``os``/``cpu`` checks (``!x`` excludes); None when this platform is allowed."""
    for field, mine in (("os", PLATFORM[0]), ("cpu", PLATFORM[1])):
        wanted = manifest.get(field)
        if isinstance(wanted, str):
            wanted = [wanted]
        if not isinstance(wanted, list) or not wanted:
            continue
        allowed = [w for w in wanted if isinstance(w, str) and not w.startswith("!")]
        denied = [w[1:] for w in wanted if isinstance(w, str) and w.startswith("!")]
        if mine in denied or (allowed and mine not in allowed):
            return f"{field} {wanted} does not include this machine's {mine}"
    return None


def is_registry_spec(spec: str) -> bool:
    spec = spec.strip()
    return not (spec.startswith(_NOT_REGISTRY) or spec.startswith(("./", "../", "/", "~/"))
                or ("/" in spec and not spec.startswith("@")))


def pick(packument: dict, spec: str) -> dict:
    """The version manifest ``spec`` selects from ``packument``."""
    spec = spec.strip()
    if not is_registry_spec(spec):
        raise NoMatch(f"{spec!r} is not a registry version range (git, file and alias specs "
                      "are not installed from the registry)")
    versions: dict = packument["versions"]
    tags: dict = packument["dist-tags"]
    if spec in tags and spec not in ("", "*"):
        chosen = versions.get(tags[spec])
        if chosen is None:
            raise NoMatch(f"dist-tag {spec!r} points at {tags[spec]!r}, which is not published")
        return chosen
    try:
        rng = Range.parse(spec or "*")
    except InvalidRange:
        raise NoMatch(f"{spec!r} is not a valid version range or dist-tag") from None
    latest = tags.get("latest")
    if isinstance(latest, str) and latest in versions and rng.test(latest) \
            and not versions[latest].get("deprecated"):
        return versions[latest]
    best = None
    for text, manifest in versions.items():
        try:
            version = Version.parse(text)
        except InvalidVersion:
            continue
        if not rng.test(version):
            continue
        rank = (not manifest.get("deprecated"), version.key())
        if best is None or rank > best[0]:
            best = (rank, manifest)
    if best is None:
        published = sorted(versions, key=_safe_key)[-5:]
        raise NoMatch(f"no published version satisfies {spec!r} (newest: {', '.join(published) or 'none'})")
    return best[1]


def _safe_key(text: str) -> tuple:
    try:
        return (1, Version.parse(text).key())
    except InvalidVersion:
        return (0, text)
