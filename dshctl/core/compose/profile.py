"""Profiles in a dsh home: names, manifests and bundle resolution (dsh-config.md §2, §8).

Message texts follow dsh's (without its ``dsh: `` prefix; dshctl's CLI adds its own); where dsh talks
about its installation, dshctl talks about its bundle roots (``dshctl/shipped/bundles`` plus any the
caller names).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

from dshctl.errors import DshctlError, Loc, ParseError
from dshctl.records import record

SHIPPED_BUNDLES = Path(__file__).resolve().parents[2] / "shipped" / "bundles"
RESERVED_NAMES = frozenset({".", "..", "node_modules"})
MAX_NAME_BYTES = 255  # NAME_MAX of every common file system
HOST_BASE_BUNDLE = "@dshctl/host-base"


@record(frozen=True)
class Bundle:
    """A resolved bundle package: where it lives and which patch file it declares."""

    name: str
    directory: Path
    manifest_path: Path
    patch_path: Path
    python_module: str | None = None  # "dsh": {"python": ...}, for dshctl's Python host


def check_profile_name(name: str) -> str:
    """dsh's name rule: not empty, no ``/`` or ``\\``, not ``.``, ``..`` or ``node_modules``."""
    if not name or "/" in name or "\\" in name or "\0" in name or name in RESERVED_NAMES:
        raise DshctlError(f"invalid profile name {json.dumps(name)}",
                          hint="a profile name is one directory name, e.g. web or work; "
                               "'.', '..' and 'node_modules' are reserved")
    if len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        raise DshctlError(f"invalid profile name {json.dumps(name[:40])}…: longer than {MAX_NAME_BYTES} bytes",
                          hint="a profile name is one directory name, and file systems allow 255 bytes")
    return name


def profiles_root(home: Path) -> Path:
    return Path(home) / "profiles"


def profile_dir(home: Path, name: str) -> Path:
    """``$DSH_HOME/profiles/<name>`` after checking the name."""
    return profiles_root(home) / check_profile_name(name)


def list_profiles(home: Path) -> list[str]:
    """Profile directories under the home that hold a manifest, sorted."""
    root = profiles_root(home)
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir()
                  if p.name not in RESERVED_NAMES and (p / "package.json").is_file())


def read_manifest(path: Path) -> dict:
    """A ``package.json`` as a mapping with positions; dsh's errors for unreadable and non-object files.

    A leading BOM (which dsh's ``JSON.parse`` rejects) is tolerated here; ``dshctl lint`` reports it.
    """
    from dshctl.core.yaml.dialect import load_json, read_text  # ruamel: only when a file is read

    try:
        text = read_text(path)
    except ParseError as exc:
        raise DshctlError(f"failed to read profile manifest {path}: {exc.message}", loc=Loc(str(path)),
                          hint="check that the file exists and is readable") from None
    doc = load_json(text, path)
    if not isinstance(doc.value, dict):
        raise DshctlError(f"profile manifest {path} must hold a JSON object", loc=doc.loc,
                          hint='write {"name": ..., "dsh": {"profile": {"bundles": [...]}}}')
    return doc.value


def _dig(value: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def manifest_bundles(manifest: dict, path: Path) -> list[str]:
    """``dsh.profile.bundles``; missing means no bundle layers."""
    bundles = _dig(manifest, "dsh", "profile", "bundles")
    if bundles is None:
        return []
    profile = _dig(manifest, "dsh", "profile")
    loc = profile.loc_of("bundles") if hasattr(profile, "loc_of") else Loc(str(path))
    if not isinstance(bundles, list) or not all(isinstance(b, str) and b for b in bundles):
        raise DshctlError(f"dsh.profile.bundles in {path} must be a list of package names", loc=loc,
                          hint='e.g. "bundles": ["@dshctl/host-base"]')
    return list(bundles)


def bundle_candidates(name: str, start: Path, roots: Sequence[Path]) -> list[Path]:
    """Where ``name`` is looked for, in order (the first holding a package.json wins)."""
    return _candidates(name, start, [*roots, SHIPPED_BUNDLES])


def _candidates(name: str, start: Path, roots: Sequence[Path]) -> list[Path]:
    # Node's lookup from the profile directory: <dir>/node_modules/<name>, then each parent's.
    out = [d / "node_modules" / name for d in (start, *start.parents)]
    out += [Path(r) / name for r in roots]
    return out


def resolve_bundle(name: str, profile_directory: Path, *, profile: str = "",
                   bundle_roots: Sequence[Path] = ()) -> Bundle:
    """Find bundle ``name`` for a profile and read its ``dsh.bundle.patch``."""
    roots = [*bundle_roots, SHIPPED_BUNDLES]
    for candidate in _candidates(name, Path(profile_directory), roots):
        manifest_path = candidate / "package.json"
        if manifest_path.is_file():
            return _bundle_from(name, candidate, manifest_path)
    shown = ", ".join(str(r) for r in roots)
    raise DshctlError(
        f"cannot resolve profile bundle {json.dumps(name)} from the dshctl bundle roots ({shown}) "
        f"or {profile_directory}",
        loc=Loc(str(Path(profile_directory) / "package.json")),
        hint=f"run 'dshctl plugin --profile {profile or '<p>'} install' if its dependency is not "
             "installed, or pass the directory holding it with --bundle-root")


def _bundle_from(name: str, directory: Path, manifest_path: Path) -> Bundle:
    try:
        manifest = read_manifest(manifest_path)
    except DshctlError as exc:
        raise DshctlError(f"profile bundle {json.dumps(name)}: {exc.message}", loc=exc.loc,
                          hint=exc.hint) from None
    patch = _dig(manifest, "dsh", "bundle", "patch")
    if not isinstance(patch, str) or not patch:
        bundle = _dig(manifest, "dsh", "bundle")
        loc = bundle.loc if hasattr(bundle, "loc") else getattr(manifest, "loc", None)
        raise DshctlError(f"profile bundle {json.dumps(name)} declares no dsh.bundle in its package.json",
                          loc=loc or Loc(str(manifest_path)),
                          hint='a bundle needs "dsh": {"bundle": {"patch": "cordis.patch.yml"}}; '
                               "remove plain packages from dsh.profile.bundles")
    python = _dig(manifest, "dsh", "python")
    return Bundle(name, directory, manifest_path, directory / patch,
                  python if isinstance(python, str) else None)


def new_manifest(name: str, bundles: Sequence[str]) -> str:
    """The manifest dsh writes for a new profile: 2-space JSON plus a trailing newline."""
    data = {"name": f"dsh-profile-{name}", "private": True, "dependencies": {},
            "dsh": {"profile": {"bundles": list(bundles)}}}
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


USER_LAYER_TEMPLATE = (
    "# Your patches to this profile's composition. Each item overrides a row by id\n"
    "# (- id: x / disabled: true) or inserts rows (- insert: [...]); see docs/compose.md.\n"
    "# This file is yours: dsh and dshctl never rewrite it except when you ask them to.\n"
    "[]\n"
)
