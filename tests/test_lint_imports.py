"""Import budget of a lint run where every file hits the result cache: nothing but discovery, the rule
policies and the cache (no YAML dialect, ruamel, jsonschema or rule module); and the rule ids the
light half (lint/plan.py) knows without importing the rules agree with the registry."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from dshctl.lint import RULES
from dshctl.lint.plan import RULE_IDS

from test_cli_conventions import clean_env

# Never imported when every file is a cache hit: the parser, schema validation, the rules.
MISS_ONLY = ("ruamel", "jsonschema", "referencing", "dshctl.core.yaml.dialect", "dshctl.core.yaml.jsyaml",
             "dshctl.core.yaml.blockscan",
             "dshctl.core.jsexpr", "dshctl.core.schemas", "dshctl.core.schemacheck", "dshctl.core.presets",
             "dshctl.lint.pipeline", "dshctl.lint.registry", "dshctl.lint.rules")

RUN_CACHED = """
import json, sys
from dshctl.lint.parallel import run_cached
from dshctl.lint.plan import LintOptions
result = run_cached(sys.argv[1:], LintOptions())
print(json.dumps({"files": result.files, "diags": [d.message for d in result.diagnostics],
                  "modules": sorted(sys.modules)}))
"""


def under(modules, *packages: str) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in packages))


def write_inputs(root: Path) -> Path:
    for i in range(3):
        d = root / "presets" / f"p{i}"
        d.mkdir(parents=True)
        (d / "agent.cordis.yml").write_text(f"- id: row-{i}\n  name: '@x/p{i}'\n"
                                            "  config:\n    on: !!js process.env.X === '1'\n")
        (d / "preset.yml").write_text(f"name: p{i}\n")
    (root / "presets" / "cordis.patch.yml").write_text("- id: row-0\n  disabled: maybe\n")  # a finding
    return root / "presets"


def _run(code: str, *args: str, env: dict) -> dict:
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_the_light_half_knows_every_rule_id_in_registry_order():
    assert RULE_IDS == tuple(RULES)


def test_an_all_hit_run_imports_no_parser_schema_or_rule(tmp_path):
    target = write_inputs(tmp_path)
    env = clean_env(XDG_CACHE_HOME=str(tmp_path / "cache"))
    cold = _run(RUN_CACHED, str(target), env=env)  # fills the cache
    # the probe can see a miss's imports (the block-style reader parses these without ruamel)
    assert under(cold["modules"], "dshctl.core.yaml.dialect", "dshctl.lint.rules")
    warm = _run(RUN_CACHED, str(target), env=env)
    assert (warm["files"], warm["diags"]) == (cold["files"], cold["diags"]) and warm["diags"]
    assert under(warm["modules"], *MISS_ONLY) == []


CLI = """
import json, sys
from dshctl.cli.app import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
sys.stderr.write("\\nMODULES " + json.dumps({"code": code, "modules": sorted(sys.modules)}) + "\\n")
"""


def _cli(*args: str, env: dict) -> tuple[str, int, list[str]]:
    proc = subprocess.run([sys.executable, "-c", CLI, *args], capture_output=True, text=True, env=env,
                          timeout=120)
    marker = proc.stderr.rindex("\nMODULES ")
    found = json.loads(proc.stderr[marker + len("\nMODULES "):])
    return proc.stdout, found["code"], found["modules"]


def test_dshctl_lint_with_every_file_cached_imports_no_parser_schema_rule_or_typer(tmp_path):
    target = write_inputs(tmp_path)
    env = clean_env(XDG_CACHE_HOME=str(tmp_path / "cache"))
    cold_out, cold_code, cold_modules = _cli("lint", str(target), env=env)
    assert "dshctl.core.yaml.dialect" in cold_modules and "dshctl.lint.rules" in cold_modules
    out, code, modules = _cli("lint", str(target), env=env)
    assert (out, code) == (cold_out, cold_code) and code == 1 and "[schema]" in out
    assert under(modules, *MISS_ONLY, "typer", "click", "rich", "dataclasses") == []  # ~8 ms of start-up


CLEAN_RUN = """
import sys
from dshctl.lint.parallel import run_cached
from dshctl.lint.plan import LintOptions
result = run_cached(sys.argv[1:], LintOptions())
had_json = "json" in sys.modules        # before this probe imports it to answer
import json
print(json.dumps({"files": result.files, "diags": len(result.diagnostics), "json": had_json}))
"""


def test_a_cached_lint_of_a_clean_tree_imports_no_json(tmp_path):
    target = write_inputs(tmp_path)
    (target / "cordis.patch.yml").write_text("- id: row-0\n  disabled: true\n")   # no finding now
    env = clean_env(XDG_CACHE_HOME=str(tmp_path / "cache"))
    cold = _run(CLEAN_RUN, str(target), env=env)
    assert cold["diags"] == 0 and cold["files"] == 7
    warm = _run(CLEAN_RUN, str(target), env=env)
    assert (warm["files"], warm["diags"], warm["json"]) == (7, 0, False)   # clean entries are words
