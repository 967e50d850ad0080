"""Lint configuration: which rules run, at which level, for which files (docs/cli.md, "Configuring").

A config is ``.dshctl-lint.yaml`` or the ``[tool.dshctl.lint]`` table of ``pyproject.toml``, found by
walking up from the linted file's directory (the nearest wins, as with ruff), or the file given with
``--config``. It holds ``rules`` (rule id -> level), ``overrides`` (``files`` globs relative to the
config's directory, with their own ``rules``) and ``extends`` (other config files, applied first).
Any mistake in a config is a ``ConfigError`` at its file:line:col: a config is never half-applied.
"""
from __future__ import annotations

import os
import re
import stat
from pathlib import Path, PurePosixPath

TYPE_CHECKING = False  # typing is not imported at run time (a cached lint's start-up)
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable

from dshctl.errors import Loc, UsageError
from dshctl.lint.globs import glob_match
from dshctl.records import Record

CONFIG_FILE = ".dshctl-lint.yaml"
PYPROJECT = "pyproject.toml"
LEVELS = ("error", "warning", "info", "off")
_TOP_KEYS = ("extends", "rules", "overrides")
_OVERRIDE_KEYS = ("files", "rules")


class ConfigError(UsageError):
    """A broken lint config (exit 2): located at the offending key or value."""


