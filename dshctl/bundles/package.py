"""Check a fetched package before it may become a profile layer. Reads files; never runs any."""
from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from dshctl.bundles import compat
from dshctl.errors import DshctlError, Loc
from dshctl.records import field, record

PLAIN_WARNING = ("dsh: warning: {name} declares no dsh.bundle — installed as a plain dependency, "
                 "not a profile layer (a later update that gains one activates it automatically)")


@record
class PackageInfo:
    name: str
    version: str | None
    patch: str | None  # dsh.bundle.patch, relative to the package root; None for a plain package
    conflicts: list[compat.Conflict] = field(default_factory=list)

    @property
    def is_bundle(self) -> bool:
        return self.patch is not None


def _valid_name(name: object) -> bool:
    if not isinstance(name, str) or not name or len(name) > 214 or name != name.strip():
        return False
    parts = name.split("/")
    if name.startswith("@"):
        if len(parts) != 2 or len(parts[0]) < 2:
            return False
    elif len(parts) != 1:
        return False
    return all(p not in ("", ".", "..", "node_modules") and not p.startswith(".") and "\\" not in p
               for p in (parts[-1], parts[0].lstrip("@")))


def read_package(root: Path, *, source: str, patch_checked: bool = False) -> PackageInfo:
    """Read and validate ``root/package.json``; refuse what dshctl cannot install safely.

    ``patch_checked``: this dshctl already parsed the tree's patch file (a stored tree it let in).
    Then a package.json that plain ``json`` reads as dsh's dialect would, and that passes every
    rule, is taken without the dialect's loader or the patch parse (ruamel.yaml's import alone is
    ~20 ms of a warm add); anything else, and every refusal, goes the full way below."""
    path = root / "package.json"
    if path.is_symlink() or not path.is_file():
        raise DshctlError(f"{source} has no package.json at its root", loc=Loc(str(path)),
                          hint="a bundle is a package: it needs a package.json declaring "
                               "dsh.bundle.patch")
    if patch_checked:
        quick = _quick_info(root, path)
        if quick is not None:
            return quick
    from dshctl.core.yaml.dialect import load_json, read_text
    from dshctl.core.yaml.nodes import to_plain

    doc = load_json(read_text(path), path)
    data = doc.value
    if not isinstance(data, dict):
        raise DshctlError("package.json must hold a JSON object", loc=doc.loc)
    name = data.get("name")
    if not _valid_name(name):
        raise DshctlError(f"package.json has no valid package name ({name!r})",
                          loc=data.loc_of("name") if "name" in data else doc.loc,
                          hint="the name must be an npm package name such as dsh-foo or @scope/foo")
    version = data.get("version") if isinstance(data.get("version"), str) else None
    plain = to_plain(data)
    info = PackageInfo(name, version, _bundle_patch(data, path), compat.check(plain))
    if info.patch is not None:
        check_patch_file(root, info.patch, loc=_patch_loc(data, path))
    return info


class _Decline(Exception):
    pass


def _no_numbers_or_duplicates(*_args):
    raise _Decline  # numbers follow JavaScript's rules in the dialect: leave them to it


def _object(pairs: list) -> dict:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise _Decline  # duplicate keys: the dialect keeps the last one and notes it
    return dict(pairs)


def plain_package_json(path: Path) -> dict | None:
    """``path`` read by plain ``json`` when that is certain to equal the dialect's reading (no BOM,
    no escapes, no numbers, no duplicate keys, no ``!!js`` objects), else None."""
    from dshctl.core.yaml.limits import MAX_FILE_BYTES

    try:
        raw = path.read_bytes()
        text = raw.decode("utf-8") if len(raw) <= MAX_FILE_BYTES else ""
    except (OSError, UnicodeDecodeError):
        return None
    if not text or text.startswith("\ufeff") or "\\" in text or "__jsExpr" in text:
        return None
    import json

    try:
        data = json.loads(text, object_pairs_hook=_object, parse_int=_no_numbers_or_duplicates,
                          parse_float=_no_numbers_or_duplicates,
                          parse_constant=_no_numbers_or_duplicates)
    except (ValueError, _Decline, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _quick_info(root: Path, path: Path) -> PackageInfo | None:
    """The PackageInfo of an already checked tree when every rule passes on plain data, else None
    (the caller then reads it the full way, which words any refusal)."""
    data = plain_package_json(path)
    if data is None or not _valid_name(data.get("name")):
        return None
    dsh = data.get("dsh")
    bundle = dsh.get("bundle") if isinstance(dsh, dict) else None
    patch = bundle.get("patch") if isinstance(bundle, dict) else None
    if bundle is not None and not (isinstance(patch, str) and patch.strip()):
        return None
    if isinstance(patch, str) and not _patch_path_ok(root, patch):
        return None
    version = data.get("version") if isinstance(data.get("version"), str) else None
    return PackageInfo(data["name"], version, patch, compat.check(data))


def _patch_path_ok(root: Path, patch: str) -> bool:
    """check_patch_file's path rules, as a yes/no (its parse is what ``patch_checked`` skips)."""
    rel = PurePosixPath(patch.replace("\\", "/"))
    if rel.is_absolute() or ".." in rel.parts or os.path.isabs(patch):
        return False
    current = root
    for part in rel.parts:
        current = current / part
        if current.is_symlink():
            return False
    return current.is_file()


def _bundle_patch(data, path: Path) -> str | None:
    dsh = data.get("dsh")
    bundle = dsh.get("bundle") if isinstance(dsh, dict) else None
    if bundle is None:
        return None
    patch = bundle.get("patch") if isinstance(bundle, dict) else None
    if not isinstance(patch, str) or not patch.strip():
        # a list has loc_of too, by index: only a mapping has a "patch" key to point at
        loc = bundle.loc_of("patch") if isinstance(bundle, dict) and "patch" in bundle \
            else dsh.loc_of("bundle")
        raise DshctlError("dsh.bundle.patch must be a path string", loc=loc,
                          hint='declare e.g. "dsh": {"bundle": {"patch": "cordis.patch.yml"}}')
    return patch


def _patch_loc(data, path: Path) -> Loc:
    try:
        return data["dsh"]["bundle"].loc_of("patch") or Loc(str(path))
    except (KeyError, AttributeError):
        return Loc(str(path))


def check_patch_file(root: Path, patch: str, *, loc: Loc) -> None:
    """The patch must be a regular file inside the package (no ``..``, no absolute path, no link on
    the way) and parse as a top-level list of mappings."""
    rel = PurePosixPath(patch.replace("\\", "/"))
    if rel.is_absolute() or ".." in rel.parts or os.path.isabs(patch):
        raise DshctlError(f"dsh.bundle.patch {patch!r} points outside the package", loc=loc,
                          hint="the patch path must be relative and stay inside the package")
    current = root
    for part in rel.parts:
        current = current / part
        if current.is_symlink():
            raise DshctlError(f"dsh.bundle.patch {patch!r} goes through a symbolic link "
                              f"({current.relative_to(root).as_posix()})", loc=loc,
                              hint="dshctl never follows links out of a package; ship the patch "
                                   "file itself")
    if not current.is_file():
        raise DshctlError(f"dsh.bundle.patch {patch!r} does not exist in the package", loc=loc,
                          hint="add the file, or list it in package.json \"files\"")
    from dshctl.core.compose.layers import load_patch_file

    load_patch_file(current, "overlay")  # dsh's shape rules and messages: a list of mappings
