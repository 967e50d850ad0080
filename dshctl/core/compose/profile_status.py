"""Profile housekeeping: the health of every profile in a home (``profile list``) and ``profile init``."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

from dshctl.core import fsutil
from dshctl.core.compose.layers import HOME_LAYER, PROFILE_LAYER, load_patch_file
from dshctl.core.compose.profile import (
    HOST_BASE_BUNDLE, USER_LAYER_TEMPLATE, check_profile_name, list_profiles, manifest_bundles,
    new_manifest, profile_dir, read_manifest, resolve_bundle,
)
from dshctl.errors import DshctlError, Loc
from dshctl.core.yaml.jsvalue import json_dumps

# dsh's PROFILE_TEMPLATES, plus dshctl's own host template (the default for `profile init`).
TEMPLATES: dict[str, list[str]] = {
    "host": [HOST_BASE_BUNDLE],
    "web": ["@deepseek-ai/dsh-base", "@deepseek-ai/dsh-web-app"],
    "headless": ["@deepseek-ai/dsh-base", "@deepseek-ai/dsh-headless"],
}
DEFAULT_TEMPLATE = "host"
PNPM_WORKSPACE = "packages:\n  - .\nnodeLinker: hoisted\nautoInstallPeers: false\n"


@dataclass
class LayerStatus:
    kind: str
    label: str
    path: str
    ok: bool
    error: str | None = None


@dataclass
class ProfileStatus:
    name: str
    bundles: int
    layers: list[LayerStatus] = field(default_factory=list)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and all(layer.ok for layer in self.layers)

    def to_dict(self) -> dict:
        return {**asdict(self), "ok": self.ok}


def _check(kind: str, label: str, path: Path, file_label: str, optional: bool) -> LayerStatus | None:
    try:
        patches = load_patch_file(path, file_label, optional=optional)
    except DshctlError as exc:
        return LayerStatus(kind, label, str(path), False, str(exc))
    if patches is None:
        return None
    return LayerStatus(kind, label, str(path), True)


def profile_status(home: Path, name: str, *, bundle_roots: Sequence[Path] = ()) -> ProfileStatus:
    directory = profile_dir(home, name)
    manifest_path = directory / "package.json"
    try:
        bundles = manifest_bundles(read_manifest(manifest_path), manifest_path)
    except DshctlError as exc:
        return ProfileStatus(name, 0, error=str(exc))
    status = ProfileStatus(name, len(bundles))
    for bundle_name in bundles:
        try:
            bundle = resolve_bundle(bundle_name, directory, profile=name, bundle_roots=bundle_roots)
        except DshctlError as exc:
            status.layers.append(LayerStatus("bundle", bundle_name, "", False, str(exc)))
            continue
        status.layers.append(_check("bundle", bundle_name, bundle.patch_path, "overlay", False))
    for kind, path, label in (("profile", directory / PROFILE_LAYER, "overlay"),
                              ("home", Path(home) / HOME_LAYER, "patches")):
        layer = _check(kind, str(path), path, label, True)
        if layer is not None:
            status.layers.append(layer)
    return status


def home_status(home: Path, *, bundle_roots: Sequence[Path] = ()) -> list[ProfileStatus]:
    return [profile_status(home, name, bundle_roots=bundle_roots) for name in list_profiles(home)]


@dataclass
class Created:
    directory: Path
    written: list[Path]
    missing_bundles: list[str] = field(default_factory=list)  # listed, but not resolvable yet


def init_profile(home: Path, name: str, *, template: str | None = None) -> Created:
    """Create ``profiles/<name>/``; each file only when missing, as dsh does. ``template`` is a
    template name (host, web, headless) or an existing profile whose manifest and layer are copied."""
    check_profile_name(name)
    directory = profile_dir(home, name)
    if (directory / "package.json").exists():
        raise DshctlError(f"profile {json.dumps(name)} already exists", loc=Loc(str(directory)),
                          hint="choose another name, or edit its package.json")
    files = _template_files(home, name, template or DEFAULT_TEMPLATE)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    with fsutil.file_lock(fsutil.home_lock_path(home, f"init-{name}.lock"), what=f"profile {name}"):
        for filename, text in files.items():
            target = directory / filename
            if not target.exists():
                fsutil.atomic_write(target, text)
                written.append(target)
    return Created(directory, written, _unresolved_bundles(directory, name))


def _unresolved_bundles(directory: Path, name: str) -> list[str]:
    """Bundles the new manifest lists that do not resolve yet (a `--from` copy has no node_modules)."""
    manifest_path = directory / "package.json"
    missing = []
    for bundle in manifest_bundles(read_manifest(manifest_path), manifest_path):
        try:
            resolve_bundle(bundle, directory, profile=name)
        except DshctlError:
            missing.append(bundle)
    return missing


def _template_files(home: Path, name: str, template: str) -> dict[str, str]:
    source = profile_dir(home, template)
    manifest_path = source / "package.json"
    if not manifest_path.is_file() and template in TEMPLATES:  # an existing profile wins
        return {"package.json": new_manifest(name, TEMPLATES[template]),
                PROFILE_LAYER: USER_LAYER_TEMPLATE, "pnpm-workspace.yaml": PNPM_WORKSPACE}
    if not manifest_path.is_file():
        raise DshctlError(f"no template or profile named {json.dumps(template)}",
                          loc=Loc(str(manifest_path)),
                          hint="use one of: " + ", ".join(TEMPLATES) + ", or an existing profile")
    manifest = read_manifest(manifest_path)
    copied = json.loads(json.dumps(manifest, default=str))
    copied["name"] = f"dsh-profile-{name}"
    files = {"package.json": json_dumps(copied, indent=2) + "\n"}
    # The lock lets `dshctl plugin --profile <name> install` re-create the same bundles (offline
    # when their commits are in the store).
    for extra in (PROFILE_LAYER, "pnpm-workspace.yaml", "dshctl.lock.json"):
        if (source / extra).is_file():
            files[extra] = (source / extra).read_text(encoding="utf-8")
    files.setdefault(PROFILE_LAYER, USER_LAYER_TEMPLATE)
    return files
