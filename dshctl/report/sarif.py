"""SARIF 2.1.0: one run, the rules that fired as ``tool.driver.rules``, one result per diagnostic."""
from __future__ import annotations

from pathlib import Path
from typing import IO, Sequence

from dshctl import __version__
from dshctl.core.diagnostics import Diagnostic
from dshctl.core.yaml.jsvalue import json_dumps

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def _uri(file: str) -> str:
    # Relative paths stay relative (GitHub code scanning resolves them against the checkout).
    p = Path(file)
    return p.as_uri() if p.is_absolute() else p.as_posix()


def _rule_doc(rule_id: str) -> str | None:
    from dshctl.lint.registry import RULES, all_rules

    all_rules()
    found = RULES.get(rule_id)
    return found.doc if found else None


def to_sarif(diags: Sequence[Diagnostic]) -> dict:
    rule_ids = sorted({d.rule for d in diags})
    rules = []
    for rid in rule_ids:
        entry = {"id": rid, "name": rid}
        doc = _rule_doc(rid)
        if doc:
            entry["shortDescription"] = {"text": doc.split(". ")[0].rstrip(".") + "."}
            entry["fullDescription"] = {"text": doc}
        rules.append(entry)
    results = []
    for d in diags:
        region = {"startLine": d.line, "startColumn": d.column} if d.line else None
        physical = {"artifactLocation": {"uri": _uri(d.file)}}
        if region:
            physical["region"] = {k: v for k, v in region.items() if v}
        text = d.message + (f" (hint: {d.hint})" if d.hint else "")
        results.append({
            "ruleId": d.rule,
            "ruleIndex": rule_ids.index(d.rule),
            "level": _LEVELS.get(d.severity, "warning"),
            "message": {"text": text},
            "locations": [{"physicalLocation": physical}],
            "properties": {"jsonPath": d.json_path},
        })
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "dshctl", "version": __version__,
                                "informationUri": "https://github.com/deepseek-ai/deepseek-harness",
                                "rules": rules}},
            "results": results,
        }],
    }


def write(diags: Sequence[Diagnostic], stream: IO[str]) -> None:
    stream.write(json_dumps(to_sarif(diags), indent=2) + "\n")
