"""Every reporter's output, pinned for a fixed list of diagnostics."""
from __future__ import annotations

import io
import json

import pytest

from dshctl import __version__
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


def test_json():
    report = json.loads(rendered("json"))
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


def test_sarif_structure():
    sarif = json.loads(rendered("sarif"))
    assert sarif["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    assert sarif["version"] == "2.1.0"
    (run,) = sarif["runs"]
    driver = run["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("dshctl", __version__)
    assert [r["id"] for r in driver["rules"]] == ["id-missing", "not-a-manifest", "schema"]
    assert driver["rules"][2]["shortDescription"]["text"].startswith("The file must match the JSON Schema")
    assert run["results"] == [
        {"ruleId": "id-missing", "ruleIndex": 0, "level": "warning", "message": {"text": "first\nsecond"},
         "locations": [{"physicalLocation": {"artifactLocation": {"uri": "a,b:c%.yml"},
                                             "region": {"startLine": 2, "startColumn": 1}}}],
         "properties": {"jsonPath": "$[0]"}},
        {"ruleId": "schema", "ruleIndex": 2, "level": "error",
         "message": {"text": "missing required key 'name' (hint: One plugin instance.)"},
         "locations": [{"physicalLocation": {"artifactLocation": {"uri": "dir/cordis.patch.yml"},
                                             "region": {"startLine": 3, "startColumn": 5}}}],
         "properties": {"jsonPath": "$[0].insert[0]"}},
        {"ruleId": "not-a-manifest", "ruleIndex": 1, "level": "note", "message": {"text": "not a manifest"},
         "locations": [{"physicalLocation": {"artifactLocation": {"uri": "x/package.json"}}}],
         "properties": {"jsonPath": "$"}},
    ]


def test_sarif_absolute_paths_become_file_uris(tmp_path):
    out = io.StringIO()
    render([Diagnostic(str(tmp_path / "a b.yml"), 1, 1, "parse", "error", "m")], "sarif", out)
    uri = json.loads(out.getvalue())["runs"][0]["results"][0]["locations"][0]["physicalLocation"][
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
    assert json.loads(out.getvalue()) == {
        "version": 1, "summary": {"files": 3, "errors": 0, "warnings": 0, "infos": 0}, "findings": []}
