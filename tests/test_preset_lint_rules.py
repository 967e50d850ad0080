"""The preset rule in the shared lint registry: `dshctl lint` reports dsh's health reasons.

The registry's own test (tests/test_lint_cmd.py::test_rule_examples) runs the rule's examples; these
tests check that `dshctl lint` and the preset roster agree, file:line:col included.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from dshctl.cli.app import main
from dshctl.core.presets import Root, discover
from dshctl.core.presets.health import MAX_COMPOSITION_BYTES
from dshctl.lint import RULES, all_rules, lint_paths

FIXTURES = Path(__file__).parent / "fixtures" / "presets"
SHIPPED = Path(__file__).resolve().parent.parent / "presets"


def run(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def health_findings(diags) -> set[tuple[str, int | None, int | None, str]]:
    """(file, line, column, message) of each preset-health finding; diagnostics or their JSON."""
    dicts = [d if isinstance(d, dict) else d.to_dict() for d in diags]
    return {(d["file"], d["line"], d["column"], d["message"]) for d in dicts if d["rule"] == "preset-health"}


def test_the_rule_is_registered_and_self_described():
    all_rules()
    health = RULES["preset-health"]
    assert health.level == "error" and health.example_file == "agent.cordis.yml"
    assert "broken" in health.doc and health.good and health.bad


def test_lint_of_a_preset_root_reports_exactly_the_roster_reasons(capsys):
    """Every broken preset that has an agent.cordis.yml: same reason, same file:line:col."""
    roster = discover([Root(FIXTURES / "user")])
    expected = {(str(p.file), p.health.loc.line, p.health.loc.column, p.health.broken)
                for p in roster.all_copies() if not p.health.ok and p.file.exists()}
    assert len(expected) >= 9  # not-yaml, not-a-list, row and nested group variants, …
    code, out, _ = run(capsys, "lint", "-f", "json", str(FIXTURES / "user"))
    assert code == 1
    assert health_findings(json.loads(out)["findings"]) == expected


def test_text_output_names_file_line_col_with_dsh_nested_group_text(capsys, tmp_path):
    preset = tmp_path / "nested" / "agent.cordis.yml"
    preset.parent.mkdir()
    preset.write_text("- id: outer\n  name: cordis:group\n  group: true\n  config:\n"
                      "    - id: inner\n      name: cordis:group\n      group: true\n      config:\n"
                      "        - id: nameless\n          config: {}\n")
    code, out, _ = run(capsys, "lint", "-f", "text", str(preset))
    assert code == 1
    assert (f"{preset}:9:11: error [preset-health] row 1 row 1 row 1 names no plugin "
            '(a "name" string is required)') in out


def test_empty_list_and_other_entry_files_are_not_judged_as_presets(tmp_path):
    (tmp_path / "agent.cordis.yml").write_text("[]\n")
    (tmp_path / "other.cordis.yml").write_text("- id: a\n  name: cordis:group\n  group: true\n  config: 3\n")
    diags, count = lint_paths([tmp_path])
    assert count == 2
    assert health_findings(diags) == set()
    assert any(d.rule == "schema" for d in diags)  # the other file is still linted, by other rules


def test_undecodable_and_oversized_files_are_judged_from_their_bytes(tmp_path):
    latin1 = tmp_path / "latin1" / "agent.cordis.yml"
    latin1.parent.mkdir()
    latin1.write_bytes(b"- id: a\n  name: x\n  config: {greeting: caf\xe9}\n")  # dsh reads U+FFFD: healthy
    huge = tmp_path / "huge" / "agent.cordis.yml"
    huge.parent.mkdir()
    with open(huge, "wb") as fh:
        fh.truncate(MAX_COMPOSITION_BYTES + 1)
    diags, _ = lint_paths([tmp_path])
    health = [d for d in diags if d.rule == "preset-health"]
    assert [(d.file, d.message) for d in health] == [
        (str(huge), "the composition file agent.cordis.yml cannot be read")]
    assert "bytes" in health[0].hint
    assert any(d.rule == "parse" and d.file == str(latin1) for d in diags)  # still a parse finding


def test_shipped_presets_pass_top_level_lint(capsys):
    code, out, _ = run(capsys, "lint", str(SHIPPED))
    assert (code, out) == (0, "")
