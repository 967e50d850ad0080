"""What an update changes in the composed profile, shown before it is applied.

The profile is composed twice with core.compose - once as installed, once with each updated
bundle's layer read from its new tree in the store - and the two row lists are diffed with
core.diff. When the current profile cannot be composed (e.g. a layer is already broken), the
fallback compares the two patch files entry by entry.
"""
from __future__ import annotations

from pathlib import Path

from dshctl.bundles.outcome import Change
from dshctl.errors import DshctlError


def update_preview(home: Path, profile: str, changes: list[Change]) -> dict:
    """``{"kind": "composed"|"patch", "changes": [...]}`` for the changes that move a bundle."""
    moving = {c.name: c for c in changes if c.action == "updated" and c.bundle and c.stored_path}
    if not moving:
        return {"kind": "composed", "changes": []}
    try:
        return {"kind": "composed", "changes": _composed_diff(home, profile, moving)}
    except DshctlError:
        return {"kind": "patch", "changes": _patch_diff(home, profile, moving)}


def _new_layer(change: Change, old_layer):
    from dshctl.core.compose import layers as L
    from dshctl.core.compose.profile import _bundle_from  # same reading rules as the composer

    bundle = _bundle_from(change.name, change.stored_path, change.stored_path / "package.json")
    return L.Layer(old_layer.label, bundle.patch_path, old_layer.kind,
                   L.load_patch_file(bundle.patch_path, "overlay"))


def _composed_diff(home: Path, profile: str, moving: dict[str, Change]) -> list[dict]:
    from dshctl.core.compose import layers as L
    from dshctl.core.compose.composition import compose_layers
    from dshctl.core.compose.diff import diff_rows

    before = L.bundle_layers(home, profile) + L.user_layers(home, profile)
    after = [_new_layer(moving[layer.label], layer)
             if layer.kind == L.BUNDLE and layer.label in moving else layer for layer in before]
    diff = diff_rows(compose_layers(before, track=False).rows,
                     compose_layers(after, track=False).rows)
    return [c.to_dict() for c in diff.changes]


def _patch_diff(home: Path, profile: str, moving: dict[str, Change]) -> list[dict]:
    from dshctl.core.yaml.dialect import load_file
    from dshctl.core.yaml.nodes import to_plain
    from dshctl.core.compose.profile import _bundle_from, profile_dir

    out = []
    for name, change in moving.items():
        old_dir = profile_dir(home, profile) / "node_modules" / name
        old = _entries(lambda: load_file(_bundle_from(name, old_dir, old_dir / "package.json")
                                         .patch_path).value)
        new = _entries(lambda: load_file(_bundle_from(name, change.stored_path,
                                                      change.stored_path / "package.json")
                                         .patch_path).value)
        for key in sorted(set(old) | set(new)):
            if key not in new:
                out.append({"id": key, "changes": ["removed"], "detail": f"patch entry of {name}"})
            elif key not in old:
                out.append({"id": key, "changes": ["added"], "detail": f"patch entry of {name}"})
            elif to_plain(old[key]) != to_plain(new[key]):
                out.append({"id": key, "changes": ["changed"], "detail": f"patch entry of {name}"})
    return out


def _entries(load) -> dict:
    try:
        value = load()
    except DshctlError:
        return {}
    out = {}
    for i, entry in enumerate(value if isinstance(value, list) else []):
        if isinstance(entry, dict):
            key = str(entry.get("id") or f"insert#{i + 1}")
            out[key] = entry
    return out
