"""SPEC strings for git sources: parse, refuse the dangerous ones, and render the pinned form.

Accepted (each with an optional ``#ref``: tag, branch or commit; none means the remote's HEAD):
``https://host/owner/repo[.git]``, ``http://…``, ``git+https://…``, ``git+ssh://…``, ``git+file://…``,
``ssh://…``, ``git://…``, ``git@host:owner/repo``, ``github:owner/repo``, ``file://…`` and local paths.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from dshctl.errors import DshctlError
from dshctl.records import record

_HEX40 = re.compile(r"[0-9a-f]{40}\Z")
_SCP = re.compile(r"(?P<user>[A-Za-z0-9._-]+)@(?P<host>[A-Za-z0-9.-]+):(?P<path>[^:\\]+)\Z")
_GITHUB = re.compile(r"github:(?P<owner>[A-Za-z0-9_.-]+)/(?P<repo>[A-Za-z0-9_.-]+)\Z")
_URL = re.compile(r"(?P<scheme>https?|ssh|git|file)://(?P<rest>.+)\Z")
_HELPER = re.compile(r"\A[A-Za-z][A-Za-z0-9+.-]*::")  # git's "<transport>::<address>" syntax
# A ref may be a tag, branch or commit; anything a shell or git could read as an option is refused.
_REF = re.compile(r"[A-Za-z0-9._/@+-]+\Z")
_HINT = ("use https://host/owner/repo, git+ssh://…, git@host:owner/repo, github:owner/repo, "
         "file://… or a local path, optionally followed by #tag, #branch, #commit or "
         "#semver:<range>; or a registry name (name, name@range, @scope/name@tag)")


def is_commit(ref: str | None) -> bool:
    return bool(ref and _HEX40.match(ref))


@record(frozen=True)
class GitSpec:
    """A parsed SPEC: ``url`` is what git is given; ``ref`` is None for the remote's HEAD."""

    raw: str
    url: str
    ref: str | None

    @property
    def source_key(self) -> str:
        """What the store remembers a resolution under: the source and the ref asked for."""
        return f"{self.url}#{self.ref or 'HEAD'}"

    @property
    def semver(self) -> str | None:
        """The range of a ``#semver:<range>`` ref (resolved against the remote's tags)."""
        return self.ref[len("semver:"):] if self.ref and self.ref.startswith("semver:") else None

    def legacy_pinned(self, commit: str) -> str:
        """The pinned form dshctl recorded before it wrote specs as pnpm does (issue 23): found in
        older profiles, it is rewritten to ``manifest_spec`` by the next install or update."""
        if self.raw.startswith("github:"):
            return f"{self.raw.split('#', 1)[0]}#{commit}"
        scp = _SCP.match(self.url)
        if scp:
            return f"git+ssh://{scp['user']}@{scp['host']}/{scp['path']}#{commit}"
        return f"git+{self.url}#{commit}"

    def manifest_spec(self) -> str:
        """The spec recorded in ``dependencies``: as pnpm writes it for the same command — the
        text as typed, ref included (pins live in the lock files). Forms pnpm would read as
        something else than git get npm's explicit git form: a ``file://`` URL or a local path
        (pnpm: a directory to copy) becomes ``git+file://…``, a ``http(s)://`` URL not ending in
        ``.git`` (pnpm: a tarball) becomes ``git+http(s)://…``."""
        location, _, ref = self.raw.partition("#")
        suffix = f"#{ref}" if ref else ""
        if location.startswith(("git+", "git://", "github:", "ssh://")) or _SCP.match(location):
            return self.raw
        if self.url.startswith("file://"):
            return f"git+{self.url}{suffix}"
        if location.startswith(("http://", "https://")) and not location.endswith(".git"):
            return f"git+{location}{suffix}"
        return self.raw

    def with_ref(self, ref: str | None) -> "GitSpec":
        base = self.raw.split("#", 1)[0]
        return GitSpec(f"{base}#{ref}" if ref else base, self.url, ref)


def _refuse(raw: str, why: str) -> DshctlError:
    return DshctlError(f"refusing spec {raw!r}: {why}", hint=_HINT)


def parse_spec(raw: str, *, cwd: str | os.PathLike | None = None) -> GitSpec:
    """Parse one SPEC; relative local paths are anchored at ``cwd`` (as dsh anchors them)."""
    text = raw.strip()
    if not text:
        raise _refuse(raw, "it is empty")
    if _HELPER.match(text.removeprefix("git+")):
        raise _refuse(raw, "git transport helpers ('<helper>::…', e.g. ext::) are never run")
    if any(ch.isspace() or ord(ch) < 0x20 for ch in text):
        raise _refuse(raw, "it contains whitespace or control characters")
    if text.startswith("-"):
        raise _refuse(raw, "it starts with '-', which git would read as an option")
    location, _, ref = text.partition("#")
    ref = ref or None
    if ref is not None and not ref.startswith("semver:") and (
            ref.startswith("-") or not _REF.match(ref) or ".." in ref
            or ref.endswith((".lock", "/", "."))):
        raise _refuse(raw, f"the ref {ref!r} is not a plain tag, branch or commit name")
    if ref is not None and ref.startswith("semver:"):
        _check_semver(raw, ref[len("semver:"):])
    if location.startswith("git+"):
        location = location[4:]
        if location.startswith("-"):
            raise _refuse(raw, "the URL starts with '-'")
    if _HELPER.match(location):
        raise _refuse(raw, "git transport helpers ('<helper>::…', e.g. ext::) are never run")
    url = _to_url(raw, location, cwd)
    return GitSpec(text, url, ref)


def _check_semver(raw: str, text: str) -> None:
    from dshctl.bundles.semver import InvalidRange, Range

    try:
        Range.parse(text)
    except InvalidRange:
        raise _refuse(raw, f"#semver:{text} is not a valid npm version range") from None


def _to_url(raw: str, location: str, cwd) -> str:
    github = _GITHUB.match(location)
    if github:
        return f"https://github.com/{github['owner']}/{github['repo']}.git"
    url = _URL.match(location)
    if url:
        rest = url["rest"]
        if url["scheme"] != "file" and "/" not in rest:
            raise _refuse(raw, "the URL has no host and path")
        if _option_like_authority(rest.split("/", 1)[0]):
            raise _refuse(raw, "its user, host or port starts with '-', which ssh would read as "
                               "an option")
        return location
    scp = _SCP.match(location)
    if scp and (scp["host"].startswith("-") or scp["path"].startswith("-")):
        raise _refuse(raw, "its host or path starts with '-', which ssh would read as an option")
    if scp:
        return location
    if "://" in location:
        raise _refuse(raw, "only https, http, ssh, git and file URLs are allowed")
    if location.startswith(("/", "./", "../", "~/")) or location in (".", ".."):
        base = Path(cwd) if cwd is not None else Path.cwd()
        path = Path(os.path.expanduser(location))
        return (base / path).resolve().as_uri()
    raise _refuse(raw, "it is not a git URL, github:owner/repo or a local path")


def _option_like_authority(authority: str) -> bool:
    """``user@host:port`` where any part starts with ``-`` (``ssh://h:-oProxyCommand…/x``)."""
    userinfo, _, hostport = authority.rpartition("@")
    host, _, port = hostport.rpartition(":") if not hostport.startswith("[") else (hostport, "", "")
    return any(part.startswith("-") for part in (userinfo, host or hostport, port))
