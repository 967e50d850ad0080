"""The patch layers of a profile, in dsh's order, with dsh's file-shape rules (dsh-config.md §6).

1. each bundle's ``dsh.bundle.patch``, in ``dsh.profile.bundles`` order   (label ``overlay``)
2. the profile user layer ``profiles/<p>/cordis.patch.yml``   (label ``overlay`` at boot, ``patches`` on reload)
3. the home user layer ``$DSH_HOME/cordis.patch.yml``                      (label ``patches``)
4. each ``--patch`` file, in argv order                                    (label ``overlay``)

A missing user layer (2, 3) is no layer; a missing bundle or ``--patch`` file is an error. An empty,
comments-only or non-list file, or an entry that is not a mapping, is an error in every layer.
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Sequence

from dshctl.core.yaml.dialect import load_yaml, read_text
from dshctl.core.yaml.verdict import js_error_text
from dshctl.core.compose.profile import (
    manifest_bundles, profile_dir, read_manifest, resolve_bundle,
)
from dshctl.errors import DshctlError, Loc, ParseError
from dshctl.records import field, record

PROFILE_LAYER = "cordis.patch.yml"
HOME_LAYER = "cordis.patch.yml"

# kinds
BUNDLE, PROFILE, HOME, PATCH, LAUNCHER = "bundle", "profile", "home", "patch", "launcher"


@record
class Layer:
    """One layer: ``label`` is what dsh prints (bundle name, or absolute file path)."""

    label: str
    path: Path | None
    kind: str
    patches: list = field(default_factory=list)
    bundle_dir: Path | None = None  # for a bundle layer: the package directory it resolved to

    def to_dict(self) -> dict:
        return {"label": self.label, "path": str(self.path) if self.path else None,
                "kind": self.kind, "patches": len(self.patches)}


def load_patch_file(path: Path, label: str, *, optional: bool = False) -> list | None:
    """The patch list in ``path``; ``label`` is ``overlay`` or ``patches`` as in dsh's messages.

    Returns None for a missing optional file (no layer). Parsed lists are cached in memory by
    (path, mtime, size, inode) - callers must not modify them (``apply_patches`` clones its input).
    """
    stamp = _stamp(path)
    cached = _PARSED.get(str(path))
    if stamp is not None and cached is not None and cached[0] == stamp and cached[1] == label:
        return cached[2]
    try:
        text = read_text(path)
    except ParseError as exc:
        missing = exc.message == "file not found"
        if missing and optional:
            return None
        raise DshctlError(f"failed to read {label} {path}: {node_read_error(exc.message, path)}",
                          loc=Loc(str(path)), hint=_read_hint(label, missing)) from None
    patches = parse_patch_text(text, path, label)
    if stamp is not None and time.time_ns() - stamp[0] > RACY_NS:
        _PARSED[str(path)] = (stamp, label, patches)
    return patches


# Like git's "racily clean" rule: a file younger than this may be rewritten within the same timestamp
# tick with the same size, so it is not cached.
RACY_NS = 2_000_000_000
_PARSED: dict[str, tuple] = {}


def _stamp(path: Path) -> tuple | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def parse_patch_text(text: str, path: Path, label: str) -> list:
    """The shape checks of ``load_patch_file`` on text already read."""
    try:
        doc = load_yaml(text, path)
    except ParseError as exc:
        raise DshctlError(f"failed to parse {label} {path}: {js_error_text(exc)}", loc=exc.loc,
                          hint=exc.hint or "fix the YAML syntax at that position") from None
    if doc.empty or not isinstance(doc.value, list):
        raise DshctlError(f"{label} {path} must be a top-level YAML array of loader patch entries",
                          loc=doc.loc if not doc.empty else Loc(str(path), 1, 1),
                          hint="write the patches as a YAML list; an empty layer is '[]'")
    for number, entry in enumerate(doc.value, start=1):
        if not isinstance(entry, dict):
            raise DshctlError(
                f"{label} entry {number} in {path} must be a mapping (a loader patch entry)",
                loc=doc.value.loc_of(number - 1),
                hint="each item is '- id: <row>' with keys to set, or '- insert: [rows]'")
    return doc.value


# What Node's ``String(error)`` says when ``readFileSync`` fails, as dsh quotes it after "failed to read
# <label> <file>: " (tests/dsh/test_dump_vs_dsh.py compares them with the real dsh).
_NODE_READ_ERRORS = {
    "file not found": "Error: ENOENT: no such file or directory, open '{path}'",
    "is a directory, not a file": "Error: EISDIR: illegal operation on a directory, read",
    "cannot read: Permission denied": "Error: EACCES: permission denied, open '{path}'",
}


def node_read_error(reason: str, path: Path) -> str:
    """dshctl's read failure as Node words it; a failure Node has no fixed text for stays dshctl's."""
    template = _NODE_READ_ERRORS.get(reason)
    return template.format(path=path) if template else reason


def _read_hint(label: str, missing: bool) -> str:
    if missing and label == "overlay":
        return "check the path; a bundle's patch file must be listed in its package's \"files\""
    return "check that the file exists and is readable"


def bundle_layers(home: Path, profile: str, *, bundle_roots: Sequence[Path] = ()) -> list[Layer]:
    """Layer 1: one layer per ``dsh.profile.bundles`` entry."""
    directory = profile_dir(home, profile)
    manifest_path = directory / "package.json"
    if not manifest_path.exists():
        raise DshctlError(
            f"profile \"{profile}\" does not exist; create it with "
            f"'dshctl plugin --profile {profile} add <package>'",
            loc=Loc(str(manifest_path)), hint=f"or run: dshctl profile init {profile}")
    manifest = read_manifest(manifest_path)
    layers = []
    for name in manifest_bundles(manifest, manifest_path):
        bundle = resolve_bundle(name, directory, profile=profile, bundle_roots=bundle_roots)
        patches = load_patch_file(bundle.patch_path, "overlay")
        layers.append(Layer(name, bundle.patch_path, BUNDLE, patches, bundle.directory))
    return layers


def user_layers(home: Path, profile: str, *, reload: bool = False) -> list[Layer]:
    """Layers 2 and 3, each only when its file exists.

    dsh names the profile layer ``overlay`` in its messages at boot and ``patches`` when a live reload
    re-reads it (dsh-config.md §6); ``reload=True`` gives the reload texts.
    """
    out = []
    profile_file = profile_dir(home, profile) / PROFILE_LAYER
    home_file = Path(home) / HOME_LAYER
    profile_label = "patches" if reload else "overlay"
    for path, kind, label in ((profile_file, PROFILE, profile_label), (home_file, HOME, "patches")):
        patches = load_patch_file(path, label, optional=True)
        if patches is not None:
            out.append(Layer(str(_absolute(path)), path, kind, patches))
    return out


def patch_layers(paths: Sequence[Path]) -> list[Layer]:
    """Layer 4: ``--patch`` files, relative to the current directory."""
    out = []
    for p in paths:
        path = _absolute(Path(p))
        out.append(Layer(str(path), path, PATCH, load_patch_file(path, "overlay")))
    return out


def _absolute(path: Path) -> Path:
    return Path(os.path.abspath(path))
