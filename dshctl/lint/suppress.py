"""Disable comments: ``# dshctl: disable-line=RULE[,RULE]``, ``disable-next-line=``, ``disable-file=``.

A post-pass over one file's findings (it needs only the file's text): a finding whose rule a comment
disables for its line (or the whole file) is dropped, and a disable that dropped nothing, or names no
known rule, becomes an ``unused-disable`` finding (a warning), as ruff's RUF100 and eslint's
``--report-unused-disable-directives`` do. A directive is a YAML comment: ``#`` at the start of a line
or after whitespace.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from dshctl.core.diagnostics import Diagnostic
from dshctl.errors import Loc

RULE_ID = "unused-disable"
_DIRECTIVE = re.compile(r"(?:^|(?<=\s))#\s*dshctl:\s*(disable-line|disable-next-line|disable-file)"
                        r"\s*=\s*([A-Za-z0-9_-]+(?:\s*,\s*[A-Za-z0-9_-]+)*)")


@dataclass(frozen=True)
class Disable:
    kind: str  # disable-line, disable-next-line or disable-file
    rule: str
    line: int  # the comment's line
    column: int  # where the rule id is written

    def covers(self, d: Diagnostic) -> bool:
        if d.rule != self.rule:
            return False
        if self.kind == "disable-file":
            return True
        target = self.line + (1 if self.kind == "disable-next-line" else 0)
        return d.line == target


def directives(text: str) -> list[Disable]:
    found = []
    if "dshctl:" not in text:
        return found
    for number, line in enumerate(text.splitlines(), 1):
        for m in _DIRECTIVE.finditer(line):
            for part in re.finditer(r"[A-Za-z0-9_-]+", m.group(2)):
                found.append(Disable(m.group(1), part.group(), number, m.start(2) + part.start() + 1))
    return found


def filter_disabled(diags: Iterable[Diagnostic], text: str | None, path: str,
                    known_rules: frozenset[str]) -> list[Diagnostic]:
    """The findings no comment disables, plus one ``unused-disable`` per disable that did nothing."""
    diags = list(diags)
    disables = directives(text) if text else []
    if not disables:
        return diags
    used: set[Disable] = set()
    kept = []
    for d in diags:
        hit = [x for x in disables if x.covers(d)]
        used.update(hit)
        if not hit:
            kept.append(d)
    for x in disables:
        if x in used:
            continue
        if x.rule not in known_rules:
            message = f"{x.kind}={x.rule}: no such rule"
            hint = "run 'dshctl lint --list-rules' for the rule ids"
        else:
            where = "in this file" if x.kind == "disable-file" else \
                "on this line" if x.kind == "disable-line" else "on the next line"
            message = f"{x.kind}={x.rule} disables nothing: no {x.rule} finding {where}"
            hint = "remove the disable comment (or this rule from it)"
        kept.append(Diagnostic.at(Loc(path, x.line, x.column), RULE_ID, "warning", message, hint=hint))
    return kept
