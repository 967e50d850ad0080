"""`dshctl lint` configuration: config files found upward, --config, levels, overrides, extends,
--select/--ignore/--strict, disable comments, and broken configs as one located line (exit 2)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from dshctl.lint.config import ConfigResolver, glob_match, resolved
from dshctl.lint.plan import RULE_IDS
from pathlib import PurePosixPath

# A row without id (id-missing, a warning) and an id with a colon (id-colon, an error).
ROWS = "- name: dsh-hello\n- id: a:b\n  name: dsh-other\n"


from test_cli_conventions import run_main as run  # noqa: E402 - one CLI runner for the suite


def write(root: Path, rel: str, text: str) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return p


def findings(capsys, *args) -> tuple[int, list[tuple[str, str, int]]]:
    code, out, err = run(capsys, "lint", "-f", "json", *args)
    assert code in (0, 1), err
    return code, [(d["rule"], d["severity"], d["line"]) for d in json.loads(out)["findings"]]


def test_defaults_without_a_config(tmp_path, capsys):
    p = write(tmp_path, "cordis.yml", ROWS)
    assert findings(capsys, str(p)) == (1, [("id-missing", "warning", 1), ("id-colon", "error", 2)])


def test_nearest_config_upward_wins_and_sets_levels(tmp_path, capsys):
    write(tmp_path, ".dshctl-lint.yaml", "rules:\n  id-colon: warning\n")
    write(tmp_path, "deep/er/.dshctl-lint.yaml", "rules:\n  id-missing: error\n")
    top = write(tmp_path, "a/cordis.yml", ROWS)
    deep = write(tmp_path, "deep/er/x/cordis.yml", ROWS)
    assert findings(capsys, str(top)) == (0, [("id-missing", "warning", 1), ("id-colon", "warning", 2)])
    # the nearest config replaces the outer one (no implicit merging; use extends for that)
    assert findings(capsys, str(deep)) == (1, [("id-missing", "error", 1), ("id-colon", "error", 2)])


def test_off_overrides_and_extends(tmp_path, capsys):
    write(tmp_path, "base.yaml", "rules:\n  id-missing: off\n  id-colon: warning\n")
    write(tmp_path, "repo/.dshctl-lint.yaml",
          "extends: ../base.yaml\nrules:\n  id-colon: error\n"
          "overrides:\n  - files: ['presets/**']\n    rules: {id-colon: off, id-missing: warning}\n"
          "  - files: legacy.cordis.yml\n    rules: {id-colon: info}\n")
    plain = write(tmp_path, "repo/cordis.yml", ROWS)
    preset = write(tmp_path, "repo/presets/p/agent.cordis.yml", ROWS)
    legacy = write(tmp_path, "repo/sub/legacy.cordis.yml", ROWS)
    assert findings(capsys, str(plain)) == (1, [("id-colon", "error", 2)])
    assert findings(capsys, str(preset)) == (0, [("id-missing", "warning", 1)])
    assert findings(capsys, str(legacy)) == (0, [("id-colon", "info", 2)])


def test_pyproject_table_and_explicit_config(tmp_path, capsys):
    write(tmp_path, "pyproject.toml", '[project]\nname = "x"\n\n[tool.dshctl.lint.rules]\n"id-colon" = "off"\n')
    p = write(tmp_path, "cordis.yml", ROWS)
    assert findings(capsys, str(p)) == (0, [("id-missing", "warning", 1)])
    other = write(tmp_path, "elsewhere/strict.yaml", "rules:\n  id-missing: error\n")
    assert findings(capsys, "--config", str(other), str(p)) == (
        1, [("id-missing", "error", 1), ("id-colon", "error", 2)])


def test_a_pyproject_without_the_table_is_not_a_config(tmp_path, capsys):
    write(tmp_path, ".dshctl-lint.yaml", "rules:\n  id-colon: off\n")
    write(tmp_path, "sub/pyproject.toml", '[project]\nname = "x"\n')
    p = write(tmp_path, "sub/cordis.yml", ROWS)
    assert findings(capsys, str(p)) == (0, [("id-missing", "warning", 1)])


def test_select_ignore_strict(tmp_path, capsys):
    write(tmp_path, ".dshctl-lint.yaml", "rules:\n  id-missing: off\n")
    p = write(tmp_path, "cordis.yml", ROWS)
    assert findings(capsys, "--select", "id-missing", str(p)) == (0, [("id-missing", "warning", 1)])
    assert findings(capsys, "--ignore", "id-colon", str(p)) == (0, [])
    assert findings(capsys, "--ignore", "id-colon", "--select", "id-missing,id-colon", str(p)) == (
        0, [("id-missing", "warning", 1)])
    code, _, _ = run(capsys, "lint", "--select", "id-missing", "--strict", str(p))
    assert code == 1
    code, _, err = run(capsys, "lint", "--select", "id-mising", str(p))
    assert code == 2 and err.startswith("dshctl: error: --select: unknown rule 'id-mising'")


def test_list_rules_shows_levels_under_the_config(tmp_path, capsys, monkeypatch):
    write(tmp_path, ".dshctl-lint.yaml", "rules:\n  id-missing: off\n  duplicate-id: warning\n")
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "lint", "--list-rules")
    assert code == 0
    assert "id-missing (off, default warning; cordis.patch, entry-list)" in out
    assert "duplicate-id (warning, default error; cordis.patch, entry-list)" in out
    assert "id-colon (error; cordis.patch, entry-list)" in out
    code, out, _ = run(capsys, "lint", "--list-rules", "-f", "json", "--ignore", "id-colon")
    levels = {r["id"]: r["level"] for r in json.loads(out)}
    assert (levels["id-missing"], levels["duplicate-id"], levels["id-colon"]) == ("off", "warning", "off")


@pytest.mark.parametrize("name,text,where,message", [
    (".dshctl-lint.yaml", "rules:\n  id-missing: [off\n", "3:1",
     "unexpected end of the stream within a flow collection"),  # js-yaml's text (the dialect's, #12)
    (".dshctl-lint.yaml", "rules:\n  id-mising: off\n", "2:3", "unknown rule 'id-mising'"),
    (".dshctl-lint.yaml", "rules:\n  id-missing: never\n", "2:15", "unknown level 'never' for rule 'id-missing'"),
    (".dshctl-lint.yaml", "rules: {}\nrule: {}\n", "2:1", "unknown key 'rule' in lint config"),
    (".dshctl-lint.yaml", "overrides:\n  - files: [a]\n    rulez: {}\n", "3:5", "unknown key 'rulez' in override"),
    (".dshctl-lint.yaml", "overrides:\n  - rules: {}\n", "2:5",
     "an override needs 'files': a glob or a list of globs"),
    (".dshctl-lint.yaml", "extends: missing.yaml\n", "1:10", "extends: 'missing.yaml' not found"),
    (".dshctl-lint.yaml", "- rules\n", "1:1", "a lint config must be a mapping"),
    ("pyproject.toml", "[tool.dshctl.lint]\nrules = {\"id-colon\" = \"sometimes\"}\n", "2:10",
     "unknown level 'sometimes' for rule 'id-colon'"),
    ("pyproject.toml", "[tool.dshctl.lint]\nselect = [\"x\"]\n", "2:1", "unknown key 'select' in lint config"),
    ("pyproject.toml", "[tool.dshctl.lint\n", "1:18", "Expected ']' at the end of a table declaration"),
])
def test_a_broken_config_is_one_located_line_exit_2(tmp_path, capsys, name, text, where, message):
    config = write(tmp_path, name, text)
    p = write(tmp_path, "cordis.yml", ROWS)
    code, out, err = run(capsys, "lint", str(p))
    assert (code, out) == (2, "")
    lines = err.splitlines()
    assert lines[0] == f"dshctl: error: {config}:{where}: {message}"
    assert len(lines) == 2 and lines[1].startswith("  hint: ")


def test_an_extends_cycle_and_a_missing_explicit_config(tmp_path, capsys):
    write(tmp_path, "a.yaml", "extends: b.yaml\n")
    write(tmp_path, "b.yaml", "extends: a.yaml\n")
    p = write(tmp_path, "cordis.yml", ROWS)
    code, _, err = run(capsys, "lint", "--config", str(tmp_path / "a.yaml"), str(p))
    assert code == 2 and err.startswith(f"dshctl: error: {tmp_path / 'a.yaml'}: extends forms a cycle")
    code, _, err = run(capsys, "lint", "--config", str(tmp_path / "nope.yaml"), str(p))
    assert code == 2 and err.startswith(f"dshctl: error: {tmp_path / 'nope.yaml'}: config file not found")


def test_disable_comments(tmp_path, capsys):
    p = write(tmp_path, "cordis.yml",
              "# dshctl: disable-file=duplicate-id\n"
              "- name: dsh-hello  # dshctl: disable-line=id-missing,schema\n"
              "# dshctl: disable-next-line=id-colon\n"
              "- id: a:b\n  name: x\n"
              "- id: a:b\n  name: y\n"
              "- name: z # dshctl: disable-next-line=no-such-rule\n")
    code, out, _ = run(capsys, "lint", "-f", "json", str(p))
    got = [(d["rule"], d["severity"], d["line"], d["column"], d["message"]) for d in json.loads(out)["findings"]]
    assert code == 1
    assert got == [
        ("unused-disable", "warning", 2, 54,
         "disable-line=schema disables nothing: no schema finding on this line"),
        ("id-colon", "error", 6, 7, "id 'a:b' contains ':'"),
        ("id-missing", "warning", 8, 3, "row has no id; it gets a new random id on every read"),
        ("unused-disable", "warning", 8, 39, "disable-next-line=no-such-rule: no such rule"),
    ]


def test_disable_comments_answer_to_the_config(tmp_path, capsys):
    write(tmp_path, ".dshctl-lint.yaml", "rules:\n  unused-disable: error\n")
    p = write(tmp_path, "cordis.yml", "- id: a  # dshctl: disable-line=id-missing\n  name: x\n")
    assert findings(capsys, str(p)) == (1, [("unused-disable", "error", 1)])
    assert findings(capsys, "--ignore", "unused-disable", str(p)) == (0, [])
    # text that only looks like a directive (no '#' comment) disables nothing
    q = write(tmp_path, "cordis.patch.yml", "- id: a\n  config: {note: 'x#dshctl: disable-line=schema'}\n")
    assert findings(capsys, str(q)) == (0, [])


@pytest.mark.parametrize("pattern,path,expected", [
    ("presets/**", "presets/a/agent.cordis.yml", True),
    ("presets/**", "other/presets/a.yml", False),
    ("**/cordis.yml", "cordis.yml", True),
    ("**/cordis.yml", "a/b/cordis.yml", True),
    ("cordis.yml", "a/b/cordis.yml", True),
    ("legacy", "legacy/x/cordis.yml", True),
    ("profiles/*/cordis.patch.yml", "profiles/web/cordis.patch.yml", True),
    ("profiles/*/cordis.patch.yml", "profiles/web/x/cordis.patch.yml", False),
    ("profiles/", "profiles/web/cordis.patch.yml", True),
    ("*.overlay.yml", "a/b.overlay.yml", True),
    ("a?c.yml", "abc.yml", True),
    ("a?c.yml", "a/c.yml", False),
])
def test_glob_match(pattern, path, expected):
    assert glob_match(pattern, PurePosixPath(path)) is expected


def test_config_is_found_from_a_symlinked_file_s_target_and_through_linked_directories(tmp_path, capsys):
    """A linked file takes the config of its target's directory; a linked directory is resolved too,
    and two files of one directory share the (cached) lookup."""
    write(tmp_path, "real/.dshctl-lint.yaml", "rules:\n  id-colon: warning\n")
    target = write(tmp_path, "real/cordis.yml", ROWS)
    write(tmp_path, "elsewhere/.dshctl-lint.yaml", "rules:\n  id-missing: off\n")
    link = tmp_path / "elsewhere" / "cordis.yml"
    link.symlink_to(target)
    neighbour = write(tmp_path, "elsewhere/agent.cordis.yml", ROWS)
    (tmp_path / "linkdir").symlink_to(tmp_path / "real", target_is_directory=True)
    expected_real = (0, [("id-missing", "warning", 1), ("id-colon", "warning", 2)])
    assert findings(capsys, str(link)) == expected_real
    assert findings(capsys, str(tmp_path / "linkdir" / "cordis.yml")) == expected_real
    code, out, err = run(capsys, "lint", "-f", "json", str(link), str(neighbour))
    by_file = {}
    for d in json.loads(out)["findings"]:
        by_file.setdefault(Path(d["file"]).name, []).append((d["rule"], d["severity"]))
    assert by_file == {"cordis.yml": [("id-missing", "warning"), ("id-colon", "warning")],
                       "agent.cordis.yml": [("id-colon", "error")]}


def _link_tree(root: Path) -> None:
    for d in ("a/b/c", "a/x", "l/m"):
        (root / d).mkdir(parents=True)
    for link, target in (("lb", "a/b"), ("l/up", "../a"), ("dang", "nowhere"), ("loop2", "loop1"),
                         ("loop1", "loop2"), ("a/b/self", ".")):
        (root / link).symlink_to(target)


_SEGMENTS = ["a", "b", "c", "x", "l", "m", "lb", "up", "self", "..", ".", "dang", "loop1", "missing"]


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(_SEGMENTS), min_size=1, max_size=6), st.booleans())
def test_directory_resolution_from_cached_parents_equals_resolve(tmp_path_factory, segments, absolute):
    """The resolver builds a directory's resolved path from its parent's (one lstat each): always
    what Path.resolve gives, through links, dangling links, loops and '..'."""
    root = tmp_path_factory.mktemp("links")
    _link_tree(root)
    resolver = ConfigResolver(RULE_IDS)
    cwd = os.getcwd()
    os.chdir(root)
    try:
        path = Path(root if absolute else ".", *segments)
        for prefix in [Path(*path.parts[:i]) for i in range(1, len(path.parts) + 1)] + [path]:
            assert resolver._resolved_dir(prefix) == resolved(prefix), prefix
    finally:
        os.chdir(cwd)


def test_a_blank_explicit_config_is_named_as_blank(tmp_path, capsys):
    p = write(tmp_path, "cordis.yml", ROWS)
    code, _, err = run(capsys, "lint", "--config", "  ", str(p))
    assert code == 2 and err.startswith("dshctl: error: --config is blank: it names no file\n"), err
