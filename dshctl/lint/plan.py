"""What to lint and under which rules, without the parser: discovery, kinds, options, rule policies.

Everything a run needs before it knows whether a file's result is cached lives here, so that a run
where every file hits the result cache imports neither the YAML dialect (ruamel), jsonschema nor a
rule module (``tests/test_lint_imports.py`` keeps that budget). ``pipeline`` re-exports these names.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

TYPE_CHECKING = False  # typing is not imported at run time (a cached lint's start-up)
if TYPE_CHECKING:
    from typing import Any, Iterable, Mapping

from dshctl.core.diagnostics import Diagnostic
from dshctl.core.yaml import filekinds as fk
from dshctl.errors import UsageError
from dshctl.lint.config import ConfigResolver, RulePolicy
from dshctl.records import Record

# The ids of the built-in rules in registration order: the config checks and --select/--ignore
# need them before any rule module is imported. tests/test_lint_imports.py keeps this equal to
# the registry.
RULE_IDS: tuple[str, ...] = (
    "js-unsupported", "js-ctx-inject", "parse", "empty-file", "json-bom", "json-duplicate-key",
    "not-a-manifest", "preset-health", "id-colon", "id-missing", "duplicate-id", "js-position",
    "schema", "unused-disable",
)


def discover(paths: Iterable[str | Path]) -> list[tuple[Path, bool]]:
    """Files to lint with whether each was named explicitly; a walk keeps the dsh kinds (settings
    files only inside a dsh home)."""
    return fk.discover(paths, kind_of)


class LintOptions(Record):
    """What the command line adds to the config files."""

    __slots__ = ("config", "select", "ignore", "kind")

    def __init__(self, config: Path | None = None, select: frozenset[str] | None = None,
                 ignore: frozenset[str] = frozenset(), kind: str | None = None):
        self.config = config  # --config: use this file for every path
        self.select = select
        self.ignore = ignore
        self.kind = kind  # --kind: the kind of every file named explicitly (and stdin)


class LintResult(Record):
    __slots__ = ("diagnostics", "files", "skipped")

    def __init__(self, diagnostics: list[Diagnostic], files: int, skipped: list[str] | None = None):
        self.diagnostics = diagnostics
        self.files = files  # files checked
        self.skipped = [] if skipped is None else skipped  # named explicitly, but no dsh kind


class Policies:
    """The rule policy for each file: its config (found upward, or --config) plus --select/--ignore."""

    def __init__(self, options: LintOptions):
        self.options = options
        self.resolver = ConfigResolver(RULE_IDS, options.config)
        self._by_config: dict[int, RulePolicy] = {}  # configs without overrides: one policy each
        self._salts: dict[tuple[str, int], str] = {}

    def for_path(self, path: Path) -> RulePolicy:
        config = self.resolver.for_path(path)
        if config.overrides:  # levels depend on the path
            return RulePolicy.build(config.levels_for(path), self.options.select, self.options.ignore, RULE_IDS)
        policy = self._by_config.get(id(config))  # the resolver keeps every config alive
        if policy is None:
            policy = RulePolicy.build(config.levels_for(path), self.options.select, self.options.ignore,
                                      RULE_IDS)
            self._by_config[id(config)] = policy
        return policy

    def salt(self, kind: str, path: Path) -> str:
        """``kind`` and the levels in force for ``path``, as one string (see ``job_salt``)."""
        policy = self.for_path(path)
        key = (kind, id(policy))
        found = self._salts.get(key)
        if found is None:
            found = kind + "\0" + repr(sorted(policy.levels.items()))   # rule ids to level words
            if policy in self._by_config.values():  # a shared policy: its salt is shared too
                self._salts[key] = found
        return found


def policy_for(path: Path, options: LintOptions | None = None) -> RulePolicy:
    """The rule levels in force for ``path`` (``dshctl lint --list-rules`` shows them)."""
    return Policies(options or LintOptions()).for_path(path)


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


def policies_for(rule_config: Mapping[str, Any] | None) -> Policies:
    return Policies(options_from(rule_config))


def job_kind(path: Path, explicit: bool, options: LintOptions) -> str | None:
    """The kind a file is linted as: --kind for a file named explicitly, else its name's."""
    return (options.kind if explicit else None) or kind_of(path)


def job_salt(path: Path, explicit: bool, options: LintOptions, policies: Policies) -> str | None:
    """What besides the file's bytes decides its result: its kind and the levels in force for it
    (config files found upward included). None: no dsh kind (skipped)."""
    kind = job_kind(path, explicit, options)
    return None if kind is None else policies.salt(kind, path)


# ---------------------------------------------------------------------------------------------
# kinds

KIND_HINT = ("dshctl lints cordis.yml, *.cordis.yml, cordis.patch*.yml, *.cordis.patch.yml, *.overlay.yml, preset.yml, "
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
    kind = _kind_by_name(path.name)
    if kind is None and path.name in fk.SETTINGS_NAMES and is_dsh_home(path.parent):
        return fk.SETTINGS
    return kind


@lru_cache(maxsize=None)
def _kind_by_name(name: str) -> str | None:
    return fk.kind_of(name)  # a walk asks for the same few names over and over


def is_dsh_home(directory: Path) -> bool:
    """``$DSH_HOME`` (or ``~/.dsh``), or a directory laid out like one (``profiles/``, ``.agent-presets/``)."""
    from dshctl.core.home import resolve_home

    try:
        if directory.resolve() == resolve_home().resolve():
            return True
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop
        return False
    return (directory / "profiles").is_dir() or (directory / ".agent-presets").is_dir()
