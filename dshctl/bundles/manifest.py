"""The profile's ``package.json``: read and render it as dsh does, and dsh's reconcile rules.

dsh writes the manifest as 2-space JSON plus a trailing newline and keeps key order; so do we.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable

from dshctl.core.yaml.nodes import to_plain
from dshctl.core.compose.profile import HOST_BASE_BUNDLE, new_manifest
from dshctl.errors import DshctlError, Loc
from dshctl.core.yaml.jsvalue import json_dumps

# dshctl's own host base replaces dsh's @deepseek-ai/dsh-base template (docs/bundles.md).
DEFAULT_TEMPLATE_BUNDLES = (HOST_BASE_BUNDLE,)


def initial_manifest_text(profile: str) -> str:
    return new_manifest(profile, DEFAULT_TEMPLATE_BUNDLES)


def render(manifest: dict) -> str:
    return json_dumps(manifest, indent=2) + "\n"


def read(path: Path) -> dict:
    """The manifest as plain dicts in file order; errors name the file, line and column."""
    from dshctl.core.yaml.dialect import load_json, read_text

    doc = load_json(read_text(path), path)
    if not isinstance(doc.value, dict):
        raise DshctlError(f"profile manifest {path} must hold a JSON object", loc=Loc(str(path), 1, 1),
                          hint="restore the file or delete it to re-initialize the profile")
    return to_plain(doc.value)


def bundles_of(manifest: dict) -> list[str]:
    bundles = (manifest.get("dsh") or {}).get("profile", {}).get("bundles")
    return [b for b in bundles if isinstance(b, str)] if isinstance(bundles, list) else []


def dependencies_of(manifest: dict) -> dict[str, str]:
    deps = manifest.get("dependencies")
    return dict(deps) if isinstance(deps, dict) else {}


def set_dependency(manifest: dict, name: str, spec: str | None) -> None:
    """Add, replace or, with ``spec=None``, drop one dependency, as pnpm does: the keys end up
    sorted (by code point, as pnpm sorts them) and a ``dependencies`` left empty by a removal is
    deleted."""
    deps = manifest.get("dependencies")
    if not isinstance(deps, dict):
        deps = manifest["dependencies"] = {}
    if spec is None:
        deps.pop(name, None)
        if not deps:
            del manifest["dependencies"]
            return
    else:
        deps[name] = spec
    ordered = dict(sorted(deps.items()))
    deps.clear()
    deps.update(ordered)


def reconcile(manifest: dict, *, old_dependencies: Iterable[str],
              is_bundle: Callable[[str], bool], templates: Iterable[str] = DEFAULT_TEMPLATE_BUNDLES
              ) -> bool:
    """dsh's reconcile (dsh-config.md §9 step 4) on ``manifest`` in place; True when bundles changed.

    * each dependency, in key order, that is a bundle and not listed is appended;
    * a listed name is dropped only if it was or is a dependency and is no longer a bundle
      dependency; template bundles are never touched.
    """
    deps = dependencies_of(manifest)
    before = bundles_of(manifest)
    templates = set(templates)
    was_or_is = set(old_dependencies) | set(deps)
    kept = [b for b in before
            if b in templates or b not in was_or_is or (b in deps and is_bundle(b))]
    for name in deps:
        if name not in kept and is_bundle(name):
            kept.append(name)
    if kept == before:
        return False
    dsh = manifest.setdefault("dsh", {})
    if not isinstance(dsh, dict):
        raise DshctlError("the profile manifest's \"dsh\" key is not an object",
                          hint="make it an object: {\"profile\": {\"bundles\": [...]}}")
    dsh.setdefault("profile", {})["bundles"] = kept
    return True
