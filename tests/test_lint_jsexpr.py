"""Lint rules js-unsupported and js-ctx-inject: their own examples, row shapes, and the CLI end to end."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dshctl.lint.pipeline import lint_text
from dshctl.lint.registry import all_rules

RULES = {r.id: r for r in all_rules() if r.id in ("js-unsupported", "js-ctx-inject")}
DSHCTL = str(Path(sys.executable).with_name("dshctl"))


def findings(text: str, file: str = "cordis.yml", rule: str | None = None):
    return [d for d in lint_text(text, file) if d.rule.startswith("js-") and d.rule != "js-position"
            and (rule is None or d.rule == rule)]


@pytest.mark.parametrize("rule_id", ["js-unsupported", "js-ctx-inject"])
def test_rule_describes_itself_and_its_examples_hold(rule_id):
    r = RULES[rule_id]
    assert r.level == "warning" and len(r.doc) > 80
    assert findings(r.good, r.example_file, rule_id) == []
    bad = findings(r.bad, r.example_file, rule_id)
    assert len(bad) == 1 and bad[0].severity == "warning"


def test_unsupported_expression_is_reported_with_the_spec_text():
    text = ("- id: group\n  name: cordis:group\n  group: true\n  config:\n"
            "    - id: web\n      name: '@x/web'\n      disabled: !!js process.env.A + 1\n"
            "      config:\n        list:\n          - !!js \"'a' == 'b'\"\n          - ok\n")
    diags = findings(text, rule="js-unsupported")
    assert [(d.line, d.column, d.message, d.json_path) for d in diags] == [
        (7, 17, 'unsupported !!js expression in row "web" (@x/web) at disabled: process.env.A + 1',
         "$[0].config[0].disabled"),
        (10, 13, """unsupported !!js expression in row "web" (@x/web) at config.list.0: 'a' == 'b'""",
         "$[0].config[0].config.list[0]"),
    ]
    assert "column 15 of the expression: operator '+' is not supported" in diags[0].hint
    assert "loose equality '==' is not supported; use '==='" in diags[1].hint


def test_patch_inserts_and_overrides_are_checked_once():
    text = ("- id: base-row\n  config:\n    a: !!js foo\n"
            "- after: x\n  insert:\n    - id: new\n      name: pkg\n      config: {b: !!js \"'x'\"}\n"
            "    - id: other\n      name: pkg\n      disabled: !!js bar()\n")
    diags = findings(text, "cordis.patch.yml", "js-unsupported")
    assert [d.message.split(" at ")[0] for d in diags] == [
        'unsupported !!js expression in row "base-row" (<no name>)',
        'unsupported !!js expression in row "other" (pkg)',
    ]


def test_group_and_include_config_is_not_evaluated():
    text = ("- id: inc\n  name: cordis:include\n  config: {path: !!js foo}\n"
            "- id: g\n  name: whatever\n  group: true\n  config: []\n")
    assert findings(text, rule="js-unsupported") == []


def test_ctx_service_must_be_injected():
    text = ("- id: web\n  name: '@x/web'\n  inject: [webStartup]\n  disabled: !!js ctx.webStartup.off\n"
            "  config:\n    port: !!js ctx.webStartup.port ?? ctx.other.port\n"
            "    host: !!js ctx.get('other').host\n")
    diags = findings(text, rule="js-ctx-inject")
    assert [d.message for d in diags] == [
        '!!js evaluation failed in row "web" (@x/web) at disabled: ctx.webStartup is not available in '
        "'disabled' (no fiber)",
        '!!js evaluation failed in row "web" (@x/web) at config.port: ctx.other is not available: '
        "'other' is not in the row's inject",
    ]
    assert diags[0].hint == "use ctx.get('webStartup') in disabled"


def test_ctx_inject_as_a_mapping_counts():
    text = "- id: w\n  name: p\n  inject: {svc: {required: true}}\n  config: {a: !!js ctx.svc.x}\n"
    assert findings(text, rule="js-ctx-inject") == []


def test_cli_reports_js_findings(tmp_path):
    path = tmp_path / "cordis.yml"
    path.write_text("- id: web\n  name: '@x/web'\n  config:\n    port: !!js Number(process.env.PORT)\n")
    plain = subprocess.run([DSHCTL, "lint", str(path)], capture_output=True, text=True,
                           env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin"})
    assert plain.returncode == 0  # warnings only
    assert (f"{path}:4:11: warning [js-unsupported] unsupported !!js expression in row \"web\" "
            "(@x/web) at config.port: Number(process.env.PORT)") in plain.stdout
    as_json = subprocess.run([DSHCTL, "lint", "--format", "json", str(path)], capture_output=True,
                             text=True)
    [diag] = [d for d in json.loads(as_json.stdout)["findings"] if d["rule"] == "js-unsupported"]
    assert diag["json_path"] == "$[0].config.port" and diag["line"] == 4
