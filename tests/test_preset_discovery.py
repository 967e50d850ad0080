"""Preset discovery: roots and precedence, shadowing, skipped names, absent and unreadable roots,
the profile's roots (launcher overlay), the corpus presets, and the scan cache."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dshctl.core.presets import Root, ScanCache, assemble, discover, make_root, resolve_roots
from dshctl.core.presets.roots import profile_roots, roots_from_row_config, shipped_root, user_root
from preset_helpers import open_dir, run_as_nobody  # noqa: F401 - open_dir is a fixture

FIXTURES = Path(__file__).parent / "fixtures" / "presets"
from corpus_files import CORPUS  # noqa: E402


def fixture_roster():
    return discover([Root(FIXTURES / "system", "system"), Root(FIXTURES / "user", "user")])


def test_first_root_wins_and_the_shadowed_copy_is_reported():
    roster = fixture_roster()
    standard = roster.find("standard")
    assert standard.root.path == FIXTURES / "system" and standard.metadata.name == "System Standard"
    assert [p.root.path for p in standard.shadowed] == [FIXTURES / "user"]
    loser = roster.shadowed[0]
    assert loser.id == "standard" and loser.shadowed_by is standard and loser.status == "shadowed"
    assert loser.metadata.name == "User Standard"  # kept whole, not dropped
    assert standard.to_dict()["shadowed"] == [str(FIXTURES / "user" / "standard" / "agent.cordis.yml")]


def test_roster_order_is_roots_in_order_then_order_then_id():
    ids = [p.id for p in fixture_roster().presets]
    user_ids = sorted(p.name for p in (FIXTURES / "user").iterdir()
                      if p.is_dir() and p.name[0].islower() and p.name != "standard")
    assert ids == ["standard", "minimal"] + user_ids


def test_skipped_entries_are_not_presets_and_look_alikes_are_notable():
    roster = fixture_roster()
    skipped = {s.name: s for s in roster.skipped}
    assert set(skipped) == {"Upper-Case", "-leading-dash", "README.md"}
    assert skipped["Upper-Case"].notable and skipped["-leading-dash"].notable
    assert not skipped["README.md"].notable
    assert roster.find("missing-file").health.broken.startswith("the composition file agent.cordis.yml is")


def test_id_rule_is_a_full_match(tmp_path):
    for name in ("ok-1", "trailing\n", "Caps", "under_score", "dot.ted", "-x", "9lives"):
        d = tmp_path / name
        d.mkdir()
        (d / "agent.cordis.yml").write_text("[]\n")
    assert sorted(p.id for p in discover([Root(tmp_path)]).presets) == ["9lives", "ok-1"]


def test_absent_root_and_dangling_root_link_yield_nothing(tmp_path):
    os.symlink(tmp_path / "gone", tmp_path / "link")
    roster = discover([Root(tmp_path / "absent"), Root(tmp_path / "link"), Root(FIXTURES / "system")])
    assert [p.id for p in roster.presets] == ["standard", "minimal"] and not roster.root_errors


def test_root_that_is_a_file_is_an_error_naming_it_and_other_roots_still_scan(tmp_path):
    not_dir = tmp_path / "file-root"
    not_dir.write_text("x")
    roster = discover([Root(not_dir), Root(FIXTURES / "system")])
    assert [p.id for p in roster.presets] == ["standard", "minimal"]
    assert str(roster.root_errors[0]) == (f"{not_dir}: agent-presets: cannot read preset root {not_dir}: "
                                          f"ENOTDIR: not a directory, scandir '{not_dir}'")
    with pytest.raises(Exception, match="cannot read preset root"):
        roster.raise_root_errors()


def test_root_symlink_loop_is_an_error(tmp_path):
    os.symlink(tmp_path / "loop", tmp_path / "loop")
    roster = discover([Root(tmp_path / "loop")])
    assert "ELOOP: too many levels of symbolic links" in roster.root_errors[0].message


def test_root_without_permission_is_an_error_for_an_unprivileged_user(open_dir):
    root = open_dir / "locked-root"
    root.mkdir()
    os.chmod(root, 0)
    result = run_as_nobody(lambda: discover([Root(root)]).root_errors[0].message)
    assert result == f"agent-presets: cannot read preset root {root}: EACCES: permission denied, scandir '{root}'"


# ---------------------------------------------------------------------------------------------
# which roots


def test_assemble_order_dedupe_and_user_root_switch(tmp_path):
    mine = make_root(tmp_path / "mine")
    roots = assemble([mine, make_root(tmp_path / "mine" / ".")], tmp_path)
    assert roots == [mine, shipped_root(), user_root(tmp_path)]
    assert roots[1].trust == "system" and roots[2].trust == "user"
    assert assemble([], tmp_path, include_user_root=False) == [shipped_root()]


def test_tilde_expands(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert make_root("~/presets").path == tmp_path / "presets"
    assert make_root("~other/x").path.name == "x" and "~other" in str(make_root("~other/x").path)


def test_row_config_roots_and_include_user_root():
    found = roots_from_row_config({"roots": [{"path": "/a", "trust": "system"}, {"path": "/b"}, 7],
                                   "includeUserRoot": False})
    assert [(str(r.path), r.trust) for r in found.roots] == [("/a", "system"), ("/b", "user")]
    assert found.include_user_root is False and "ignored 1" in found.note
    assert roots_from_row_config(None).include_user_root is True


def _profile_home(tmp_path: Path, patch: str) -> Path:
    home = tmp_path / "home"
    profile = home / "profiles" / "p"
    profile.mkdir(parents=True)
    (profile / "package.json").write_text(json.dumps(
        {"name": "p", "private": True, "dsh": {"profile": {"bundles": ["@dshctl/host-base"]}}}))
    (profile / "cordis.patch.yml").write_text(patch)
    return home


def test_profile_roots_honour_the_launcher_overlay(tmp_path):
    # The user asks for their own root and no user root; dsh's launcher overwrites `roots` with the
    # shipped root but keeps includeUserRoot.
    home = _profile_home(tmp_path, f"- id: agent-presets\n  config:\n    default: standard\n"
                                   f"    includeUserRoot: false\n    roots: [{{path: {tmp_path}/own}}]\n")
    found = profile_roots(home, "p")
    assert found.note is None
    assert [r.path for r in found.roots] == [shipped_root().path] and found.roots[0].trust == "system"
    assert found.include_user_root is False
    roots, note = resolve_roots(home, "p")
    assert roots == [found.roots[0]] and note is None


def test_never_created_template_profile_is_silent_and_uses_the_default_roots(tmp_path):
    # dsh would create `web` from its template; the overlay then gives exactly these roots.
    for name in ("web", "headless"):
        assert resolve_roots(tmp_path, name) == ([shipped_root(), user_root(tmp_path)], None)


def test_missing_profile_of_another_name_falls_back_with_a_note(tmp_path):
    roots, note = resolve_roots(tmp_path, "nope")
    assert roots == [shipped_root(), user_root(tmp_path)]
    assert note.startswith("profile 'nope' does not exist") and str(tmp_path / "profiles" / "nope") in note


def test_existing_profile_that_fails_to_compose_falls_back_with_a_note(tmp_path):
    home = _profile_home(tmp_path, "- id: agent-presets\n  config: [unclosed\n")
    roots, note = resolve_roots(home, "p")
    assert roots == [shipped_root(), user_root(home)]
    assert note.startswith("profile 'p' did not compose (") and "cordis.patch.yml" in note
    web = home / "profiles" / "web"  # the default profile, created but broken: noted too
    web.mkdir()
    (web / "package.json").write_text("{not json")
    assert "profile 'web' did not compose" in resolve_roots(home, "web")[1]


def test_explicit_roots_replace_the_profile_roots(tmp_path):
    home = _profile_home(tmp_path, "[]\n")
    roots, _ = resolve_roots(home, "p", [str(tmp_path / "a"), str(tmp_path / "b")], no_user_root=True)
    assert [r.path for r in roots] == [tmp_path / "a", tmp_path / "b", shipped_root().path]


def test_shipped_presets_are_healthy_with_metadata():
    roster = discover([shipped_root()])
    assert [p.id for p in roster.presets][:2] == ["standard", "minimal"]
    for preset in roster.presets:
        assert preset.health.ok and preset.metadata.name and preset.metadata.problems == ()


# ---------------------------------------------------------------------------------------------
# corpus


def corpus_presets() -> list[Path]:
    rows = [line.split("\t") for line in (CORPUS / "INDEX.tsv").read_text().splitlines()[1:]]
    return [CORPUS / repo.replace("/", "__") / path for repo, path, _commit, kind in rows
            if kind.strip() == "preset" and path.endswith("agent.cordis.yml")]


def test_corpus_presets_are_discovered_with_the_right_health(tmp_path):
    sources = corpus_presets()
    assert len(sources) >= 20
    roots = [tmp_path / f"root{i}" for i in range(3)]
    for i, src in enumerate(sources):
        target = roots[i % 3] / f"corpus-{i}"
        target.mkdir(parents=True)
        shutil.copy(src, target / "agent.cordis.yml")
        if (src.parent / "preset.yml").exists():
            shutil.copy(src.parent / "preset.yml", target / "preset.yml")
    roster = discover([Root(r) for r in roots])
    assert len(roster.presets) == len(sources) and not roster.shadowed
    for preset in roster.presets:
        src = sources[int(preset.id.split("-")[1])]
        # Every corpus preset loads and is shape-valid: none of them is broken in dsh either (the dsh
        # test fixtures "broken"/"pending"/"leaky" fail at mount, which health does not check).
        assert preset.health.ok, (src, preset.health)
        if (src.parent / "preset.yml").exists() and "name:" in (src.parent / "preset.yml").read_text():
            assert preset.metadata.name, src


DSH = CORPUS / "deepseek-ai__deepseek-harness"


def test_dsh_own_test_roots_first_root_wins_and_all_are_healthy():
    """dsh's discovery.spec.ts layout, scanned in place: a system and a user root, both with
    `standard`. Its broken/pending/leaky presets fail at mount, not in the shape check."""
    fixtures = DSH / "packages/preset/agent-presets/tests/fixtures"
    roster = discover([Root(fixtures / "system", "system"), Root(fixtures / "user", "user")])
    assert [(p.id, p.root.trust) for p in roster.presets] == [
        ("minimal", "system"), ("standard", "system"), ("broken", "user"), ("isolated", "user"),
        ("late", "user"), ("leaky", "user"), ("pending", "user"), ("two-broken", "user")]
    assert [(p.id, p.root.trust) for p in roster.shadowed] == [("standard", "user")]
    assert roster.find("standard").shadowed == roster.shadowed
    assert all(p.health.ok for p in roster.all_copies()) and not roster.skipped


def test_dsh_shipped_root_orders_by_preset_yml():
    roster = discover([Root(DSH / "apps/cli/config/agent-presets", "system")])
    assert [(p.id, p.metadata.order) for p in roster.presets] == [
        ("standard", 1), ("code", 2), ("minimal", 3), ("cordis", 4)]
    assert all(p.health.ok and p.metadata.name and not p.metadata.problems for p in roster.presets)


# ---------------------------------------------------------------------------------------------
# cache


def _root_with(tmp_path: Path, n: int) -> Path:
    root = tmp_path / "cached"
    for i in range(n):
        d = root / f"p{i}"
        d.mkdir(parents=True)
        (d / "agent.cordis.yml").write_text(f"- id: r{i}\n  name: x\n")
        (d / "preset.yml").write_text(f"name: P{i}\n")
    return root


def test_rescan_with_nothing_changed_reads_nothing(tmp_path):
    root, cache = _root_with(tmp_path, 5), ScanCache()
    discover([Root(root)], cache=cache)
    assert (cache.parsed, cache.hits) == (10, 0)
    discover([Root(root)], cache=cache)
    assert (cache.parsed, cache.hits) == (10, 10)


def test_edit_with_same_size_and_restored_mtime_is_detected_by_hash(tmp_path):
    root, cache = _root_with(tmp_path, 2), ScanCache()
    assert discover([Root(root)], cache=cache).find("p0").health.ok
    file = root / "p0" / "agent.cordis.yml"
    before = file.stat()
    broken = file.read_text().replace("name: x", "nome: x")  # same length, now nameless
    assert len(broken) == before.st_size
    file.write_text(broken)
    os.utime(file, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (file.stat().st_mtime_ns, file.stat().st_size) == (before.st_mtime_ns, before.st_size)
    roster = discover([Root(root)], cache=cache)
    assert roster.find("p0").health.broken == 'row 1 names no plugin (a "name" string is required)'


def test_touch_without_change_rehashes_but_does_not_parse(tmp_path):
    root, cache = _root_with(tmp_path, 1), ScanCache()
    discover([Root(root)], cache=cache)
    os.utime(root / "p0" / "preset.yml")
    (root / "p0" / "preset.yml").write_text("name: P0\n")
    discover([Root(root)], cache=cache)
    assert (cache.parsed, cache.rehashed, cache.hits) == (2, 1, 1)


def test_deleted_presets_leave_the_cache(tmp_path):
    root, cache = _root_with(tmp_path, 3), ScanCache()
    discover([Root(root)], cache=cache)
    shutil.rmtree(root / "p1")
    roster = discover([Root(root)], cache=cache)
    assert [p.id for p in roster.presets] == ["p0", "p2"] and len(cache) == 4


# ---------------------------------------------------------------------------------------------
# property: shadowing

ids = st.sampled_from(["a", "b", "c", "d", "e"])


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(layout=st.lists(st.sets(ids, max_size=5), min_size=1, max_size=4))
def test_every_copy_is_a_winner_from_its_first_root_or_shadowed_by_it(tmp_path_factory, layout):
    base = tmp_path_factory.mktemp("shadow")
    roots = []
    for r, present in enumerate(layout):
        root = base / f"r{r}"
        root.mkdir()
        for pid in present:
            (root / pid).mkdir()
            (root / pid / "agent.cordis.yml").write_text(f"- name: r{r}\n")
        roots.append(Root(root))
    roster = discover(roots)
    copies = sum(len(s) for s in layout)
    assert len(roster.presets) + len(roster.shadowed) == copies
    for preset in roster.presets:
        first = next(r for r, present in enumerate(layout) if preset.id in present)
        assert preset.root == roots[first]
        later = [roots[r] for r, present in enumerate(layout) if preset.id in present and r > first]
        assert [p.root for p in preset.shadowed] == later
        assert all(p.shadowed_by is preset for p in preset.shadowed)
    assert len({p.id for p in roster.presets}) == len(roster.presets)


# Same-size variants, so only the content hash can tell most of them apart.
VARIANTS = ["- name: x\n", "- nome: x\n", "- name: y\n", "- {name: }\n", "[- nam: x\n", "- name: \x00\n"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(st.tuples(st.integers(0, 2), st.sampled_from(VARIANTS), st.booleans()),
                      min_size=1, max_size=6))
def test_a_cached_scan_always_equals_a_fresh_scan(tmp_path_factory, edits):
    root = tmp_path_factory.mktemp("cache-prop")
    for i in range(3):
        (root / f"p{i}").mkdir()
        (root / f"p{i}" / "agent.cordis.yml").write_text(VARIANTS[0])
    cache = ScanCache()
    discover([Root(root)], cache=cache)
    for index, content, restore_mtime in edits:
        file = root / f"p{index}" / "agent.cordis.yml"
        before = file.stat()
        file.write_text(content)
        if restore_mtime:
            os.utime(file, ns=(before.st_atime_ns, before.st_mtime_ns))
        cached = discover([Root(root)], cache=cache)
        fresh = discover([Root(root)])
        assert [(p.id, p.health) for p in cached.presets] == [(p.id, p.health) for p in fresh.presets]


def test_unknown_id_names_what_is_available_or_none(tmp_path):
    from dshctl.errors import DshctlError

    with pytest.raises(DshctlError) as exc:
        discover([Root(tmp_path / "absent")]).require("standard")
    assert exc.value.message == 'agent-presets: preset "standard" not found (available: none)'
    with pytest.raises(DshctlError) as exc:
        discover([Root(FIXTURES / "system")]).require("nope")
    assert exc.value.message == 'agent-presets: preset "nope" not found (available: standard, minimal)'


def test_unprintable_names_are_skipped_with_one_line_reasons(tmp_path):
    for raw in (b"bad\xff", b"new\nline"):
        directory = os.path.join(os.fsencode(tmp_path), raw)
        os.mkdir(directory)
        with open(os.path.join(directory, b"agent.cordis.yml"), "wb") as fh:
            fh.write(b"[]\n")
    roster = discover([Root(tmp_path)])
    assert roster.presets == []
    reasons = {s.name: s.reason for s in roster.skipped}
    assert reasons["bad\\xff"] == "the name is not valid UTF-8, so it cannot be a preset id"
    assert reasons["new\\x0aline"].startswith("holds agent.cordis.yml but its name is not a preset id")
    assert all(s.notable and s.name.isprintable() for s in roster.skipped)
