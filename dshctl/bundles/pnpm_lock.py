"""``<profile>/pnpm-lock.yaml``: read what pnpm (dsh's plugin command) pinned, and write it as pnpm 11 does.

dshctl writes the lock pnpm would write for the same installed state (lockfileVersion 9.0, the
profile template's settings, importers / packages / snapshots sorted by key, pnpm's quoting), so a
later install by dsh's pnpm keeps every pin dshctl chose: a ``#main`` bundle stays on its commit,
a registry bundle on its version. Dependencies dshctl does not manage (dsh's plugin add put them
there) keep their entries, with everything their snapshots reach. See docs/bundles.md.
"""
from __future__ import annotations

import re
from pathlib import Path

from dshctl.errors import DshctlError, Loc
from dshctl.records import field, record

LOCK_NAME = "pnpm-lock.yaml"
SETTINGS = {"autoInstallPeers": False, "excludeLinksFromLockfile": False}
_FLOW_KEYS = {"resolution", "engines", "cpu", "os", "libc"}


@record
class PnpmLock:
    importer: dict[str, dict] = field(default_factory=dict)  # name -> {specifier, version}
    packages: dict[str, dict] = field(default_factory=dict)
    snapshots: dict[str, dict] = field(default_factory=dict)

    def pinned(self, name: str, specifier: str) -> dict | None:
        """``{"git": {"repo", "commit"}}`` or ``{"version", "resolution"}`` for a dependency the
        lock pins under the same specifier; None when it pins nothing for it."""
        entry = self.importer.get(name)
        if not isinstance(entry, dict) or entry.get("specifier") != specifier:
            return None
        ref = str(entry.get("version", ""))
        package = self.packages.get(f"{name}@{ref}")
        resolution = package.get("resolution") if isinstance(package, dict) else None
        if not isinstance(resolution, dict):
            return None
        if resolution.get("type") == "git":
            return {"git": {"repo": str(resolution.get("repo")), "commit": str(resolution.get("commit"))}}
        return {"version": ref, "resolution": resolution}

    def closure(self, name: str) -> tuple[dict, dict]:
        """The packages and snapshots the importer entry ``name`` reaches."""
        packages, snapshots = {}, {}
        entry = self.importer.get(name) or {}
        todo = [f"{name}@{entry.get('version')}"]
        while todo:
            key = todo.pop()
            if key in snapshots or key not in self.snapshots:
                continue
            snapshots[key] = self.snapshots[key]
            base = re.sub(r"\(.*\)\Z", "", key)  # peer suffixes name the same package
            if base in self.packages:
                packages[base] = self.packages[base]
            snap = _mapping(self.snapshots[key])
            for kind in ("dependencies", "optionalDependencies"):
                for dep, ref in _mapping(snap.get(kind)).items():
                    todo.append(f"{dep}@{ref}")
        return packages, snapshots


def read(path: Path) -> PnpmLock:
    """The lock as pnpm wrote it; a missing file is an empty lock."""
    if not path.exists():
        return PnpmLock()
    try:
        return read_text(path.read_text("utf-8"), path)
    except UnicodeDecodeError as exc:
        raise DshctlError(f"pnpm's lock file is not UTF-8: {exc}", loc=Loc(str(path)),
                          hint="restore it, or delete it and run dshctl plugin install") from None


def read_text(text: str, path: Path | None = None) -> PnpmLock:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        data = YAML(typ="safe", pure=True).load(text)
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise DshctlError(f"pnpm's lock file cannot be read: {getattr(exc, 'problem', exc)}",
                          loc=Loc(str(path), mark.line + 1 if mark else 0,
                                  mark.column + 1 if mark else 0),
                          hint="restore it, or delete it and run dshctl plugin install") from None
    # a lock of another shape (hand-edited, another pnpm) pins nothing: pnpm re-resolves it too
    importer = _mapping(_mapping(_mapping(_mapping(data).get("importers")).get(".")).get("dependencies"))
    return PnpmLock({str(k): v for k, v in importer.items() if isinstance(v, dict)},
                    _mapping(_mapping(data).get("packages")), _mapping(_mapping(data).get("snapshots")))


def _mapping(value) -> dict:
    return {str(k): v for k, v in value.items()} if isinstance(value, dict) else {}


def render(lock: PnpmLock) -> str:
    out = ["lockfileVersion: '9.0'", "", "settings:"]
    out += [f"  {k}: {_scalar(v)}" for k, v in SETTINGS.items()]
    out += ["", "importers:", ""]
    if not lock.importer:
        out.append("  .: {}")
    else:
        out += ["  .:", "    dependencies:"]
        for name in sorted(lock.importer):
            entry = lock.importer[name]
            out.append(f"      {_scalar(name)}:")
            out.append(f"        specifier: {_scalar(entry['specifier'])}")
            out.append(f"        version: {_scalar(entry['version'])}")
    for title, section in (("packages", lock.packages), ("snapshots", lock.snapshots)):
        if not section:
            continue
        out += ["", f"{title}:"]
        for key in sorted(section):
            out.append("")
            out += _entry(key, section[key], 2)
    return "\n".join(out) + "\n"


