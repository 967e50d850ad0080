"""`dshctl lint`, end to end, and every lint rule against its own examples."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dshctl.cli.app import main
from dshctl.lint import all_rules, lint_text

DSHCTL = Path(sys.executable).parent / "dshctl"
RULES = all_rules()


@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_rule_examples(rule, tmp_path):
    """The passing example has no finding of this rule; the failing one has one at its level."""
    assert rule.doc and rule.level in ("error", "warning", "info")
    good = [d for d in lint_text(rule.good, tmp_path / rule.example_file) if d.rule == rule.id]
    bad = [d for d in lint_text(rule.bad, tmp_path / rule.example_file) if d.rule == rule.id]
    assert good == []
    assert bad and all(d.line >= 1 and d.file.endswith(rule.example_file) for d in bad)
    assert bad[0].severity == rule.level


def run(capsys, *args) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def write(root: Path, rel: str, text: str | bytes) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return p


def test_clean_tree_exits_0(tmp_path, capsys):
    write(tmp_path, "profiles/web/cordis.patch.yml", "# user layer\n[]\n")
    write(tmp_path, "profiles/web/package.json",
          '{"name": "dsh-profile-web", "dsh": {"profile": {"bundles": ["@deepseek-ai/dsh-base"]}}}\n')
    write(tmp_path, ".agent-presets/p/agent.cordis.yml", "- id: a\n  name: ./a.mjs\n")
    write(tmp_path, ".agent-presets/p/preset.yml", "name: P\norder: 1\n")
    write(tmp_path, "node_modules/x/cordis.patch.yml", "not: [a, list\n")  # never walked
    code, out, err = run(capsys, "lint", str(tmp_path))
    assert (code, out) == (0, "")
    assert err == "4 file(s) checked: 0 error(s), 0 warning(s)\n"


def test_errors_exit_1_with_file_line_col(tmp_path, capsys):
    p = write(tmp_path, "cordis.patch.yml", "- insert:\n    - id: a:b\n      name: x\n    - id: a:b\n")
    code, out, _ = run(capsys, "lint", str(p))
    assert code == 1
    assert out.splitlines() == [
        f"{p}:2:11: error [id-colon] id 'a:b' contains ':'",
        "  hint: use '-' instead; ':' separates the parts of a full id",
        f"{p}:4:7: error [schema] missing required key 'name'",
        "  hint: One plugin instance (one fiber).",
        f"{p}:4:11: error [duplicate-id] duplicate loader entry id: a:b",
        "  hint: the id is already used at line 2; ids must be unique in the tree",
        f"{p}:4:11: error [id-colon] id 'a:b' contains ':'",
        "  hint: use '-' instead; ':' separates the parts of a full id",
    ]


def test_warnings_only_exit_0(tmp_path, capsys):
    p = write(tmp_path, "cordis.yml", "- name: dsh-hello\n")
    code, out, _ = run(capsys, "lint", str(p))
    assert code == 0 and f"{p}:1:3: warning [id-missing]" in out


def test_parse_error_is_one_diagnostic_and_stops_other_rules(tmp_path, capsys):
    p = write(tmp_path, "cordis.patch.yml", "- id: a\n  id: b\n")
    code, out, _ = run(capsys, "lint", "--format", "json", str(p))
    assert code == 1
    assert json.loads(out) == {
        "version": 1, "summary": {"files": 1, "errors": 1, "warnings": 0, "infos": 0},
        "findings": [{"file": str(p), "line": 2, "column": 3, "rule": "parse", "severity": "error",
                      "message": "duplicated mapping key",
                      "hint": "the key 'id' appears twice in this mapping; keep one", "json_path": "$"}]}


def test_empty_patch_file(tmp_path, capsys):
    p = write(tmp_path, "cordis.patch.yml", "# only comments\n")
    code, out, _ = run(capsys, "lint", str(p))
    assert code == 1 and out.startswith(f"{p}:1:1: error [empty-file]")
    assert "[schema]" not in out


def test_duplicate_id_across_groups_and_js_position(tmp_path, capsys):
    p = write(tmp_path, "cordis.yml", "- id: x\n  name: a\n- id: g\n  name: cordis:group\n  group: true\n"
                                      "  config:\n    - id: x\n      name: b\n      inject: [!!js s]\n")
    code, out, _ = run(capsys, "lint", "-f", "json", str(p))
    found = {(d["rule"], d["line"], d["column"]) for d in json.loads(out)["findings"]}
    assert code == 1
    assert ("duplicate-id", 7, 11) in found and ("js-position", 9, 16) in found


def test_bom_package_json_still_validated(tmp_path, capsys):
    p = write(tmp_path, "package.json", b'\xef\xbb\xbf{"dsh": {"bundle": {}}}')
    code, out, _ = run(capsys, "lint", "-f", "json", str(p))
    assert code == 1
    assert [(d["rule"], d["message"]) for d in json.loads(out)["findings"]] == [
        ("json-bom", "the file starts with a UTF-8 BOM, which dsh's JSON.parse rejects"),
        ("schema", "missing required key 'patch'")]


def test_plain_package_json_is_skipped_when_walking(tmp_path, capsys):
    write(tmp_path, "app/package.json", '{"name": "x"}')
    code, _, err = run(capsys, "lint", str(tmp_path))
    assert code == 0 and err.startswith("0 file(s) checked")


@pytest.mark.parametrize("name", ["pnpm-workspace.yaml", ".pre-commit-config.yaml", "settings.yaml"])
def test_a_file_of_no_dsh_kind_named_explicitly_is_skipped_with_a_note(tmp_path, capsys, name):
    p = write(tmp_path, name, "a: [1\n")  # not even valid YAML: it is never read
    good = write(tmp_path, "cordis.patch.yml", "[]\n")
    code, out, err = run(capsys, "lint", str(p), str(good))
    assert (code, out) == (0, "")
    assert err.splitlines() == [f"dshctl: note: {p}: not a dsh file kind; skipped (use --kind to lint it as one)",
                                "1 file(s) checked: 0 error(s), 0 warning(s)"]


def test_missing_path_and_bad_format(tmp_path, capsys):
    code, _, err = run(capsys, "lint", str(tmp_path / "nope.yml"))
    assert code == 1 and err.startswith(f"dshctl: error: {tmp_path / 'nope.yml'}: no such file or directory")
    code, _, err = run(capsys, "lint", "--format", "xml", str(tmp_path))
    assert code == 2 and "unknown format 'xml'" in err
    code, _, err = run(capsys, "lint")
    assert code == 2 and "no paths given" in err


def test_list_rules(capsys):
    code, out, _ = run(capsys, "lint", "--list-rules", "--format", "json")
    listed = {r["id"]: r for r in json.loads(out)}
    assert code == 0
    assert {"parse", "schema", "json-bom", "json-duplicate-key", "id-colon", "id-missing", "duplicate-id",
            "js-position", "empty-file"} <= set(listed)
    assert listed["empty-file"]["bad"] == "# nothing here yet\n"
    code, out, _ = run(capsys, "lint", "--list-rules")
    assert code == 0 and "duplicate-id (error; cordis.patch, entry-list)" in out
    assert listed["duplicate-id"]["level"] == listed["duplicate-id"]["default_level"] == "error"


def test_installed_command_github_auto_and_sarif(tmp_path):
    p = write(tmp_path, "cordis.patch.yml", "- id: web\n  disabled: yes\n")
    env = dict(os.environ, GITHUB_ACTIONS="true")
    proc = subprocess.run([str(DSHCTL), "lint", str(p)], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 1
    assert proc.stdout.startswith(f"::error file={p},line=2,col=13,title=dshctl [schema]::\"yes\" matches none")
    proc = subprocess.run([str(DSHCTL), "lint", "--format", "sarif", str(p)], capture_output=True, text=True,
                          timeout=60)
    sarif = json.loads(proc.stdout)
    assert proc.returncode == 1 and sarif["runs"][0]["results"][0]["ruleId"] == "schema"


def test_special_and_dangling_files_are_findings_not_hangs(tmp_path):
    os.mkfifo(tmp_path / "cordis.yml")  # opening a FIFO for reading would block forever
    (tmp_path / "cordis.patch.yml").symlink_to(tmp_path / "gone.yml")
    proc = subprocess.run([str(DSHCTL), "lint", "--format", "text", str(tmp_path)], capture_output=True,
                          text=True, timeout=30)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stdout.splitlines() == [
        f"{tmp_path / 'cordis.patch.yml'}: error [parse] file not found",
        "  hint: check the path (or the target of a symbolic link)",
        f"{tmp_path / 'cordis.yml'}: error [parse] is not a regular file",
        "  hint: pass a regular file",
    ]