def resolved(path: Path) -> Path:
    """``path.resolve()``, or its absolute form when the link chain loops (Python raises RuntimeError):
    the loop is the file's own finding, reported when it is read, not a reason to crash here."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return Path(os.path.abspath(path))


class Override(Record):
    __slots__ = ("base", "patterns", "rules")

    def __init__(self, base: Path, patterns: tuple[str, ...], rules: dict[str, str]):
        self.base = base  # the directory of the config that declared it; globs are relative to it
        self.patterns = patterns
        self.rules = rules

    def matches(self, path: Path) -> bool:
        try:
            rel = PurePosixPath(resolved(path).relative_to(self.base).as_posix())
        except ValueError:
            return False
        return any(glob_match(p, rel) for p in self.patterns)


class LintConfig(Record):
    __slots__ = ("source", "rules", "overrides")

    def __init__(self, source: str | None = None, rules: dict[str, str] | None = None,
                 overrides: tuple[Override, ...] = ()):
        self.source = source  # the config file, None for the built-in defaults
        self.rules = {} if rules is None else rules
        self.overrides = overrides

    def levels_for(self, path: Path | None) -> dict[str, str]:
        """Rule id -> configured level for ``path`` (rules not listed keep their own level)."""
        levels = dict(self.rules)
        for o in self.overrides:
            if path is not None and o.matches(path):
                levels.update(o.rules)
        return levels


DEFAULTS = LintConfig()


class RulePolicy(Record):
    """The levels in force for one file: config levels, then ``--select``/``--ignore``."""

    __slots__ = ("levels",)

    def __init__(self, levels: dict[str, str]):
        self.levels = levels

    @classmethod
    def build(cls, levels: dict[str, str], select: frozenset[str] | None,
              ignore: frozenset[str], known: Iterable[str]) -> "RulePolicy":
        levels = dict(levels)
        if select is not None:
            for rid in known:
                if rid not in select:
                    levels[rid] = "off"
                elif levels.get(rid) == "off":
                    del levels[rid]  # selected explicitly: runs at its default level
        for rid in ignore:
            levels[rid] = "off"
        return cls(levels)

    def enabled(self, rule_id: str) -> bool:
        return self.levels.get(rule_id) != "off"

    def apply(self, diags: Iterable) -> list:
        """Drop findings of rules that are off; re-level the configured ones."""
        out = []
        for d in diags:
            level = self.levels.get(d.rule)
            if level == "off":
                continue
            out.append(d.replace(severity=level) if level and level != d.severity else d)
        return out


def level_of(rule, policy: RulePolicy) -> str:
    return policy.levels.get(rule.id, rule.level)


def parse_rule_list(text: str | None, option: str, known: Iterable[str]) -> frozenset[str] | None:
    """``--select a,b`` / ``--ignore a,b``: a set of known rule ids (UsageError on unknown ones)."""
    if text is None:
        return None
    ids = frozenset(part.strip() for part in text.split(",") if part.strip())
    unknown = sorted(ids - set(known))
    if unknown:
        raise UsageError(f"{option}: unknown rule {unknown[0]!r}",
                         hint="run 'dshctl lint --list-rules' for the rule ids")
    return ids


# ---------------------------------------------------------------------------------------------
# finding and loading config files


class ConfigResolver:
    """The config for each linted file: ``--config`` if given, else the nearest one upward."""

    def __init__(self, known_rules: Iterable[str], explicit: Path | None = None):
        self.known = frozenset(known_rules)
        self._by_dir: dict[Path, LintConfig] = {}
        self._loaded: dict[Path, LintConfig] = {}
        self._parents: dict[Path, Path] = {}
        self._by_parent_name: dict[str, LintConfig] = {}   # a regular file's directory, as written
        self._explicit = None
        if explicit is not None:
            if not str(explicit).strip():  # a Loc of spaces reads as no location at all
                raise ConfigError("--config is blank: it names no file",
                                  hint="pass an existing .dshctl-lint.yaml or pyproject.toml to --config")
            if not explicit.is_file():
                raise ConfigError("config file not found", loc=Loc(str(explicit)),
                                  hint="pass an existing .dshctl-lint.yaml or pyproject.toml to --config")
            self._explicit = self.load(explicit)

    def for_path(self, path: Path) -> LintConfig:
        if self._explicit is not None:
            return self._explicit
        name = str(path)
        try:
            regular = stat.S_ISREG(os.lstat(name).st_mode)
        except (OSError, ValueError):
            regular = False
        if not regular:             # a link, a directory, a missing file: resolved on their own
            return self._for_dir(self._start(path))
        where = os.path.dirname(name)  # the files of one directory share its config: one lookup each
        found = self._by_parent_name.get(where)
        if found is None:
            found = self._by_parent_name[where] = self._for_dir(self._resolved_dir(path.parent))
        return found

    def _start(self, path: Path) -> Path:
        """The resolved directory whose config applies to ``path``: the file's own (a symlink's
        target's), or the directory itself. The parent's resolution is cached, since files of one
        directory share it (one lstat per file instead of a resolve)."""
        try:
            mode = os.lstat(path).st_mode
        except (OSError, ValueError):
            mode = None
        if mode is None or stat.S_ISLNK(mode):
            return resolved(path).parent if not path.is_dir() else resolved(path)
        if stat.S_ISDIR(mode):
            return resolved(path)
        return self._resolved_dir(path.parent)

    def _resolved_dir(self, directory: Path) -> Path:
        """``resolved(directory)``, built from the resolved parent (cached) and one lstat: what
        realpath finds, without walking every component again for each directory."""
        found = self._parents.get(directory)
        if found is not None:
            return found
        name, parent = directory.name, directory.parent
        found = None
        if name not in ("", ".", "..") and parent != directory:
            try:
                mode = os.lstat(directory).st_mode
            except (OSError, ValueError):
                mode = None
            if mode is not None and stat.S_ISDIR(mode):  # neither a link nor missing
                found = self._resolved_dir(parent) / name
        if found is None:
            found = resolved(directory)
        self._parents[directory] = found
        return found

    def _for_dir(self, directory: Path) -> LintConfig:
        if directory in self._by_dir:
            return self._by_dir[directory]
        found = config_file_in(directory)
        if found is not None:
            result = self.load(found)
        elif directory.parent != directory:
            result = self._for_dir(directory.parent)
        else:
            result = DEFAULTS
        self._by_dir[directory] = result
        return result

    def load(self, path: Path, chain: tuple[Path, ...] = ()) -> LintConfig:
        path = resolved(path)
        if path in chain:
            raise ConfigError("extends forms a cycle", loc=Loc(str(path)),
                              hint="remove one of the extends entries: " + " -> ".join(map(str, chain)))
        if path not in self._loaded:
            self._loaded[path] = self._build(path, chain + (path,))
        return self._loaded[path]

    def _build(self, path: Path, chain: tuple[Path, ...]) -> LintConfig:
        raw, locate = read_config(path)
        _check_keys(raw, _TOP_KEYS, [], locate, "lint config")
        base = path.parent
        rules: dict[str, str] = {}
        overrides: list[Override] = []
        for target, where in _extends_targets(raw.get("extends"), locate):
            parent_path = (base / target)
            if not parent_path.is_file():
                raise ConfigError(f"extends: {target!r} not found", loc=locate(where),
                                  hint="give a path relative to this config file")
            parent = self.load(parent_path, chain)
            rules.update(parent.rules)
            overrides += parent.overrides
        rules.update(self._rules(raw.get("rules"), ["rules"], locate))
        overrides += self._overrides(raw.get("overrides"), base, locate)
        return LintConfig(str(path), rules, tuple(overrides))

    def _rules(self, value: Any, where: list, locate) -> dict[str, str]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise ConfigError("'rules' must be a mapping of rule id to level", loc=locate(where),
                              hint="e.g. rules: {id-missing: off}")
        out = {}
        for rid, level in value.items():
            if rid not in self.known:
                raise ConfigError(f"unknown rule {rid!r}", loc=locate(where + [rid], key=True),
                                  hint="run 'dshctl lint --list-rules' for the rule ids")
            if level not in LEVELS:
                raise ConfigError(f"unknown level {level!r} for rule {rid!r}", loc=locate(where + [rid]),
                                  hint="use one of: " + ", ".join(LEVELS))
            out[rid] = level
        return out

    def _overrides(self, value: Any, base: Path, locate) -> list[Override]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise ConfigError("'overrides' must be a list", loc=locate(["overrides"]),
                              hint="e.g. overrides: [{files: ['presets/**'], rules: {id-missing: off}}]")
        out = []
        for i, item in enumerate(value):
            where = ["overrides", i]
            if not isinstance(item, dict):
                raise ConfigError("an override must be a mapping with 'files' and 'rules'", loc=locate(where))
            _check_keys(item, _OVERRIDE_KEYS, where, locate, "override")
            files = item.get("files")
            if isinstance(files, str):
                files = [files]
            if not files or not all(isinstance(f, str) and f for f in files):
                raise ConfigError("an override needs 'files': a glob or a list of globs",
                                  loc=locate(where + ["files"] if "files" in item else where),
                                  hint="globs are relative to the config file's directory, e.g. 'presets/**'")
            out.append(Override(base, tuple(files), self._rules(item.get("rules"), where + ["rules"], locate)))
        return out


def config_file_in(directory: Path) -> Path | None:
    where = str(directory)
    if os.path.isfile(os.path.join(where, CONFIG_FILE)):  # strings: asked once per directory linted
        return directory / CONFIG_FILE
    if os.path.isfile(os.path.join(where, PYPROJECT)):
        pyproject = directory / PYPROJECT
        try:
            text = pyproject.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        if re.search(r"^\s*\[+\s*tool\.dshctl\.lint\b", text, re.M):
            return pyproject
    return None


def _extends_targets(value: Any, locate) -> list[tuple[str, list]]:
    if value is None:
        return []
    if isinstance(value, str):
        return [(value, ["extends"])]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [(v, ["extends", i]) for i, v in enumerate(value)]
    raise ConfigError("'extends' must be a path or a list of paths", loc=locate(["extends"]),
                      hint="e.g. extends: ../.dshctl-lint.yaml")


def _check_keys(mapping: dict, allowed: tuple[str, ...], where: list, locate, what: str) -> None:
    for key in mapping:
        if key not in allowed:
            raise ConfigError(f"unknown key {key!r} in {what}", loc=locate(where + [key], key=True),
                              hint="the known keys are " + ", ".join(allowed))


Locate = "Callable[..., Loc]"  # (for annotations only: typing is not imported)


def read_config(path: Path) -> tuple[dict, Locate]:
    """The config mapping and a function giving the Loc of a key path in it."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the lint config: {exc.__class__.__name__}", loc=Loc(str(path)),
                          hint="check the file's permissions and that it is UTF-8") from None
    if path.name == PYPROJECT or path.suffix == ".toml":
        return _read_toml(path, text)
    return _read_yaml(path, text)


