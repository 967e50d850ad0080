"""Every reporter's output, pinned for a fixed list of diagnostics."""
from __future__ import annotations

import io
import json
import re

import pytest

from pathlib import Path

from dshctl import PROJECT_URL, __version__
from dshctl.lint import all_rules
from dshctl.core.diagnostics import Diagnostic
from dshctl.errors import UsageError
from dshctl.report import FORMATS, render, resolve_format

DIAGS = [
    Diagnostic("x/package.json", 0, 0, "not-a-manifest", "info", "not a manifest"),
    Diagnostic("a,b:c%.yml", 2, 1, "id-missing", "warning", "first\nsecond", None, "$[0]"),
    Diagnostic("dir/cordis.patch.yml", 3, 5, "schema", "error", "missing required key 'name'",
               "One plugin instance.", "$[0].insert[0]"),
]


def rendered(fmt: str) -> str:
    out = io.StringIO()
    render(DIAGS, fmt, out)
    return out.getvalue()


def test_text():
    assert rendered("text") == (
        "a,b:c%.yml:2:1: warning [id-missing] first\nsecond\n"
        "dir/cordis.patch.yml:3:5: error [schema] missing required key 'name'\n"
        "  hint: One plugin instance.\n"
        "x/package.json: info [not-a-manifest] not a manifest\n")


LINT_REPORT_SCHEMA = json.loads((Path(__file__).resolve().parents[1] / "schemas" / "lint-report.schema.json")
                                .read_text())


def valid_report(text: str) -> dict:
    from jsonschema import Draft202012Validator

    report = json.loads(text)
    Draft202012Validator.check_schema(LINT_REPORT_SCHEMA)
    errors = list(Draft202012Validator(LINT_REPORT_SCHEMA).iter_errors(report))
    assert errors == [], errors[0].message
    return report


def test_json():
    report = valid_report(rendered("json"))
    assert (report["version"], report["summary"]) == (1, {"errors": 1, "warnings": 1, "infos": 1})
    assert report["findings"] == [
        {"file": "a,b:c%.yml", "line": 2, "column": 1, "rule": "id-missing", "severity": "warning",
         "message": "first\nsecond", "hint": None, "json_path": "$[0]"},
        {"file": "dir/cordis.patch.yml", "line": 3, "column": 5, "rule": "schema", "severity": "error",
         "message": "missing required key 'name'", "hint": "One plugin instance.",
         "json_path": "$[0].insert[0]"},
        {"file": "x/package.json", "line": 0, "column": 0, "rule": "not-a-manifest", "severity": "info",
         "message": "not a manifest", "hint": None, "json_path": "$"},
    ]


def test_github_annotations_escape_per_runner_rules():
    assert rendered("github") == (
        "::warning file=a%2Cb%3Ac%25.yml,line=2,col=1,title=dshctl [id-missing]::first%0Asecond\n"
        "::error file=dir/cordis.patch.yml,line=3,col=5,title=dshctl [schema]::"
        "missing required key 'name'%0AOne plugin instance.\n"
        "::notice file=x/package.json,title=dshctl [not-a-manifest]::not a manifest\n")


SARIF_SCHEMA = json.loads((Path(__file__).parent / "fixtures" / "sarif" / "sarif-schema-2.1.0.json").read_text())


def valid_sarif(text: str) -> dict:
    """Parsed SARIF, validated against the official OASIS 2.1.0 schema (draft-04)."""
    from jsonschema import Draft4Validator

    sarif = json.loads(text)
    errors = sorted(Draft4Validator(SARIF_SCHEMA).iter_errors(sarif), key=str)
    assert errors == [], errors[0].message
    return sarif


def test_sarif_structure():
    sarif = valid_sarif(rendered("sarif"))
    assert sarif["$schema"].startswith("https://docs.oasis-open.org/sarif/sarif/v2.1.0/")
    assert sarif["version"] == "2.1.0"
    (run,) = sarif["runs"]
    driver = run["tool"]["driver"]
    assert (driver["name"], driver["version"], driver["informationUri"]) == ("dshctl", __version__, PROJECT_URL)
    assert run["columnKind"] == "utf16CodeUnits"
    ids = [r["id"] for r in driver["rules"]]
    assert ids == [r.id for r in all_rules()]
    schema_rule = driver["rules"][ids.index("schema")]
    assert schema_rule["shortDescription"]["text"].startswith("The file must match the JSON Schema")
    assert run["results"] == [
        {"ruleId": "id-missing", "ruleIndex": ids.index("id-missing"), "level": "warning",
         "message": {"text": "first\nsecond"},
         "locations": [{"physicalLocation": {"artifactLocation": {"uri": "a,b:c%.yml"},
                                             "region": {"startLine": 2, "startColumn": 1}}}],
         "properties": {"jsonPath": "$[0]"}},
        {"ruleId": "schema", "ruleIndex": ids.index("schema"), "level": "error",
         "message": {"text": "missing required key 'name' (hint: One plugin instance.)"},
         "locations": [{"physicalLocation": {"artifactLocation": {"uri": "dir/cordis.patch.yml"},
                                             "region": {"startLine": 3, "startColumn": 5}}}],
         "properties": {"jsonPath": "$[0].insert[0]"}},
        {"ruleId": "not-a-manifest", "ruleIndex": ids.index("not-a-manifest"), "level": "note",
         "message": {"text": "not a manifest"},
         "locations": [{"physicalLocation": {"artifactLocation": {"uri": "x/package.json"},
                                             "region": {"startLine": 1, "startColumn": 1}}}],
         "properties": {"jsonPath": "$"}},
    ]


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.id)
def test_sarif_rule_help_comes_from_the_rule_doc_and_examples(rule):
    from dshctl.report.sarif import rule_descriptor

    d = rule_descriptor(rule)
    assert d["fullDescription"]["text"] == rule.doc and rule.doc.startswith(d["shortDescription"]["text"][:-1])
    assert rule.good.splitlines()[0] in d["help"]["text"] and rule.bad.splitlines()[0] in d["help"]["text"]
    assert f"```yaml\n{rule.bad.rstrip()}\n```" in d["help"]["markdown"] or \
        f"```json\n{rule.bad.rstrip()}\n```" in d["help"]["markdown"]
    assert d["helpUri"] == f"{PROJECT_URL}/blob/main/docs/rules.md#{rule.id}"
    assert f"\n## {rule.id}\n" in RULES_MD


