"""Preset health: dsh's exact broken reasons, positions, and bad input that must not crash the scan."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dshctl.core.presets import Root, discover
from preset_helpers import open_dir, run_as_nobody  # noqa: F401 - open_dir is a fixture
from dshctl.core.presets.health import MAX_COMPOSITION_BYTES, check_rows_shape, parse_composition
from dshctl.core.presets.metadata import parse_metadata, sort_key
from dshctl.core.presets.model import Metadata

FIXTURES = Path(__file__).parent / "fixtures" / "presets"
NOT_A_ROW = 'row {} is not a plugin row (expected a map with a "name")'
NO_NAME = 'row {} names no plugin (a "name" string is required)'

# dsh's reason texts (dsh-config.md §7), per fixture preset in tests/fixtures/presets/user.
EXPECTED_REASONS = {
    "missing-file": "the composition file agent.cordis.yml is missing — the directory still occupies "
                    "the id; delete it or restore the file",
    "not-a-list": "the composition must be a top-level list of plugin rows",
    "empty-file": "the composition must be a top-level list of plugin rows",
    "row-not-map": NOT_A_ROW.format(2),
    "row-no-name": NO_NAME.format(1),
    "blank-name": NO_NAME.format(1),
    "group-not-list": "group row 2 must hold a list of plugin rows",
    "nested-no-name": "row 1 " + NO_NAME.format(1),
    "nested-group-not-list": "row 1 group row 2 must hold a list of plugin rows",
    "empty-list": None,
    "personal": None,
    "standard": None,
}


@pytest.fixture(scope="module")
def user_roster():
    return discover([Root(FIXTURES / "user")])


@pytest.mark.parametrize("preset_id, reason", sorted(EXPECTED_REASONS.items()))
def test_each_broken_reason_matches_dsh(user_roster, preset_id, reason):
    preset = user_roster.find(preset_id)
    assert preset is not None, f"{preset_id} not discovered"
    assert preset.health.broken == reason


def test_invalid_yaml_reason_carries_first_parser_line_and_position(user_roster):
    health = user_roster.find("not-yaml").health
    assert health.broken.startswith("the composition is not valid YAML: ")
    assert "\n" not in health.broken
    assert health.loc.file.endswith("not-yaml/agent.cordis.yml")
    assert (health.loc.line, health.loc.column) == (3, 7)
    assert health.broken.endswith("(3:7)")


def test_reasons_point_at_the_offending_row(user_roster):
    assert (user_roster.find("row-not-map").health.loc.line) == 3
    nested = user_roster.find("nested-no-name").health.loc
    assert (nested.line, nested.column) == (5, 7)
    group = user_roster.find("group-not-list").health.loc
    assert group.line == 6  # the `config:` value of the group row


def test_metadata_tolerance(user_roster):
    personal = user_roster.find("personal").metadata
    assert (personal.name, personal.description, personal.order) == ("Personal", "My own preset.", None)
    assert personal.problems == ()
    bad = user_roster.find("bad-metadata")
    assert bad.metadata.name is None and bad.health.ok
    assert "not valid YAML" in bad.metadata.problems[0].message
    typed = user_roster.find("typed-metadata").metadata
    assert (typed.name, typed.description, typed.order) == (None, None, None)
    messages = " | ".join(p.message for p in typed.problems)
    for key in ("`name`", "`description`", "`order`", "unknown key `trust`"):
        assert key in messages


def test_metadata_that_is_not_a_mapping_is_empty(tmp_path):
    meta = parse_metadata(b"- a\n- b\n", tmp_path / "preset.yml")
    assert meta == Metadata(problems=meta.problems) and len(meta.problems) == 1


# ---------------------------------------------------------------------------------------------
# bad input: each reported for its preset, the scan goes on


def _preset(root: Path, name: str, content: bytes | None = None) -> Path:
    d = root / name
    d.mkdir()
    if content is not None:
        (d / "agent.cordis.yml").write_bytes(content)
    return d


def test_bad_input_never_stops_the_scan(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    _preset(root, "good", b"- name: x\n")
    _preset(root, "binary", b"- name: x\n\x00\x01\x02garbage")
    huge = _preset(root, "huge")
    with open(huge / "agent.cordis.yml", "wb") as fh:  # sparse: no real disk use
        fh.truncate(MAX_COMPOSITION_BYTES + 1)
    loop = _preset(root, "self-loop")
    os.symlink("agent.cordis.yml", loop / "agent.cordis.yml")
    isdir = _preset(root, "file-is-dir")
    (isdir / "agent.cordis.yml").mkdir()
    fifo = _preset(root, "fifo")
    os.mkfifo(fifo / "agent.cordis.yml")
    _preset(root, "latin1", "- name: caf\xe9\n".encode("latin-1"))
    (root / "plain-file").write_text("- name: x\n")
    os.symlink("loop-dir", root / "loop-dir")
    os.symlink("nowhere", root / "dangling")
    os.mkdir(os.fsencode(root) + b"/bad-\xff-name")

    roster = discover([Root(root)])
    by_id = {p.id: p for p in roster.presets}
    assert by_id["good"].health.ok
    assert by_id["latin1"].health.ok  # Node decodes with U+FFFD; lint warns about the encoding
    assert by_id["binary"].health.broken.startswith("the composition is not valid YAML: ")
    for name in ("huge", "self-loop", "file-is-dir", "fifo"):
        assert by_id[name].health.broken == "the composition file agent.cordis.yml cannot be read", name
    assert "bytes" in by_id["huge"].health.detail
    skipped = {s.name: s for s in roster.skipped}
    assert skipped["plain-file"].reason == "a file, not a preset directory"
    assert skipped["loop-dir"].reason == "a symlink loop"
    assert skipped["dangling"].reason == "a dangling symlink"
    assert skipped["bad-\\xff-name"].notable and "UTF-8" in skipped["bad-\\xff-name"].reason
    assert all(s.notable for s in roster.skipped)
    assert not roster.root_errors


def test_unreadable_preset_directory_is_reported_for_that_preset(open_dir):
    root = open_dir / "root"
    root.mkdir(mode=0o755)
    _preset(root, "fine", b"- name: x\n")
    locked = _preset(root, "locked", b"- name: x\n")
    os.chmod(locked, 0)

    def scan():
        roster = discover([Root(root)])
        return f"{roster.find('locked').health.broken}|{roster.find('fine').health.ok}"

    assert run_as_nobody(scan) == "the composition file agent.cordis.yml cannot be read|True"


# ---------------------------------------------------------------------------------------------
# properties

row = st.fixed_dictionaries({"name": st.text(min_size=1, max_size=5)}, optional={"id": st.text(max_size=4)})


@st.composite
def healthy_rows(draw, depth=2):
    rows = draw(st.lists(row, max_size=4))
    if depth and draw(st.booleans()):
        rows.append({"name": "cordis:group", "group": True, "config": draw(healthy_rows(depth=depth - 1))})
    return rows


@settings(max_examples=150, deadline=None)
@given(rows=healthy_rows())
def test_any_list_of_named_rows_is_healthy(rows):
    assert check_rows_shape(rows, Path("x.yml")).ok


@settings(max_examples=150, deadline=None)
@given(rows=st.lists(row, max_size=5), data=st.data(),
       bad=st.sampled_from([("not-map", 7), ("no-name", {"id": "n"}), ("blank", {"name": ""})]))
def test_the_first_bad_row_is_named_by_its_1_based_position(rows, data, bad):
    kind, value = bad
    at = data.draw(st.integers(0, len(rows)))
    nested = data.draw(st.booleans())
    broken = rows[:at] + [value] + rows[at:]
    top = [{"name": "cordis:group", "group": True, "config": broken}] if nested else broken
    reason = check_rows_shape(top, Path("x.yml")).broken
    prefix = "row 1 " if nested else ""
    expected = (NOT_A_ROW if kind == "not-map" else NO_NAME).format(at + 1)
    assert reason == prefix + expected


@settings(max_examples=100, deadline=None)
@given(entries=st.lists(st.tuples(st.from_regex(r"[a-z0-9][a-z0-9-]{0,6}", fullmatch=True),
                                  st.one_of(st.none(), st.integers(-5, 5))), unique_by=lambda e: e[0]))
def test_ordering_declared_order_first_then_id(entries):
    ordered = sorted(entries, key=lambda e: sort_key(e[0], Metadata(order=e[1])))
    with_order = [e for e in ordered if e[1] is not None]
    without = [e for e in ordered if e[1] is None]
    assert ordered == with_order + without
    assert [e[1] for e in with_order] == sorted(e[1] for e in with_order)
    assert [e[0] for e in without] == sorted(e[0] for e in without)


def test_parse_composition_reports_nul_bytes_as_invalid_yaml(tmp_path):
    doc, health = parse_composition(b"- name: a\x00\n", tmp_path / "agent.cordis.yml")
    assert doc is None and health.broken.startswith("the composition is not valid YAML: ")