def _entry(key: str, value, indent: int) -> list[str]:
    pad = " " * indent
    if isinstance(value, dict) and value and key not in _FLOW_KEYS:
        lines = [f"{pad}{_scalar(key)}:"]
        for k in value:
            lines += _entry(k, value[k], indent + 2)
        return lines
    return [f"{pad}{_scalar(key)}: {_flow(value)}"]


def _flow(value) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_scalar(k)}: {_flow(v)}" for k, v in value.items()) + "}" \
            if value else "{}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    return _scalar(value)


_PLAIN_UNSAFE_START = set("@`!&*'\"%|>#{}[],?-:~ ")
_LOOKS_TYPED = re.compile(r"\A(?:[-+]?(?:\d[\d_]*)?\.?\d*(?:[eE][-+]?\d+)?|true|false|null|yes|no|on|off|~"
                          r"|0x[0-9a-fA-F]+|0o[0-7]+|\.inf|\.nan)\Z", re.IGNORECASE)


def _scalar(value) -> str:
    """pnpm's YAML scalars: plain where the YAML 1.2 core schema reads them back as the same
    string, else single-quoted."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return str(value)
    text = str(value)
    if (not text or text[0] in _PLAIN_UNSAFE_START or text[-1] in " :" or ": " in text
            or " #" in text or any(c in text for c in ",[]{}\n\t") or _LOOKS_TYPED.match(text)
            or text == "="):  # YAML 1.1's "value" key: ruamel's safe loader refuses it plain
        return "'" + text.replace("'", "''") + "'"
    return text


def git_ref(url: str, commit: str) -> str:
    return f"git+{url}#{commit}"


def default_tarball(registry: str, name: str, version: str) -> str:
    """The tarball URL pnpm leaves out of a lock (it derives it from the registry)."""
    return f"{registry}{name}/-/{name.rsplit('/', 1)[-1]}-{version}.tgz"


def build(entries: dict, dependencies: dict[str, str], old: PnpmLock, registry_for) -> PnpmLock:
    """The lock pnpm would write for the profile: dshctl's entries (``LockEntry`` by name) for the
    dependencies it manages, ``old``'s entries for the others. ``registry_for(name)`` is the
    registry URL (tarball URLs it would derive are left out, as pnpm leaves them out)."""
    new = PnpmLock()
    for name in sorted(dependencies):
        entry = entries.get(name)
        if entry is None:
            if name in old.importer:
                new.importer[name] = old.importer[name]
                packages, snapshots = old.closure(name)
                new.packages.update(packages)
                new.snapshots.update(snapshots)
            continue
        root_ref = _entry_ref(entry)
        new.importer[name] = {"specifier": dependencies[name], "version": root_ref}
        new.packages[f"{name}@{root_ref}"] = _package(name, entry.version, entry.registry,
                                                      entry.url, entry.commit, registry_for)
        if root_ref != entry.version and entry.registry is not None:
            new.packages[f"{name}@{root_ref}"]["version"] = entry.version
        refs = {path: _npm_ref(dep) for path, dep in entry.npm.items()}
        new.snapshots.setdefault(f"{name}@{root_ref}", _snapshot(name, entry.npm, refs))
        for path, dep in entry.npm.items():
            key = f"{dep['name']}@{refs[path]}"
            git = dep.get("git")
            new.packages.setdefault(key, _package(
                dep["name"], dep["version"], None if git else dep, git and git["url"],
                git and git["commit"], registry_for))
            new.snapshots.setdefault(key, _snapshot(path, entry.npm, refs))
    return new


def _entry_ref(entry) -> str:
    if entry.registry is not None:  # a tarball URL is its own version reference
        return entry.spec if entry.spec == entry.registry["resolved"] else entry.version
    return git_ref(entry.url, entry.commit)


def _npm_ref(dep: dict) -> str:
    git = dep.get("git")
    return git_ref(git["url"], git["commit"]) if git else dep["version"]


def _package(name, version, registry, url, commit, registry_for) -> dict:
    if registry is None:
        return {"resolution": {"commit": commit, "repo": url, "type": "git"}, "version": version}
    resolution = {"integrity": registry["integrity"]}
    if registry["resolved"] != default_tarball(registry_for(name), name, version):
        resolution["tarball"] = registry["resolved"]
    return {"resolution": resolution}


def _snapshot(dependent: str, npm: dict[str, dict], refs: dict[str, str]) -> dict:
    """What ``dependent`` (a path under the bundle, or the bundle's name) requires, by name."""
    required, optional = {}, {}
    for path, dep in npm.items():
        if dependent in (dep.get("requiredBy") or []):
            (optional if dep.get("optional") else required)[dep["name"]] = refs[path]
    out = {}
    if required:
        out["dependencies"] = dict(sorted(required.items()))
    if optional:
        out["optionalDependencies"] = dict(sorted(optional.items()))
    return out
