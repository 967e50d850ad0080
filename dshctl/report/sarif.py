"""SARIF 2.1.0: one run; every rule with its documentation; one result per diagnostic.

Columns are UTF-16 code units (``columnKind: utf16CodeUnits``), what editors and GitHub count in, so
a finding after non-ASCII text points at the same character there; dshctl's own columns count code
points, and are converted from the file's text. Every result has a region (line 1, column 1 for a
finding about the whole file).
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

TYPE_CHECKING = False  # typing is not imported at run time (a cached lint's start-up)
if TYPE_CHECKING:
    from typing import IO, Sequence

from dshctl import PROJECT_URL, __version__
from dshctl.core.diagnostics import Diagnostic
from dshctl.core.yaml.jsvalue import json_dumps

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
RULES_DOC = f"{PROJECT_URL}/blob/main/docs/rules.md"
_LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def _uri(file: str) -> str:
    # Relative paths stay relative (GitHub code scanning resolves them against the checkout).
    p = Path(file)
    return p.as_uri() if p.is_absolute() else p.as_posix()


def rule_name(rule_id: str) -> str:
    """SARIF's ``name``: the readable identifier beside the opaque ``id``, in the UpperCamelCase the
    SARIF spec suggests (``duplicate-id`` -> ``DuplicateId``); code scanning shows it as the rule."""
    return "".join(part[:1].upper() + part[1:] for part in rule_id.replace("_", "-").split("-") if part)


def rule_descriptor(rule) -> dict:
    """reportingDescriptor for one lint rule: its doc, and its examples as help."""
    first = rule.doc.split(". ")[0].rstrip(".") + "."
    text = (f"{rule.doc}\n\nPasses ({rule.example_file}):\n{_indent(rule.good)}\n"
            f"Fails ({rule.example_file}):\n{_indent(rule.bad)}")
    fence = "json" if rule.example_file.endswith(".json") else "yaml"
    markdown = (f"{rule.doc}\n\nPasses (`{rule.example_file}`):\n\n```{fence}\n{rule.good.rstrip()}\n```\n\n"
                f"Fails (`{rule.example_file}`):\n\n```{fence}\n{rule.bad.rstrip()}\n```\n")
    return {"id": rule.id, "name": rule_name(rule.id),
            "shortDescription": {"text": first}, "fullDescription": {"text": rule.doc},
            "help": {"text": text, "markdown": markdown},
            "helpUri": f"{RULES_DOC}#{rule.id}",
            "defaultConfiguration": {"level": _LEVELS.get(rule.level, "warning")}}


def other_descriptor(rule_id: str) -> dict:
    """A finding from a checker outside the lint registry (``dshctl preset lint``'s root checks)."""
    text = f"{rule_id}: reported by dshctl preset lint, which checks whole preset roots."
    uri = f"{PROJECT_URL}/blob/main/docs/presets.md"
    return {"id": rule_id, "name": rule_name(rule_id), "shortDescription": {"text": text},
            "fullDescription": {"text": text},
            "help": {"text": f"{text} See {uri}.", "markdown": f"{text} See [presets.md]({uri})."},
            "helpUri": uri}


def _indent(text: str) -> str:
    return "".join(f"    {ln}\n" for ln in text.rstrip("\n").split("\n"))


@lru_cache(maxsize=256)
def _lines(file: str) -> tuple[str, ...] | None:
    try:
        return tuple(Path(file).read_text(encoding="utf-8-sig").splitlines())
    except (OSError, UnicodeDecodeError, ValueError):
        return None


def utf16_column(file: str, line: int, column: int) -> int:
    """``column`` (code points, 1-based) on ``line`` of ``file`` as UTF-16 code units."""
    lines = _lines(file)
    if not lines or line > len(lines):
        return column
    before = lines[line - 1][: column - 1]
    if before.isascii():
        return column
    return len(before.encode("utf-16-le")) // 2 + 1 + max(0, column - 1 - len(before))


def _region(d: Diagnostic) -> dict:
    if not d.line:
        return {"startLine": 1, "startColumn": 1}
    return {"startLine": d.line, "startColumn": utf16_column(d.file, d.line, max(d.column, 1))}


def to_sarif(diags: Sequence[Diagnostic]) -> dict:
    from dshctl.lint import all_rules  # importing dshctl.lint registers the built-in rules

    rules = all_rules()
    descriptors = [rule_descriptor(r) for r in rules]
    known = {r.id for r in rules}
    descriptors += [other_descriptor(rid) for rid in sorted({d.rule for d in diags} - known)]
    index = {d["id"]: i for i, d in enumerate(descriptors)}
    results = []
    for d in diags:
        text = d.message + (f" (hint: {d.hint})" if d.hint else "")
        result = {"ruleId": d.rule, "ruleIndex": index[d.rule], "level": _LEVELS.get(d.severity, "warning"),
                  "message": {"text": text},
                  "locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(d.file)},
                                                      "region": _region(d)}}],
                  "properties": {"jsonPath": d.json_path}}
        results.append(result)
    _lines.cache_clear()
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "dshctl", "version": __version__, "semanticVersion": __version__,
                                "informationUri": PROJECT_URL,
                                "rules": descriptors}},
            "columnKind": "utf16CodeUnits",
            "results": results,
        }],
    }


def write(diags: Sequence[Diagnostic], stream: IO[str], *, files: int | None = None) -> None:
    stream.write(json_dumps(to_sarif(diags), indent=2) + "\n")
