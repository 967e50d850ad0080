"""Profiles and layers: dsh's order, its file-shape rules and its error texts (dsh-config.md §2, §6)."""
from __future__ import annotations

import json
import os
import time

import pytest

from dshctl.core.compose.composition import compose_profile
from dshctl.core.compose.profile import check_profile_name, profile_dir, read_manifest, resolve_bundle
from dshctl.errors import DshctlError
from profile_helpers import make_bundle, make_home, write


def ids(comp):
    return [r.get("id") for r in comp.rows]


# ---------------------------------------------------------------------------------------------
# names and manifests


@pytest.mark.parametrize("bad", ["", "a/b", "a\\b", ".", "..", "node_modules"])
def test_bad_profile_names(bad, tmp_path):
    with pytest.raises(DshctlError) as exc:
        profile_dir(tmp_path, bad)
    assert exc.value.message == f"invalid profile name {json.dumps(bad)}"


def test_good_profile_name():
    assert check_profile_name("work-2") == "work-2"


def test_manifest_must_be_an_object(tmp_path):
    path = write(tmp_path / "package.json", "[1, 2]\n")
    with pytest.raises(DshctlError) as exc:
        read_manifest(path)
    assert exc.value.message == f"profile manifest {path} must hold a JSON object"


def test_unreadable_manifest(tmp_path):
    path = tmp_path / "package.json"
    path.mkdir()
    with pytest.raises(DshctlError) as exc:
        read_manifest(path)
    assert exc.value.message.startswith(f"failed to read profile manifest {path}: ")


def test_invalid_json_manifest_names_the_position(tmp_path):
    path = write(tmp_path / "package.json", '{"name": "x",\n  "dsh": }\n')
    with pytest.raises(DshctlError) as exc:
        read_manifest(path)
    assert exc.value.loc.file == str(path) and exc.value.loc.line == 2


def test_missing_profile(tmp_path):
    (tmp_path / "profiles").mkdir()
    with pytest.raises(DshctlError) as exc:
        compose_profile(tmp_path, "nope")
    assert exc.value.message == ("profile \"nope\" does not exist; create it with "
                                 "'dshctl plugin --profile nope add <package>'")


def test_missing_bundles_key_means_no_bundle_layers(tmp_path):
    home = tmp_path / "home"
    write(home / "profiles/web/package.json", '{"name": "dsh-profile-web"}\n')
    comp = compose_profile(home, "web")
    assert comp.rows == [] and comp.layers == []


# ---------------------------------------------------------------------------------------------
# bundle resolution


def test_unresolvable_bundle(tmp_path):
    home = make_home(tmp_path, bundles={})
    pdir = home / "profiles/web"
    with pytest.raises(DshctlError) as exc:
        resolve_bundle("@x/missing", pdir, profile="web")
    assert exc.value.message.startswith('cannot resolve profile bundle "@x/missing" from ')
    assert "dshctl plugin --profile web install" in exc.value.hint


def test_bundle_without_dsh_bundle(tmp_path):
    home = make_home(tmp_path, bundles={})
    make_bundle(home / "profiles/web/node_modules", "plain", None, declare=False)
    with pytest.raises(DshctlError) as exc:
        resolve_bundle("plain", home / "profiles/web")
    assert exc.value.message == 'profile bundle "plain" declares no dsh.bundle in its package.json'


def test_bundle_resolves_from_the_profiles_fallback_and_from_extra_roots(tmp_path):
    home = make_home(tmp_path, bundles={})
    make_bundle(home / "profiles/node_modules", "shared", "[]\n")
    assert resolve_bundle("shared", home / "profiles/web").directory == home / "profiles/node_modules/shared"
    make_bundle(tmp_path / "roots", "@r/x", "[]\n")
    found = resolve_bundle("@r/x", home / "profiles/web", bundle_roots=[tmp_path / "roots"])
    assert found.directory == tmp_path / "roots/@r/x"


def test_profile_node_modules_win_over_shipped_bundles(tmp_path):
    home = make_home(tmp_path, bundles={"@dshctl/host-base": "- insert: [{id: mine, name: M}]\n"})
    assert ids(compose_profile(home, "web")) == ["mine"]


