"""Build small dsh homes on disk for the profile tests."""
from __future__ import annotations

import json
from pathlib import Path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def make_bundle(root: Path, name: str, patch_text: str | None, *, patch_file: str = "cordis.patch.yml",
                declare: bool = True) -> Path:
    """A bundle package at ``root/<name>`` (``root`` is a node_modules dir or a bundle root)."""
    directory = root / name
    manifest = {"name": name, "version": "1.0.0"}
    if declare:
        manifest["dsh"] = {"bundle": {"patch": patch_file}}
    write(directory / "package.json", json.dumps(manifest, indent=2))
    if patch_text is not None:
        write(directory / patch_file, patch_text)
    return directory


def make_home(tmp: Path, *, bundles: dict[str, str] | None = None, profile_layer: str | None = None,
              home_layer: str | None = None, profile: str = "web") -> Path:
    """A home with one profile whose bundles are installed in its node_modules."""
    home = tmp / "home"
    pdir = home / "profiles" / profile
    bundles = bundles if bundles is not None else {"base": "- insert: [{id: a, name: A}]\n"}
    write(pdir / "package.json", json.dumps(
        {"name": f"dsh-profile-{profile}", "private": True, "dependencies": {},
         "dsh": {"profile": {"bundles": list(bundles)}}}, indent=2) + "\n")
    for name, text in bundles.items():
        make_bundle(pdir / "node_modules", name, text)
    if profile_layer is not None:
        write(pdir / "cordis.patch.yml", profile_layer)
    if home_layer is not None:
        write(home / "cordis.patch.yml", home_layer)
    return home
