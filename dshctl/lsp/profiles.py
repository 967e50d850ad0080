"""The profile a document belongs to, and its composition with the editor's buffer in place.

A file at ``<home>/profiles/<p>/…`` (the profile layer, or a bundle's patch file under the profile's
``node_modules``) belongs to profile ``p``; the home layer ``<home>/cordis.patch.yml`` to the profile
the client names (``initializationOptions.profile``), else to the home's only profile. The buffer
replaces its file's layer, so hover and completion follow unsaved edits; a buffer that does not
parse leaves the layer as it is on disk.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from dshctl.core.compose import layers as L
from dshctl.core.compose.composition import Composition, Provenance, compose_layers, iter_rows
from dshctl.core.compose.profile import list_profiles, profile_dir
from dshctl.errors import DshctlError

BUILTIN_NAMES = ("cordis:group", "cordis:include")


@dataclass
class ProfileView:
    """One document seen from its profile: the composition, and which layer the document is."""

    comp: Composition
    layer_index: int | None  # the document's layer in ``comp.layers`` (None: not a layer of it)

    @property
    def layer(self) -> L.Layer | None:
        return None if self.layer_index is None else self.comp.layers[self.layer_index]


def profile_of(path: Path, preferred: str | None = None) -> tuple[Path, str] | None:
    """(home, profile) for a file, or None when it belongs to no profile of a dsh home."""
    path = Path(os.path.abspath(path))
    for directory in path.parents:
        if directory.parent.name == "profiles" and (directory / "package.json").is_file():
            return directory.parent.parent, directory.name
    home = path.parent
    if path.name == L.HOME_LAYER and (home / "profiles").is_dir():
        names = list_profiles(home)
        if preferred in names:
            return home, preferred
        if len(names) == 1:
            return home, names[0]
    return None


def view(path: Path, text: str | None, preferred: str | None = None) -> ProfileView | None:
    """The document's profile composed with ``text`` as its layer; None outside a profile, or when
    the profile does not compose (its own command, `dshctl profile dump`, says why)."""
    found = profile_of(path, preferred)
    if found is None:
        return None
    home, profile = found
    try:
        layers = L.bundle_layers(home, profile) + L.user_layers(home, profile)
    except DshctlError:
        return None
    index = _layer_of(layers, path)
    if index is not None and text is not None:
        layer = layers[index]
        try:
            patches = L.parse_patch_text(text, path, "overlay")
        except DshctlError:
            patches = layer.patches
        layers[index] = L.Layer(layer.label, layer.path, layer.kind, patches, layer.bundle_dir)
    try:
        result = compose_layers(layers)
    except DshctlError:
        return None
    comp = Composition(result.rows, result.warnings, layers,
                       Provenance(result.touches, result.sources, result.index), home, profile)
    return ProfileView(comp, index)


def _layer_of(layers: list[L.Layer], path: Path) -> int | None:
    wanted = os.path.realpath(path)
    for index, layer in enumerate(layers):
        if layer.path is not None and os.path.realpath(layer.path) == wanted:
            return index
    return None


def ids_below(pv: ProfileView) -> list[str]:
    """The row ids a patch in the document's layer can target: those the layers below it compose
    (every layer when the document is not one of them)."""
    layers = pv.comp.layers if pv.layer_index is None else pv.comp.layers[:pv.layer_index]
    rows = compose_layers(layers, track=False, touches=False).rows
    return _ids(rows)


def _ids(rows: list) -> list[str]:
    seen: dict[str, None] = {}
    for row, _ in iter_rows(rows):
        if isinstance(row.get("id"), str):
            seen.setdefault(row["id"], None)
    return list(seen)


def plugin_names(path: Path, pv: ProfileView | None) -> list[str]:
    """Plugin names a row can mount: the packages installed in ``node_modules`` from the document's
    directory upward (and from the profile's directory), the names the composition already mounts,
    and the Cordis built-ins."""
    starts = [Path(os.path.abspath(path)).parent]
    if pv is not None:
        starts.append(profile_dir(pv.comp.home, pv.comp.profile))
    names: dict[str, None] = {}
    for start in starts:
        for directory in (start, *start.parents):
            for name in _packages_in(directory / "node_modules"):
                names.setdefault(name, None)
    if pv is not None:
        for row, _ in iter_rows(pv.comp.rows):
            if isinstance(row.get("name"), str):
                names.setdefault(row["name"], None)
    for name in BUILTIN_NAMES:
        names.setdefault(name, None)
    return list(names)


def _packages_in(node_modules: Path) -> list[str]:
    try:
        entries = sorted(os.scandir(node_modules), key=lambda e: e.name)
    except OSError:
        return []
    out = []
    for entry in entries:
        if entry.name.startswith("."):
            continue
        if entry.name.startswith("@"):
            try:
                out += [f"{entry.name}/{sub.name}" for sub in sorted(os.scandir(entry.path), key=lambda e: e.name)
                        if (Path(sub.path) / "package.json").is_file()]
            except OSError:
                continue
        elif (Path(entry.path) / "package.json").is_file():
            out.append(entry.name)
    return out


def presets_for(settings_file: Path, preferred: str | None = None) -> list:
    """The presets a home's ``settings.yaml`` can name (``agent-presets.default``), as `dshctl preset
    list` finds them for the home's profile (the preferred one, the only one, else ``web``)."""
    from dshctl.core.presets import discover, resolve_roots

    home = Path(os.path.abspath(settings_file)).parent
    names = list_profiles(home)
    profile = preferred if preferred in names else names[0] if len(names) == 1 else "web"
    try:
        roots, _ = resolve_roots(home, profile)
        return [p for p in discover(roots).presets if p.shadowed_by is None]
    except (DshctlError, OSError):
        return []