def test_shipped_host_base_bundle(tmp_path):
    home = tmp_path / "home"
    write(home / "profiles/p/package.json",
          json.dumps({"dsh": {"profile": {"bundles": ["@dshctl/host-base"]}}}))
    comp = compose_profile(home, "p")
    assert ids(comp) == ["logger", "timer", "http", "status-page", "tools", "agent-presets", "workspace",
                         "compaction-basic", "command-compact", "tool-result-pruner"]
    assert comp.rows[2]["config"] == {"host": "127.0.0.1", "port": 8787}
    assert [r.get("disabled") for r in comp.rows[-3:]] == [True, True, True]   # a bundle switches them on


# ---------------------------------------------------------------------------------------------
# layer order


def test_layer_order_and_labels(tmp_path):
    home = make_home(tmp_path, bundles={
        "one": "- insert: [{id: a, name: A, config: 1}]\n",
        "two": "- {id: a, config: 2}\n- insert: [{id: b, name: B}]\n"},
        profile_layer="- {id: a, config: 3}\n- {id: b, config: p}\n",
        home_layer="- {id: a, config: 4}\n")
    extra = write(tmp_path / "extra.yml", "- {id: b, config: x}\n")
    comp = compose_profile(home, "web", patches=[extra])
    assert [(r["id"], r["config"]) for r in comp.rows] == [("a", 4), ("b", "x")]
    assert [(layer.label, layer.kind) for layer in comp.layers] == [
        ("one", "bundle"), ("two", "bundle"),
        (str(home / "profiles/web/cordis.patch.yml"), "profile"),
        (str(home / "cordis.patch.yml"), "home"), (str(extra), "patch")]


def test_a_bundle_cannot_patch_a_row_a_later_bundle_inserts(tmp_path):
    home = make_home(tmp_path, bundles={"one": "- {id: late, x: 1}\n",
                                        "two": "- insert: [{id: late, name: L}]\n"})
    comp = compose_profile(home, "web")
    assert [(w.layer, w.message) for w in comp.warnings] == [("one", 'patch: entry "late" not found')]


def test_default_only_does_not_read_user_layers(tmp_path):
    home = make_home(tmp_path, profile_layer="{broken: [\n", home_layer="- {id: a, x: 1}\n")
    comp = compose_profile(home, "web", default_only=True)
    assert comp.rows == [{"id": "a", "name": "A"}]


def test_relative_patch_paths_are_from_the_current_directory(tmp_path, monkeypatch):
    home = make_home(tmp_path)
    write(tmp_path / "p.yml", "- {id: a, x: 1}\n")
    monkeypatch.chdir(tmp_path)
    comp = compose_profile(home, "web", patches=[os.path.join(".", "p.yml")])
    assert comp.rows[0]["x"] == 1 and comp.layers[-1].label == str(tmp_path / "p.yml")


# ---------------------------------------------------------------------------------------------
# file-shape rules, per layer


