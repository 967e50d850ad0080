"""Presets as dsh's roster sees them (discovery.ts, metadata.ts): symlinked preset directories are
skipped, preset.yml is read with js-yaml's default schema (a date is not a name), a preset.yml js-yaml
rejects loses its metadata silently, a composition js-yaml accepts (``%YAML 1.3``) is healthy, and the
broken reasons carry js-yaml's message and position. Lint explains each at file:line:col."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dshctl.core.presets import Root, discover
from dshctl.core.presets.lint import lint_presets
from dshctl.core.presets.metadata import parse_metadata

ROW = "- id: a\n  name: '@dshctl/logger'\n"


def make_preset(root: Path, preset_id: str, composition: str = ROW, metadata: str | None = None) -> Path:
    directory = root / preset_id
    directory.mkdir(parents=True)
    (directory / "agent.cordis.yml").write_text(composition, encoding="utf-8")
    if metadata is not None:
        (directory / "preset.yml").write_text(metadata, encoding="utf-8")
    return directory


from test_cli_conventions import run_main as run  # noqa: E402 - one CLI runner for the suite


def test_a_symlinked_preset_directory_is_not_in_the_roster_and_lint_says_why(tmp_path):
    elsewhere = make_preset(tmp_path / "elsewhere", "linked")
    root = tmp_path / "root"
    make_preset(root, "real")
    os.symlink(elsewhere, root / "linked")
    roster = discover([Root(root, "user")])
    assert [p.id for p in roster.presets] == ["real"]
    skipped = {s.name: s for s in roster.skipped}
    assert skipped["linked"].notable and "symbolic link" in skipped["linked"].reason
    diags = [d for d in lint_presets(roster) if d.rule == "preset-skipped"]
    assert len(diags) == 1 and "linked" in diags[0].message and "does not follow links" in diags[0].hint


def test_a_date_as_name_is_dropped_and_lint_hints_to_quote_it(tmp_path):
    meta = parse_metadata(b"name: 2024-01-01\ndescription: kept\norder: 2\n", tmp_path / "preset.yml")
    assert (meta.name, meta.description, meta.order) == (None, "kept", 2)
    (problem,) = meta.problems
    assert problem.message.startswith("preset.yml `name` reads as a date in dsh")
    assert (problem.loc.line, problem.loc.column) == (1, 7)
    assert problem.hint == 'quote it to keep it: name: "2024-01-01"'


def test_numbers_and_booleans_as_text_get_the_same_hint(tmp_path):
    meta = parse_metadata(b"name: 1.5\ndescription: yes no\n", tmp_path / "preset.yml")
    assert meta.description == "yes no"  # not a YAML 1.1 boolean for js-yaml 4
    (problem,) = meta.problems
    assert "reads as a number" in problem.message and problem.hint.endswith('name: "1.5"')
    meta = parse_metadata(b"name: true\n", tmp_path / "preset.yml")
    assert "reads as a boolean" in meta.problems[0].message


def test_the_default_schema_merges_keys_as_dsh_does(tmp_path):
    meta = parse_metadata(b"base: &b {name: Shared}\n<<: *b\ndescription: d\n", tmp_path / "preset.yml")
    assert (meta.name, meta.description) == ("Shared", "d")


def test_a_preset_yml_js_yaml_rejects_loses_its_metadata_silently(tmp_path, capsys):
    root = tmp_path / "root"
    make_preset(root, "p", metadata="name: Fine\ndescription: a: b\n")
    roster = discover([Root(root, "user")])
    preset = roster.find("p")
    assert preset.health.ok and preset.metadata.name is None and preset.metadata.description is None
    (problem,) = preset.metadata.problems
    assert problem.message == ("preset.yml is not valid YAML (bad indentation of a mapping entry (2:15)); "
                               "dsh ignores the whole file")
    assert str(problem.loc).endswith("p/preset.yml:2:15")
    diags = lint_presets(roster)
    assert any(d.rule == "preset-metadata" and d.loc.line == 2 and d.loc.column == 15 for d in diags)


def test_yaml_1_3_directive_is_a_healthy_preset_not_an_internal_error(tmp_path, capsys):
    root = tmp_path / "root"
    make_preset(root, "v13", composition="%YAML 1.3\n---\n" + ROW)  # js-yaml only warns
    make_preset(root, "v20", composition="%YAML 2.0\n---\n" + ROW)
    home = tmp_path / "home"
    home.mkdir()
    code, out, err = run(capsys, "--home", str(home), "preset", "list", "--root", str(root), "--no-user-root",
                         "--format", "json")
    assert code == 0, err
    listed = {p["id"]: p for p in json.loads(out)}
    assert listed["v13"]["broken"] is None
    assert listed["v20"]["broken"] == ("the composition is not valid YAML: "
                                       "unacceptable YAML version of the document (2:1)")


def test_broken_reasons_carry_js_yamls_message_and_position(tmp_path):
    root = tmp_path / "root"
    cases = {
        "alias": ("- id: a\n  name: *nope\n", 'unidentified alias "nope" (2:14)'),
        "indent": ("- id: a\n name: b\n", "bad indentation of a sequence entry (2:2)"),
        "escape": ('- name: "\\q"\n', "unknown escape sequence (1:11)"),
        "tabs": ("- id: a\n\t- b\n", None),
        "docs": (ROW + "---\n" + ROW, "expected a single document in the stream, but found more"),
        "empty-js": ("- name: x\n  disabled: !!js\n", None),
    }
    for preset_id, (text, _) in cases.items():
        make_preset(root, preset_id, composition=text)
    roster = discover([Root(root, "user")])
    from dshctl.core.yaml import jsyaml

    for preset_id, (text, expected) in cases.items():
        broken = roster.find(preset_id).health.broken
        js = jsyaml.first_error(text)
        assert js is not None, preset_id
        assert broken == f"the composition is not valid YAML: {js.message}", preset_id
        if expected:
            assert js.message == expected, preset_id