RULES_MD = (Path(__file__).resolve().parents[1] / "docs" / "rules.md").read_text(encoding="utf-8")


def test_docs_rules_md_is_current():
    from dshctl.report.rulesdoc import render as render_rules

    assert RULES_MD == render_rules(), "regenerate: python -m dshctl.report.rulesdoc > docs/rules.md"


def test_project_url_is_pyprojects_homepage():
    import tomllib

    meta = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    assert meta["project"]["urls"]["Homepage"] == PROJECT_URL


def test_sarif_describes_findings_of_preset_lint_too():
    out = io.StringIO()
    render([Diagnostic("root", 0, 0, "preset-skipped", "warning", "skipped x")], "sarif", out)
    run = valid_sarif(out.getvalue())["runs"][0]
    rule = run["tool"]["driver"]["rules"][run["results"][0]["ruleIndex"]]
    assert rule["id"] == "preset-skipped" and rule["helpUri"].endswith("/docs/presets.md")
    assert {"shortDescription", "fullDescription", "help"} <= set(rule)


def test_sarif_columns_are_utf16_after_non_ascii_text(tmp_path):
    """A real lint of a file with an astral character before the finding: SARIF's column is where an
    editor (UTF-16, like LSP and VS Code) shows the node; the text format keeps code points."""
    from dshctl.lint import lint_text

    p = tmp_path / "cordis.yml"
    text = "- id: x\n  name: n\n  inject: [é😀, !!js x]\n"
    p.write_text(text, encoding="utf-8")
    diags = [d for d in lint_text(text, p) if d.rule == "js-position"]
    assert (diags[0].line, diags[0].column) == (3, 16)
    out = io.StringIO()
    render(diags, "sarif", out)
    region = valid_sarif(out.getvalue())["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
    line = text.splitlines()[2]
    assert region == {"startLine": 3, "startColumn": 17}
    assert line.encode("utf-16-le")[(region["startColumn"] - 1) * 2:].decode("utf-16-le").startswith("!!js")


def test_sarif_absolute_paths_become_file_uris(tmp_path):
    out = io.StringIO()
    render([Diagnostic(str(tmp_path / "a b.yml"), 1, 1, "parse", "error", "m")], "sarif", out)
    uri = valid_sarif(out.getvalue())["runs"][0]["results"][0]["locations"][0]["physicalLocation"][
        "artifactLocation"]["uri"]
    assert uri == (tmp_path / "a b.yml").as_uri() and uri.startswith("file:///") and "%20" in uri


@pytest.mark.parametrize("env,expected", [("true", "github"), (None, "text"), ("false", "text")])
def test_auto_picks_github_under_actions(monkeypatch, env, expected):
    if env is None:
        monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    else:
        monkeypatch.setenv("GITHUB_ACTIONS", env)
    assert resolve_format("auto") == expected
    assert rendered("auto") == rendered(expected)


def test_unknown_format_is_a_usage_error():
    assert set(FORMATS) == {"auto", "text", "json", "sarif", "github"}
    with pytest.raises(UsageError, match="unknown format 'xml'"):
        rendered("xml")


def test_empty_list():
    out = io.StringIO()
    render([], "json", out, files=3)
    assert valid_report(out.getvalue()) == {
        "version": 1, "summary": {"files": 3, "errors": 0, "warnings": 0, "infos": 0}, "findings": []}


def test_sarif_rule_names_are_readable_names_not_the_ids():
    driver = valid_sarif(rendered("sarif"))["runs"][0]["tool"]["driver"]
    names = {r["id"]: r["name"] for r in driver["rules"]}
    assert names["duplicate-id"] == "DuplicateId" and names["js-unsupported"] == "JsUnsupported"
    assert all(re.fullmatch(r"(?:[A-Z][a-z0-9]*)+", n) and n != i for i, n in names.items()), names
    assert len(set(names.values())) == len(names)  # still one name per rule
