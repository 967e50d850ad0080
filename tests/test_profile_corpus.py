"""Real homes from public repositories (../shared/corpus) compose, or fail with dsh's error.

The official bundles (@deepseek-ai/dsh-base, …) are not installed here, so a profile that lists them
fails exactly as dsh fails without its installation; given stand-ins for the missing bundles (an empty
patch list each, in a bundle root) the user layers compose over them.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from dshctl.core.compose.composition import compose_profile
from dshctl.core.compose.profile import manifest_bundles, read_manifest
from dshctl.errors import DshctlError
from profile_helpers import make_bundle

CORPUS = Path("/work/shared/corpus")
HOMES = {
    "jn": (CORPUS / "JNNarrator__jn-deepseek-harness/custom/dsh-home", "web"),
    "mayf3": (CORPUS / "mayf3__dsh-config", "web"),
    "zhoupen9-web": (CORPUS / "zhoupen9__deepseek-harness-home", "web"),
    "zhoupen9-tui": (CORPUS / "zhoupen9__deepseek-harness-home", "tui"),
}


def _copy(tmp_path: Path, key: str) -> tuple[Path, str]:
    source, profile = HOMES[key]
    if not source.is_dir():
        pytest.fail(f"corpus home missing: {source}")
    home = tmp_path / "home"
    shutil.copytree(source, home)
    return home, profile


@pytest.mark.parametrize("key", sorted(HOMES))
def test_without_the_official_installation_the_first_bundle_is_unresolvable(tmp_path, key):
    home, profile = _copy(tmp_path, key)
    with pytest.raises(DshctlError) as exc:
        compose_profile(home, profile)
    assert exc.value.message.startswith('cannot resolve profile bundle "@deepseek-ai/dsh-base" from ')
    assert f"dshctl plugin --profile {profile} install" in exc.value.hint


@pytest.mark.parametrize("key", sorted(HOMES))
def test_user_layers_compose_over_stand_in_bundles(tmp_path, key):
    home, profile = _copy(tmp_path, key)
    manifest = home / "profiles" / profile / "package.json"
    roots = tmp_path / "roots"
    for name in manifest_bundles(read_manifest(manifest), manifest):
        make_bundle(roots, name, "[]\n")
    comp = compose_profile(home, profile, bundle_roots=[roots])
    kinds = [layer.kind for layer in comp.layers]
    assert kinds.count("bundle") == len(manifest_bundles(read_manifest(manifest), manifest))
    user = home / "profiles" / profile / "cordis.patch.yml"
    if user.exists():
        assert "profile" in kinds
    # Every row the user layer inserts is there; overrides of bundle rows warn "not found".
    for warning in comp.warnings:
        assert warning.message.startswith(("patch: entry", "patch insert: entry"))
    json.dumps([dict(r) for r in comp.rows], default=str)


def test_zhoupen9_web_inserts_and_disables(tmp_path):
    home, profile = _copy(tmp_path, "zhoupen9-web")
    roots = tmp_path / "roots"
    make_bundle(roots, "@deepseek-ai/dsh-base", "- insert: [{id: directory-picker, name: P}]\n")
    make_bundle(roots, "@deepseek-ai/dsh-web-app", "[]\n")
    comp = compose_profile(home, profile, bundle_roots=[roots])
    first = comp.rows[0]
    assert first["id"] == "directory-picker" and first["disabled"] is True
    ids = [r["id"] for r in comp.rows]
    assert {"directory-picker-browse", "font-inter-monaspace", "web-notify"} <= set(ids)
    assert comp.warnings == []


def test_jn_home_layer_is_an_empty_list_layer(tmp_path):
    home, profile = _copy(tmp_path, "jn")
    manifest = home / "profiles" / profile / "package.json"
    roots = tmp_path / "roots"
    for name in manifest_bundles(read_manifest(manifest), manifest):
        make_bundle(roots, name, "[]\n")
    comp = compose_profile(home, profile, bundle_roots=[roots])
    home_layers = [layer for layer in comp.layers if layer.kind == "home"]
    assert len(home_layers) == 1 and home_layers[0].patches == []
