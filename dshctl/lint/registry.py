"""Self-describing lint rules and the registry that holds them.

A rule is a function over one loaded file plus the facts a user needs: its id, default level, a doc
paragraph and a passing and a failing example (``dshctl lint --list-rules`` prints them, and a test runs
every rule's own examples). To add a rule, write a module in ``dshctl/lint/rules/`` that calls
``@rule(...)`` and list it in ``rules/__init__.py`` (``dshctl.lint`` imports that package, which
registers every built-in rule).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator

from dshctl.core.diagnostics import Diagnostic
from dshctl.core.yaml.dialect import Document
from dshctl.errors import Loc, ParseError


@dataclass
class LintFile:
    """One file on its way through the pipeline: loaded (or not), with its kind and schemas."""

    path: str
    kind: str  # a filekinds constant
    text: str | None = None
    document: Document | None = None
    parse_error: ParseError | None = None
    schemas: list[str] = field(default_factory=list)  # schema names the value must satisfy

    @property
    def value(self) -> Any:
        return self.document.value if self.document else None

    @property
    def loaded(self) -> bool:
        """True when there is a value to check (parsed, and not an empty stream)."""
        return self.document is not None and not self.document.empty


@dataclass(frozen=True)
class Finding:
    """What a check reports; the rule adds its id and level."""

    loc: Loc | None
    message: str
    hint: str | None = None
    json_path: str = "$"
    severity: str | None = None  # overrides the rule's level (e.g. schema warnings for preset.yml)


Check = Callable[[LintFile], Iterable[Finding]]


@dataclass(frozen=True)
class Rule:
    id: str
    level: str  # default severity: error, warning or info
    doc: str
    kinds: frozenset[str]
    check: Check
    example_file: str  # file name the examples are linted as (decides the kind)
    good: str
    bad: str
    needs_value: bool = True  # False: runs even when the file failed to load

    def run(self, lf: LintFile) -> Iterator[Diagnostic]:
        for f in self.check(lf):
            yield Diagnostic.at(f.loc, self.id, f.severity or self.level, f.message,
                                hint=f.hint, json_path=f.json_path, file=lf.path)


RULES: dict[str, Rule] = {}


def rule(id: str, *, level: str, kinds: Iterable[str], example_file: str, good: str, bad: str,
         needs_value: bool = True) -> Callable[[Check], Check]:
    """Register ``check`` as rule ``id``; its docstring is the rule's doc."""
    def decorate(check: Check) -> Check:
        if id in RULES:
            raise ValueError(f"lint rule {id!r} registered twice")
        RULES[id] = Rule(id, level, " ".join((check.__doc__ or "").split()), frozenset(kinds), check,
                         example_file, good, bad, needs_value)
        return check
    return decorate


def all_rules() -> list[Rule]:
    """Every registered rule. The built-in ones are fed in by ``dshctl.lint`` importing ``lint.rules``:
    the registry knows no rule module (the package that owns the rules registers them)."""
    return list(RULES.values())
