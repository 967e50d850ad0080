"""``<profile>/dshctl.lock.json``: what each installed package resolved to, so installs repeat exactly.

Format (docs/bundles.md)::

    {"lockfileVersion": 1,
     "packages": {"<name>": {"spec": "<SPEC as typed>", "url": "<git url>", "ref": "<ref>|null",
                             "commit": "<40 hex>", "version": "<package.json version>|null",
                             "integrity": "sha256-<hex of the installed tree>",
                             "bundle": true, "forced": false, "conflicts": [...],
                             "npm": {"node_modules/<dep>": {"name", "version", "resolved",
                                     "integrity", "optional", "requiredBy": [...]}}}}}

``npm`` holds the bundle's resolved npm dependencies by their place under the bundle's directory.
"""
from __future__ import annotations

import json
from pathlib import Path

from dshctl.bundles.specs import is_commit, parse_spec
from dshctl.errors import DshctlError, Loc
from dshctl.core.yaml.jsvalue import json_dumps
from dshctl.records import as_dict, field, record

LOCK_NAME = "dshctl.lock.json"
LOCKFILE_VERSION = 1


@record
class LockEntry:
    spec: str
    url: str
    ref: str | None
    commit: str | None  # None for a registry bundle (then ``registry`` says what was installed)
    version: str | None
    integrity: str
    bundle: bool = True
    forced: bool = False
    conflicts: list[dict] = field(default_factory=list)
    npm: dict[str, dict] = field(default_factory=dict)
    registry: dict | None = None  # {"resolved": tarball URL, "integrity": SRI} of a registry bundle
    # Set on read when the npm section is unusable (never written): the entry stays readable so
    # list/remove/verify work, and install re-resolves the bundle's npm dependencies.
    npm_problem: str | None = field(default=None, compare=False)


def read(path: Path) -> dict[str, LockEntry]:
    if not path.exists():
        return {}
    from dshctl.core.yaml.dialect import read_text

    try:
        data = json.loads(read_text(path))
    except ValueError as exc:  # JSONDecodeError, or an integer past Python's 4,300 digits
        raise DshctlError(f"the lock file is not valid JSON: {getattr(exc, 'msg', exc)}",
                          loc=Loc(str(path), getattr(exc, "lineno", 0), getattr(exc, "colno", 0)),
                          hint="restore it from version control, or delete it and add the "
                               "bundles again") from None
    try:
        if data.get("lockfileVersion") != LOCKFILE_VERSION:
            raise DshctlError(f"unsupported lockfileVersion {data.get('lockfileVersion')!r}",
                              loc=Loc(str(path)), hint="this dshctl writes lockfileVersion 1")
        entries = {name: LockEntry(**{k: v for k, v in entry.items() if k != "npm_problem"})
                   for name, entry in data["packages"].items()}
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise DshctlError(f"the lock file is damaged ({type(exc).__name__}: {exc})",
                          loc=Loc(str(path)),
                          hint="restore it from version control, or delete it and add the "
                               "bundles again") from None
    for name, entry in entries.items():
        _check_entry(path, name, entry)
    return entries


def _check_entry(path: Path, name: str, entry: LockEntry) -> None:
    """A lock file may come from anywhere (a cloned dotfiles repo): its commit names a store
    directory and its URL and ref reach git, so they get the same checks as typed input."""
    problem = None
    if entry.registry is not None:
        problem = _registry_problem(entry)
    elif not is_commit(entry.commit):
        problem = f"commit {entry.commit!r} is not 40 hex digits"
    else:
        try:
            if parse_spec(f"{entry.url}#{entry.ref}" if entry.ref else entry.url).url != entry.url:
                problem = f"url {entry.url!r} is not in dshctl's resolved form"
        except DshctlError as exc:
            problem = exc.message
    if not problem and entry.npm:
        _check_npm(path, name, entry)
    if problem:
        raise DshctlError(f"the lock entry for {name} is not usable: {problem}", loc=Loc(str(path)),
                          hint="restore the lock file from version control, or delete it and add "
                               "the bundles again")


def _registry_problem(entry: LockEntry) -> str | None:
    from dshctl.bundles.npm import integrity as sri

    reg = entry.registry
    if not isinstance(reg, dict) or not isinstance(reg.get("resolved"), str) \
            or not reg["resolved"].startswith(("http://", "https://")):
        return "registry.resolved is not an http(s) URL"
    try:
        sri.store_key(str(reg.get("integrity")))
    except sri.IntegrityError as exc:
        return f"registry.integrity: {exc}"
    return None


def _check_npm(path: Path, name: str, entry: LockEntry) -> None:
    """An unusable npm section (an older dshctl let a ``../`` name through) does not make the
    whole profile unreadable: it is dropped here and reported, and install resolves it again."""
    from dshctl.bundles.npm.deps import check_locked

    try:
        check_locked(name, entry.npm, path)
    except DshctlError as exc:
        entry.npm, entry.npm_problem = {}, exc.message


def _plain(entry: LockEntry) -> dict:
    data = as_dict(entry)
    data.pop("npm_problem", None)   # a reading, never written
    if data["registry"] is None:
        del data["registry"]  # git entries keep the format they had
    return data


def render(entries: dict[str, LockEntry]) -> str:
    data = {"lockfileVersion": LOCKFILE_VERSION,
            "packages": {name: _plain(entry) for name, entry in entries.items()}}
    return json_dumps(data, indent=2) + "\n"