def _read_yaml(path: Path, text: str) -> tuple[dict, Locate]:
    from dshctl.core.yaml.dialect import load_yaml
    from dshctl.errors import ParseError

    try:
        doc = load_yaml(text, path, js=False)
    except ParseError as err:
        raise ConfigError(err.message, loc=err.loc, hint=err.hint) from None
    value = {} if doc.empty else doc.value
    if not isinstance(value, dict):
        raise ConfigError("a lint config must be a mapping", loc=doc.loc,
                          hint="start with 'rules:' (see docs/cli.md, Configuring)")

    def locate(where: list, key: bool = False) -> Loc:
        node, loc = value, Loc(str(path), 1, 1)
        for i, step in enumerate(where):
            last = i == len(where) - 1
            if isinstance(node, dict) and step in node:
                loc = (node.key_loc(step) if key and last else node.loc_of(step)) or loc
                node = node[step]
            elif isinstance(node, list) and isinstance(step, int) and step < len(node):
                loc = node.loc_of(step) or loc
                node = node[step]
            else:
                break
        return loc
    return value, locate


def _read_toml(path: Path, text: str) -> tuple[dict, Locate]:
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        loc = Loc(str(path), int(m.group(1)), int(m.group(2))) if m else Loc(str(path))
        raise ConfigError(str(exc).split(" (at line")[0], loc=loc, hint="fix the TOML syntax there") from None
    value = data.get("tool", {}).get("dshctl", {}).get("lint", {})
    if not isinstance(value, dict):
        raise ConfigError("[tool.dshctl.lint] must be a table", loc=Loc(str(path), 1, 1))
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if re.match(r"\s*\[+\s*tool\.dshctl\.lint\b", ln)), 0)

    def locate(where: list, key: bool = False) -> Loc:
        # TOML has no positions in tomllib: find the key's text after the table header.
        names = [w for w in where if isinstance(w, str)]
        for name in reversed(names):
            pattern = re.compile(r'(^|[\s{,\[.])(["\']?)' + re.escape(name) + r'\2\s*[=\]]')
            for i in range(start, len(lines)):
                m = pattern.search(lines[i])
                if m:
                    return Loc(str(path), i + 1, m.start(2) + 1)
        return Loc(str(path), start + 1, 1)
    return value, locate
