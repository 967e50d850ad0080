"""The lint pipeline: discover -> load -> check -> diagnostics (a reporter renders them).

Like check-jsonschema, loading and checking are separate stages: a file that fails to load gets its
parse diagnostic and only the rules that do not need a value; everything else runs on loaded files.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Mapping

from dshctl.core.yaml import filekinds as fk
from dshctl.core.yaml.dialect import decode_text, load_json, load_yaml, read_text
from dshctl.core.diagnostics import Diagnostic
from dshctl.errors import DshctlError, Loc, ParseError
from dshctl.lint.config import RulePolicy
from dshctl.lint.plan import (KIND_HINT, LintOptions, LintResult, Policies, discover, job_kind, kind_of,
                              options_from)
from dshctl.lint.registry import RULES, LintFile, all_rules
from dshctl.lint.suppress import filter_disabled
import dshctl.lint.rules  # noqa: E402,F401 - the owner of the built-in rules registers them

SKIP_DIRS = fk.SKIP_DIRS  # directories never worth descending into


def load(path: str, text: str | None, kind: str, data: bytes | None = None) -> LintFile:
    """Stage 1: parse ``text`` (else ``data``, the bytes a cache key was made of, else the file) in the
    dialect of ``kind`` and decide which schemas apply."""
    lf = LintFile(path=path, kind=kind, text=text)
    try:
        if text is None:
            lf.text = text = read_text(path) if data is None else decode_text(data, path)
        if kind == fk.PACKAGE_JSON or (kind == fk.SETTINGS and path.endswith(".json")):
            lf.document = load_json(text, path)
        elif kind == fk.PRESET:  # as dsh and `dshctl preset list` read it: js-yaml's default schema
            from dshctl.core.yaml.default_schema import load_default_yaml

            lf.document = load_default_yaml(text, path)
        else:
            lf.document = load_yaml(text, path, js=kind not in (fk.PRESET, fk.SETTINGS))
    except ParseError as err:
        lf.parse_error = err
        return lf
    if kind == fk.PACKAGE_JSON:
        lf.schemas = fk.manifest_kinds(lf.value)
    elif lf.loaded:
        lf.kind = fk.refine_kind(kind, path, lf.value)
        lf.schemas = [lf.kind]
    return lf


def check(lf: LintFile, select: Iterable[str] | None = None) -> list[Diagnostic]:
    """Stage 2: run every applicable rule (only those in ``select`` when given)."""
    wanted = set(select) if select is not None else None
    diags: list[Diagnostic] = []
    for r in all_rules():
        if lf.kind not in r.kinds or (wanted is not None and r.id not in wanted):
            continue
        if r.needs_value and not lf.loaded:
            continue
        diags.extend(r.run(lf))
    return diags


def finish(lf: LintFile, diags: list[Diagnostic], policy: RulePolicy) -> list[Diagnostic]:
    """Stage 3, post-passes over one file's findings: disable comments, then the configured levels."""
    diags = filter_disabled(diags, lf.text, lf.path, frozenset(RULES))
    return policy.apply(diags)


def lint_file(path: str, text: str | None, kind: str, policy: RulePolicy) -> list[Diagnostic]:
    """Load, check and finish one file under ``policy``."""
    lf = load(path, text, kind)
    return finish(lf, check(lf, _enabled(policy)), policy)


def _enabled(policy: RulePolicy) -> list[str]:
    return [r.id for r in all_rules() if policy.enabled(r.id)]


def lint_text(text: str, path: str | Path, *, kind: str | None = None,
              options: LintOptions | None = None) -> list[Diagnostic]:
    """Lint ``text`` as if it were the file ``path`` (its name decides the kind unless ``kind`` is
    given). Without ``options`` no config file is read: the rules run at their own levels."""
    kind = kind or kind_of(Path(path))
    if kind is None:
        raise DshctlError("not a file kind dshctl lints", loc=Loc(str(path)), hint=KIND_HINT)
    policy = Policies(options).for_path(Path(path)) if options else RulePolicy({})
    return sorted(lint_file(str(path), text, kind, policy), key=Diagnostic.sort_key)


def run_lint(paths: Iterable[str | Path], options: LintOptions | None = None) -> LintResult:
    """Lint files and directories under the config that applies to each."""
    options = options or LintOptions()
    policies = Policies(options)
    result = LintResult([], 0)
    for path, explicit in discover(paths):
        kind = job_kind(path, explicit, options)
        if kind is None:
            result.skipped.append(str(path))  # only explicit files get here: the walk filters by kind
            continue
        policy = policies.for_path(path)
        lf = load(str(path), None, kind)
        if kind == fk.PACKAGE_JSON and not explicit and lf.loaded and not _mentions_dsh(lf.value):
            continue  # an ordinary npm package found while walking: not ours to lint
        result.files += 1
        result.diagnostics.extend(finish(lf, check(lf, _enabled(policy)), policy))
    result.diagnostics.sort(key=Diagnostic.sort_key)
    return result


def lint_paths(paths: Iterable[str | Path], rule_config: Mapping[str, Any] | None = None
               ) -> tuple[list[Diagnostic], int]:
    """Lint files and directories (under ``rule_config``, see ``options_from``); the diagnostics and
    the file count."""
    result = run_lint(paths, options_from(rule_config))
    return result.diagnostics, result.files


# ---------------------------------------------------------------------------------------------
# one file as a job (the result cache and parallel lint, lint/parallel.py, work in these terms)

def lint_one(path: str, explicit: bool, policies: Policies, data: bytes | None = None
             ) -> tuple[list[Diagnostic], bool]:
    """One file's findings and whether it counts as checked (a walked package.json that is no dsh
    manifest does not)."""
    kind = job_kind(Path(path), explicit, policies.options)
    if kind is None:
        return [Diagnostic.at(Loc(path), "file-kind", "error", "not a file kind dshctl lints",
                              hint=KIND_HINT)], False
    policy = policies.for_path(Path(path))
    lf = load(path, None, kind, data)
    if kind == fk.PACKAGE_JSON and not explicit and lf.loaded and not _mentions_dsh(lf.value):
        return [], False  # an ordinary npm package found while walking: not ours to lint
    return finish(lf, check(lf, _enabled(policy)), policy), True


def _mentions_dsh(value) -> bool:
    return isinstance(value, dict) and "dsh" in value
