"""Registry SPECs for ``add``: ``name``, ``name@range``, ``name@version``, ``@scope/name@tag``.

pnpm (which dsh's plugin add runs) installs the bundle's tarball from the registry and records
the version itself for an exact one, ``~<version>`` for a tilde range or ``x.y``/``x.x``, and
``^<version>`` for everything else (a name, a tag, ``^1``, ``1``, ``*``, ``>=1 <2``) (docs/bundles.md gives the table checked against pnpm 11.7.0).
"""
from __future__ import annotations

import re

from dshctl.errors import DshctlError
from dshctl.records import record

# npm's package-name rules (validate-npm-package-name, new packages): lower case, url-safe.
_NAME = re.compile(r"(?:@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*\Z")
_EXACT = re.compile(r"v?\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?\Z")
_MINOR = re.compile(r"~.*|v?\d+\.(?:\d+|[xX*])(?:\.[xX*])?\Z")


def looks_like_registry(raw: str) -> bool:
    """A SPEC with no URL scheme, path or ``owner/repo`` form: a registry name (maybe @range)."""
    text = raw.strip()
    if not text or text.startswith((".", "/", "~", "-")) or ":" in text:
        return False
    name = _split(text)[0]
    return bool(_NAME.match(name))


def _split(text: str) -> tuple[str, str]:
    at = text.find("@", 1)
    return (text, "") if at < 0 else (text[:at], text[at + 1:])


@record(frozen=True)
class RegistrySpec:
    """``raw`` as typed; ``name``; ``wanted``: the range, version or dist-tag ('' = latest)."""
    raw: str
    name: str
    wanted: str
    ref: None = None

    @property
    def url(self) -> str:  # what messages name it by
        return f"{self.name}@{self.wanted or 'latest'}"

    @property
    def source_key(self) -> str:
        return f"npm:{self.url}"

    def manifest_spec(self, version: str) -> str:
        """What pnpm 11 writes to ``dependencies`` after installing ``version``."""
        wanted = self.wanted.strip()
        if _EXACT.match(wanted):
            return wanted.lstrip("v")
        if _MINOR.match(wanted):
            return f"~{version}"
        return f"^{version}"  # latest, a tag, ^x, x, *, >=a <b: pnpm's default save prefix


def parse_registry_spec(raw: str) -> RegistrySpec:
    text = raw.strip()
    name, wanted = _split(text)
    if not _NAME.match(name) or len(name) > 214:
        raise DshctlError(f"refusing spec {raw!r}: {name!r} is not a valid npm package name",
                          hint="registry names are lower case: name, name@^1, @scope/name@tag")
    if any(ch in wanted for ch in "\n\r\t") or wanted.startswith("npm:"):
        raise DshctlError(f"refusing spec {raw!r}: aliases and control characters are not "
                          "supported", hint="give name@range or name@tag")
    return RegistrySpec(text, name, wanted)


def looks_like_tarball(raw: str) -> bool:
    """An http(s) URL of a ``.tgz``/``.tar.gz``: pnpm installs the tarball itself."""
    text = raw.strip().split("#", 1)[0].split("?", 1)[0]
    return text.startswith(("http://", "https://")) and text.endswith((".tgz", ".tar.gz"))


@record(frozen=True)
class TarballSpec:
    """A tarball URL: recorded as typed (pnpm does); its integrity is taken on first download and
    pinned in both locks, so later installs are checked against it."""
    raw: str
    ref: None = None

    @property
    def url(self) -> str:
        return self.raw

    @property
    def name(self) -> str:  # for messages until the package.json is read
        return self.raw.rsplit("/", 1)[-1]

    @property
    def source_key(self) -> str:
        return f"tarball:{self.raw}"

    def manifest_spec(self, version: str) -> str:
        return self.raw


def parse_tarball_spec(raw: str) -> TarballSpec:
    text = raw.strip()
    if any(ch.isspace() or ord(ch) < 0x20 for ch in text) or "@" in text.split("/")[2]:
        raise DshctlError(f"refusing spec {raw!r}: a tarball URL with whitespace or credentials",
                          hint="put registry credentials in .npmrc, not in the URL")
    return TarballSpec(text)