SHAPES = {
    "empty": ("", "must be a top-level YAML array of loader patch entries"),
    "comments": ("# nothing here\n", "must be a top-level YAML array of loader patch entries"),
    "mapping": ("id: a\n", "must be a top-level YAML array of loader patch entries"),
    "scalar-entry": ("- {id: a}\n- just text\n", "entry 2 in {file} must be a mapping (a loader patch entry)"),
    "bad-yaml": ("- {id: a\n", "failed to parse"),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_profile_layer_shapes(tmp_path, shape):
    text, expected = SHAPES[shape]
    home = make_home(tmp_path, profile_layer=text)
    file = home / "profiles/web/cordis.patch.yml"
    with pytest.raises(DshctlError) as exc:
        compose_profile(home, "web")
    message = exc.value.message
    assert expected.format(file=file) in message and str(file) in message
    assert message.startswith("overlay ") or message.startswith("failed to parse overlay ")
    assert exc.value.loc.file == str(file)


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_home_layer_shapes_use_the_patches_label(tmp_path, shape):
    text, expected = SHAPES[shape]
    home = make_home(tmp_path, home_layer=text)
    with pytest.raises(DshctlError) as exc:
        compose_profile(home, "web")
    assert exc.value.message.startswith(("patches ", "failed to parse patches "))


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_bundle_and_patch_file_shapes(tmp_path, shape):
    text, _ = SHAPES[shape]
    home = make_home(tmp_path, bundles={"bad": text})
    with pytest.raises(DshctlError) as exc:
        compose_profile(home, "web")
    assert "overlay" in exc.value.message
    good = make_home(tmp_path / "g")
    patch = write(tmp_path / "p.yml", text)
    with pytest.raises(DshctlError) as exc:
        compose_profile(good, "web", patches=[patch])
    assert str(patch) in exc.value.message


def test_scalar_entry_location(tmp_path):
    home = make_home(tmp_path, profile_layer="- {id: a}\n- just text\n")
    with pytest.raises(DshctlError) as exc:
        compose_profile(home, "web")
    assert (exc.value.loc.line, exc.value.loc.column) == (2, 3)


def test_missing_user_layers_are_no_layer(tmp_path):
    comp = compose_profile(make_home(tmp_path), "web")
    assert [layer.kind for layer in comp.layers] == ["bundle"]


def test_empty_list_user_layer_is_a_layer_without_patches(tmp_path):
    comp = compose_profile(make_home(tmp_path, profile_layer="# off\n[]\n"), "web")
    assert [layer.kind for layer in comp.layers] == ["bundle", "profile"]


def test_missing_bundle_patch_file_and_missing_patch_file(tmp_path):
    home = make_home(tmp_path, bundles={"nofile": None})
    with pytest.raises(DshctlError) as exc:
        compose_profile(home, "web")
    assert exc.value.message.startswith("failed to read overlay ")
    assert "ENOENT" in exc.value.message
    with pytest.raises(DshctlError) as exc:
        compose_profile(make_home(tmp_path / "x"), "web", patches=[tmp_path / "none.yml"])
    missing = tmp_path / "none.yml"
    assert exc.value.message == (f"failed to read overlay {missing}: "
                                 f"Error: ENOENT: no such file or directory, open '{missing}'")


def test_unreadable_home_layer_uses_failed_to_read_patches(tmp_path):
    home = make_home(tmp_path)
    (home / "cordis.patch.yml").mkdir()
    with pytest.raises(DshctlError) as exc:
        compose_profile(home, "web")
    assert exc.value.message.startswith(f"failed to read patches {home / 'cordis.patch.yml'}: ")


# ---------------------------------------------------------------------------------------------
# launcher overlays (layer 5)


def test_launcher_overlays_restate_agent_presets_roots(tmp_path, monkeypatch):
    from dshctl.core.data import presets_dir

    monkeypatch.delenv("DSH_TELEMETRY_DISABLED", raising=False)
    home = make_home(tmp_path, bundles={"b": "- insert: [{id: agent-presets, name: P, config: "
                                              "{default: code, roots: [{path: /mine}]}}]\n"})
    booted = compose_profile(home, "web", launcher_overlays=True)
    assert booted.rows[0]["config"] == {"default": "code",
                                        "roots": [{"path": str(presets_dir()), "trust": "system"}]}
    assert booted.layers[-1].kind == "launcher"
    dumped = compose_profile(home, "web")
    assert dumped.rows[0]["config"]["roots"] == [{"path": "/mine"}]


@pytest.mark.parametrize("value,applies", [("0", True), ("false", True), ("", False)])
def test_telemetry_switch(tmp_path, monkeypatch, value, applies):
    monkeypatch.setenv("DSH_TELEMETRY_DISABLED", value)
    home = make_home(tmp_path, bundles={"b": "- insert: [{id: session-telemetry-otel, name: T}]\n"})
    row = compose_profile(home, "web", launcher_overlays=True).rows[0]
    assert row.get("disabled") is (True if applies else None)


def test_parse_cache_reuses_old_files_and_sees_changes(tmp_path):
    from dshctl.core.compose.layers import load_patch_file

    path = write(tmp_path / "p.yml", "- {id: a, x: 1}\n")
    past = time.time() - 60
    os.utime(path, (past, past))
    first = load_patch_file(path, "overlay")
    assert load_patch_file(path, "overlay") is first  # cached
    path.write_text("- {id: a, x: 2}\n")  # same size
    os.utime(path, (past + 1, past + 1))
    assert load_patch_file(path, "overlay")[0]["x"] == 2


def test_young_files_are_never_served_from_the_cache(tmp_path):
    from dshctl.core.compose.layers import load_patch_file

    path = write(tmp_path / "p.yml", "- {id: a, x: 1}\n")
    assert load_patch_file(path, "overlay") is not load_patch_file(path, "overlay")


# Exact texts of dsh-config.md §6 for every layer: (label, file) per layer kind.
EXACT = {
    "empty": "{label} {file} must be a top-level YAML array of loader patch entries",
    "comments": "{label} {file} must be a top-level YAML array of loader patch entries",
    "mapping": "{label} {file} must be a top-level YAML array of loader patch entries",
    "scalar-entry": "{label} entry 2 in {file} must be a mapping (a loader patch entry)",
}


def _layer_case(tmp_path, layer: str, text: str):
    """(home, --patch list, offending file, label) with ``text`` in the given layer."""
    if layer == "bundle":
        home = make_home(tmp_path, bundles={"base": "- insert: [{id: a, name: A}]\n", "bad": text})
        return home, [], home / "profiles/web/node_modules/bad/cordis.patch.yml", "overlay"
    if layer == "profile":
        home = make_home(tmp_path, profile_layer=text)
        return home, [], home / "profiles/web/cordis.patch.yml", "overlay"
    if layer == "home":
        home = make_home(tmp_path, home_layer=text)
        return home, [], home / "cordis.patch.yml", "patches"
    home = make_home(tmp_path)
    patch = write(tmp_path / "extra.yml", text)
    return home, [patch], patch, "overlay"


@pytest.mark.parametrize("layer", ["bundle", "profile", "home", "patch"])
@pytest.mark.parametrize("shape", sorted(EXACT))
def test_every_layer_gives_dshs_exact_shape_text(tmp_path, layer, shape):
    home, patches, file, label = _layer_case(tmp_path, layer, SHAPES[shape][0])
    with pytest.raises(DshctlError) as exc:
        compose_profile(home, "web", patches=patches)
    assert exc.value.message == EXACT[shape].format(label=label, file=file)
    assert exc.value.loc.file == str(file) and exc.value.loc.line >= 1 and exc.value.hint


@pytest.mark.parametrize("layer", ["bundle", "profile", "home", "patch"])
def test_every_layer_gives_dshs_parse_error_text_with_position(tmp_path, layer):
    home, patches, file, label = _layer_case(tmp_path, layer, "- {id: a\n")
    with pytest.raises(DshctlError) as exc:
        compose_profile(home, "web", patches=patches)
    assert exc.value.message.startswith(f"failed to parse {label} {file}: ")
    assert exc.value.loc.file == str(file) and exc.value.loc.line == 2


def test_unreadable_profile_layer_uses_failed_to_read_overlay(tmp_path):
    home = make_home(tmp_path)
    (home / "profiles/web/cordis.patch.yml").mkdir()
    with pytest.raises(DshctlError) as exc:
        compose_profile(home, "web")
    assert exc.value.message.startswith(
        f"failed to read overlay {home / 'profiles/web/cordis.patch.yml'}: ")


def test_profile_layer_uses_the_patches_label_on_reload(tmp_path):
    from dshctl.core.compose.layers import user_layers

    home = make_home(tmp_path, profile_layer="id: a\n")
    file = home / "profiles/web/cordis.patch.yml"
    with pytest.raises(DshctlError) as exc:
        user_layers(home, "web", reload=True)
    assert exc.value.message == f"patches {file} must be a top-level YAML array of loader patch entries"
    file.unlink()
    file.mkdir()
    with pytest.raises(DshctlError) as exc:
        user_layers(home, "web", reload=True)
    assert exc.value.message.startswith(f"failed to read patches {file}: ")


def test_a_broken_patch_layer_reports_js_yamls_text_as_dsh_boot_does(tmp_path):
    # dsh: `failed to parse ${label} ${file}: ${String(error)}`, a YAMLException (checked in Node)
    from dshctl.core.compose.layers import parse_patch_text

    path = tmp_path / "cordis.patch.yml"
    with pytest.raises(DshctlError) as exc:
        parse_patch_text("- id: a\n name: b\n", path, "patches")
    assert exc.value.message == (f"failed to parse patches {path}: "
                                 "YAMLException: bad indentation of a sequence entry (2:2)")
    assert str(exc.value.loc) == f"{path}:2:2"
