"""The lint pipeline: discover -> load -> check -> diagnostics (a reporter renders them).

Like check-jsonschema, loading and checking are separate stages: a file that fails to load gets its
parse diagnostic and only the rules that do not need a value; everything else runs on loaded files.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
import json
from typing import Any, Iterable, Mapping

from dshctl.core.yaml import filekinds as fk
from dshctl.core.yaml.dialect import decode_text, load_json, load_yaml, read_text
from dshctl.core.diagnostics import Diagnostic
from dshctl.errors import DshctlError, Loc, ParseError, UsageError
from dshctl.lint.config import ConfigResolver, RulePolicy
from dshctl.lint.registry import RULES, LintFile, all_rules
from dshctl.lint.suppress import filter_disabled

SKIP_DIRS = fk.SKIP_DIRS  # directories never worth descending into


def discover(paths: Iterable[str | Path]) -> list[tuple[Path, bool]]:
    """Files to lint with whether each was named explicitly; a walk keeps the dsh kinds (settings
    files only inside a dsh home)."""
    return fk.discover(paths, kind_of)


def load(path: str, text: str | None, kind: str, data: bytes | None = None) -> LintFile:
    """Stage 1: parse ``text`` (else ``data``, the bytes a cache key was made of, else the file) in the
    dialect of ``kind`` and decide which schemas apply."""
    lf = LintFile(path=path, kind=kind, text=text)
    try:
        if text is None:
            lf.text = text = read_text(path) if data is None else decode_text(data, path)
        if kind == fk.PACKAGE_JSON or (kind == fk.SETTINGS and path.endswith(".json")):
            lf.document = load_json(text, path)
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


@dataclass(frozen=True)
class LintOptions:
    """What the command line adds to the config files."""

    config: Path | None = None  # --config: use this file for every path
    select: frozenset[str] | None = None
    ignore: frozenset[str] = frozenset()
    kind: str | None = None  # --kind: the kind of every file named explicitly (and stdin)


@dataclass
class LintResult:
    diagnostics: list[Diagnostic]
    files: int  # files checked
    skipped: list[str] = field(default_factory=list)  # named explicitly, but no dsh kind


class _Policies:
    """The rule policy for each file: its config (found upward, or --config) plus --select/--ignore."""

    def __init__(self, options: LintOptions):
        self.options = options
        self.resolver = ConfigResolver(RULES, options.config)

    def for_path(self, path: Path) -> RulePolicy:
        config = self.resolver.for_path(path)
        return RulePolicy.build(config.levels_for(path), self.options.select, self.options.ignore, RULES)


def policy_for(path: Path, options: LintOptions | None = None) -> RulePolicy:
    """The rule levels in force for ``path`` (``dshctl lint --list-rules`` shows them)."""
    return _Policies(options or LintOptions()).for_path(path)


def lint_text(text: str, path: str | Path, *, kind: str | None = None,
              options: LintOptions | None = None) -> list[Diagnostic]:
    """Lint ``text`` as if it were the file ``path`` (its name decides the kind unless ``kind`` is
    given). Without ``options`` no config file is read: the rules run at their own levels."""
    kind = kind or kind_of(Path(path))
    if kind is None:
        raise DshctlError("not a file kind dshctl lints", loc=Loc(str(path)), hint=KIND_HINT)
    policy = _Policies(options).for_path(Path(path)) if options else RulePolicy({})
    return sorted(lint_file(str(path), text, kind, policy), key=Diagnostic.sort_key)


def run_lint(paths: Iterable[str | Path], options: LintOptions | None = None) -> LintResult:
    """Lint files and directories under the config that applies to each."""
    options = options or LintOptions()
    policies = _Policies(options)
    result = LintResult([], 0)
    for path, explicit in discover(paths):
        kind = (options.kind if explicit else None) or kind_of(path)
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

def rule_config_of(options: LintOptions) -> dict:
    """The command line's part of the rule configuration as JSON-like data (a cache key input)."""
    return {"config": str(options.config) if options.config else None,
            "select": sorted(options.select) if options.select is not None else None,
            "ignore": sorted(options.ignore), "kind": options.kind}


def options_from(rule_config: Mapping[str, Any] | None) -> LintOptions:
    rc = rule_config or {}
    return LintOptions(config=Path(rc["config"]) if rc.get("config") else None,
                       select=frozenset(rc["select"]) if rc.get("select") is not None else None,
                       ignore=frozenset(rc.get("ignore") or ()), kind=rc.get("kind"))


def policies_for(rule_config: Mapping[str, Any] | None) -> "_Policies":
    return _Policies(options_from(rule_config))


def job_salt(path: Path, explicit: bool, options: LintOptions, policies: "_Policies") -> str | None:
    """What besides the file's bytes decides its result: its kind and the levels in force for it
    (config files found upward included). None: no dsh kind (skipped)."""
    kind = (options.kind if explicit else None) or kind_of(path)
    if kind is None:
        return None
    levels = policies.for_path(path).levels
    return kind + "\0" + json.dumps(sorted(levels.items()))


def lint_one(path: str, explicit: bool, policies: "_Policies", data: bytes | None = None
             ) -> tuple[list[Diagnostic], bool]:
    """One file's findings and whether it counts as checked (a walked package.json that is no dsh
    manifest does not)."""
    kind = (policies.options.kind if explicit else None) or kind_of(Path(path))
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


# ---------------------------------------------------------------------------------------------
# kinds

KIND_HINT = ("dshctl lints cordis.yml, *.cordis.yml, cordis.patch*.yml, *.overlay.yml, preset.yml, "
             "package.json and $DSH_HOME/settings.yaml; use --kind to lint another name as one of them")
KIND_NAMES = {fk.ENTRY_LIST: fk.ENTRY_LIST, fk.PATCH_LIST: fk.PATCH_LIST, fk.PRESET: fk.PRESET,
              fk.PACKAGE_JSON: fk.PACKAGE_JSON, fk.SETTINGS: fk.SETTINGS, "settings.yaml": fk.SETTINGS,
              "cordis": fk.ENTRY_LIST, "cordis.yml": fk.ENTRY_LIST, "agent.cordis.yml": fk.ENTRY_LIST,
              "patch": fk.PATCH_LIST, "cordis.patch.yml": fk.PATCH_LIST, "overlay": fk.PATCH_LIST,
              "preset.yml": fk.PRESET, "profile": fk.PACKAGE_JSON, "bundle": fk.PACKAGE_JSON}


def kind_named(name: str) -> str:
    """The kind ``--kind NAME`` means (UsageError for an unknown name)."""
    if name in KIND_NAMES:
        return KIND_NAMES[name]
    raise UsageError(f"unknown kind {name!r}",
                     hint="use one of: entry-list, cordis.patch, preset, package.json, settings")


def kind_of(path: Path) -> str | None:
    """The kind of ``path`` by its name; ``settings.yaml`` counts only in a dsh home."""
    kind = fk.kind_of(path)
    if kind is None and path.name in fk.SETTINGS_NAMES and is_dsh_home(path.parent):
        return fk.SETTINGS
    return kind


def is_dsh_home(directory: Path) -> bool:
    """``$DSH_HOME`` (or ``~/.dsh``), or a directory laid out like one (``profiles/``, ``.agent-presets/``)."""
    from dshctl.core.home import resolve_home

    try:
        if directory.resolve() == resolve_home().resolve():
            return True
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop
        return False
    return (directory / "profiles").is_dir() or (directory / ".agent-presets").is_dir()
