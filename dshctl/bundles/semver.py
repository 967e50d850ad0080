"""npm's version and range semantics (node-semver 7, strict mode), written for dshctl.

PEP 440 (``packaging``) orders prereleases and reads ranges differently, so peer and engine ranges
from ``package.json`` are checked here. A range desugars into a union of comparator sets:

* ``^1.2.3`` -> ``>=1.2.3 <2.0.0-0``; ``~1.2`` -> ``>=1.2.0 <1.3.0-0``; ``1.x`` -> ``>=1.0.0 <2.0.0-0``;
* ``1.2 - 2`` -> ``>=1.2.0 <3.0.0-0``; ``*``, ``x`` and ``""`` match every release;
* a prerelease version satisfies a set only if some comparator in it names a prerelease of the same
  ``major.minor.patch`` (unless ``include_prerelease``) - so ``^0.1.0-rc.6`` does not admit ``0.1.1-rc.1``.

Agreement with npm's own package is checked by tests/bundles/test_semver_npm.py.
"""
from __future__ import annotations

import re
from functools import lru_cache

from dshctl.records import record

MAX_SAFE_INTEGER = 2**53 - 1
_NUM = r"0|[1-9]\d*"
_IDENT = r"(?:\d*[a-zA-Z-][a-zA-Z0-9-]*|0|[1-9]\d*)"
_PRE = rf"{_IDENT}(?:\.{_IDENT})*"
_BUILD = r"[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*"
_VERSION_RE = re.compile(rf"v?({_NUM})\.({_NUM})\.({_NUM})(?:-({_PRE}))?(?:\+{_BUILD})?")
_XR = rf"(?:{_NUM}|[xX*])"
# A partial version: 1, 1.2, 1.x, 1.2.3-rc.1+build; "v" or "=" may lead it.
_PARTIAL_RE = re.compile(
    rf"[v=\s]*({_XR})(?:\.({_XR})(?:\.({_XR})(?:-({_PRE}))?(?:\+{_BUILD})?)?)?")
_OP_RE = re.compile(r"(~>?|\^|[<>]=?|=)?")
_HYPHEN_RE = re.compile(r"\A\s*(\S+)\s+-\s+(\S+)\s*\Z")
_BUILD_ANYWHERE_RE = re.compile(rf"\+{_BUILD}")
_GLUE_RE = re.compile(r"(~>?|\^|[<>]=?|=)\s+")  # ">= 1.2" -> ">=1.2"


class InvalidVersion(ValueError):
    pass


class InvalidRange(ValueError):
    pass


def _prerelease_key(ident: str) -> tuple[int, int, str]:
    # Numeric identifiers sort numerically and before alphanumeric ones.
    return (0, int(ident), "") if ident.isdigit() else (1, 0, ident)


@record(frozen=True)
class Version:
    major: int
    minor: int
    patch: int
    prerelease: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> "Version":
        m = _VERSION_RE.fullmatch(text.strip())
        if not m:
            raise InvalidVersion(f"invalid version {text!r}")
        nums = [int(g) for g in m.group(1, 2, 3)]
        if any(n > MAX_SAFE_INTEGER for n in nums):
            raise InvalidVersion(f"invalid version {text!r}")
        pre = tuple(m.group(4).split(".")) if m.group(4) else ()
        return cls(*nums, pre)

    def key(self) -> tuple:
        # A release sorts after all of its prereleases.
        pre = (1,) if not self.prerelease else (0, tuple(_prerelease_key(p) for p in self.prerelease))
        return (self.major, self.minor, self.patch, pre)

    def __str__(self) -> str:
        core = f"{self.major}.{self.minor}.{self.patch}"
        return core + ("-" + ".".join(self.prerelease) if self.prerelease else "")


@record(frozen=True)
class Comparator:
    op: str  # one of < <= > >= = ; "" with version None means "any"
    version: Version | None

    def test(self, v: Version) -> bool:
        if self.version is None:
            return True
        a, b = v.key(), self.version.key()
        return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "=": a == b}[self.op]

    def __str__(self) -> str:
        return "" if self.version is None else ("" if self.op == "=" else self.op) + str(self.version)


ANY = Comparator("", None)
_FLOOR = "0"  # the prerelease tag "-0" is the lowest prerelease of a version


def _v(major: int, minor: int, patch: int, *pre: str) -> Version:
    return Version(major, minor, patch, tuple(pre))


@record(frozen=True)
class _Partial:
    major: int | None  # None = wildcard
    minor: int | None
    patch: int | None
    prerelease: tuple[str, ...]
    misordered: bool = False  # "x.1" or "1.x.3": refused only as a plain or primitive x-range

    @property
    def any_x(self) -> bool:
        return self.patch is None


def _is_x(part: str | None) -> bool:
    return part is None or part in ("x", "X", "*")


def _parse_partial(text: str, source: str) -> _Partial:
    m = _PARTIAL_RE.fullmatch(text)
    if not m:
        raise InvalidRange(f"invalid comparator {text!r} in range {source!r}")
    ma, mi, pa, pre = m.groups()
    misordered = (_is_x(ma) and not _is_x(mi)) or (_is_x(mi) and pa is not None and not _is_x(pa))
    nums = []
    wild = False
    for part in (ma, mi, pa):
        wild = wild or _is_x(part)
        value = None if wild else int(part)
        if value is not None and value > MAX_SAFE_INTEGER:
            raise InvalidRange(f"version number too large in {source!r}")
        nums.append(value)
    prerelease = tuple(pre.split(".")) if pre and not wild else ()
    return _Partial(nums[0], nums[1], nums[2], prerelease, misordered)


def _low(p: _Partial, z: tuple[str, ...]) -> Version:
    """The lowest version a partial stands for (``z`` is ("0",) when prereleases are included)."""
    if p.patch is not None:
        return Version(p.major, p.minor, p.patch, p.prerelease)
    return Version(p.major, p.minor or 0, 0, z)


def _next_up(p: _Partial) -> Version:
    """The first version above everything the partial covers, as ``X.Y.Z-0``."""
    if p.minor is None:
        return _v(p.major + 1, 0, 0, _FLOOR)
    if p.patch is None:
        return _v(p.major, p.minor + 1, 0, _FLOOR)
    return _v(p.major, p.minor, p.patch + 1, _FLOOR)


def _desugar(op: str, p: _Partial, z: tuple[str, ...], token: str, source: str) -> list[Comparator]:
    if op in ("~", "~>"):
        return _tilde(p, z)
    if op == "^":
        return _caret(p, z)
    if p.misordered:  # a number after a wildcard
        raise InvalidRange(f"invalid comparator {token!r} in range {source!r}")
    if p.major is None:  # *, x, >=*, <=*, or the empty set for >* and <*
        return [Comparator("<", _v(0, 0, 0, _FLOOR))] if op in (">", "<") else [ANY]
    if not p.any_x:
        return [Comparator(op or "=", _low(p, z))]
    if op in ("", "="):
        return [Comparator(">=", _low(p, z)), Comparator("<", _next_up(p))]
    if op == ">":
        return [Comparator(">=", Version(*_next_up(p).key()[:3], z))]
    if op == ">=":
        return [Comparator(">=", _low(p, z))]
    if op == "<":
        return [Comparator("<", Version(p.major, p.minor or 0, 0, (_FLOOR,)))]
    return [Comparator("<", _next_up(p))]  # "<="


def _whole_major(p: _Partial, z: tuple[str, ...]) -> list[Comparator] | None:
    """``~X``/``^X`` and wilder: every version, or the whole major line; None when a minor is given."""
    if p.major is None:
        return [ANY]
    if p.minor is None:
        return [Comparator(">=", _low(p, z)), Comparator("<", _v(p.major + 1, 0, 0, _FLOOR))]
    return None


def _floor(p: _Partial, z: tuple[str, ...]) -> Version:
    return _low(p, z) if p.patch is None else Version(p.major, p.minor, p.patch, p.prerelease)


def _tilde(p: _Partial, z: tuple[str, ...]) -> list[Comparator]:
    whole = _whole_major(p, z)
    if whole is not None:
        return whole
    return [Comparator(">=", _floor(p, z)), Comparator("<", _v(p.major, p.minor + 1, 0, _FLOOR))]


def _caret(p: _Partial, z: tuple[str, ...]) -> list[Comparator]:
    whole = _whole_major(p, z)
    if whole is not None:
        return whole
    if p.major != 0:
        high = _v(p.major + 1, 0, 0, _FLOOR)
    elif p.minor != 0 or p.patch is None:
        high = _v(0, p.minor + 1, 0, _FLOOR)
    else:  # ^0.0.3 pins the patch
        high = _v(0, 0, p.patch + 1, _FLOOR)
    return [Comparator(">=", _floor(p, z)), Comparator("<", high)]


def _hyphen(lo: _Partial, hi: _Partial, z: tuple[str, ...]) -> list[Comparator]:
    out: list[Comparator] = []
    if lo.major is not None:
        out.append(Comparator(">=", _low(lo, z) if lo.prerelease or lo.any_x
                              else Version(lo.major, lo.minor, lo.patch, z)))
    if hi.major is not None:
        if hi.any_x:
            out.append(Comparator("<", _next_up(hi)))
        elif hi.prerelease or not z:
            out.append(Comparator("<=", Version(hi.major, hi.minor, hi.patch, hi.prerelease)))
        else:
            out.append(Comparator("<", _next_up(hi)))
    return out or [ANY]


@record(frozen=True)
class Range:
    raw: str
    sets: tuple[tuple[Comparator, ...], ...]
    include_prerelease: bool = False

    @classmethod
    def parse(cls, text: str, *, include_prerelease: bool = False) -> "Range":
        return _parse_range(text, include_prerelease)

    def test(self, version: Version | str) -> bool:
        if isinstance(version, str):
            try:
                version = Version.parse(version)
            except InvalidVersion:
                return False
        return any(self._test_set(s, version) for s in self.sets)

    def _test_set(self, comparators: tuple[Comparator, ...], v: Version) -> bool:
        if not all(c.test(v) for c in comparators):
            return False
        if not v.prerelease or self.include_prerelease:
            return True
        # A prerelease only matches when a comparator opts in to prereleases of that exact tuple.
        return any(c.version is not None and c.version.prerelease
                   and c.version.key()[:3] == v.key()[:3] for c in comparators)

    def __str__(self) -> str:
        return "||".join(" ".join(str(c) for c in s) for s in self.sets)


@lru_cache(maxsize=1024)
def _parse_range(text: str, include_prerelease: bool) -> Range:
    z = (_FLOOR,) if include_prerelease else ()
    raw = " ".join(text.split())
    sets = []
    for alternative in raw.split("||"):
        sets.append(tuple(_parse_set(alternative.strip(), raw, z)))
    if len(sets) > 1 and (ANY,) in sets:
        # npm collapses a union holding a bare "*" to just "*", which then admits no prerelease.
        sets = [(ANY,)]
    return Range(raw, tuple(sets), include_prerelease)


def _parse_set(text: str, source: str, z: tuple[str, ...]) -> list[Comparator]:
    text = _BUILD_ANYWHERE_RE.sub("", text)  # npm drops build metadata before anything else
    hyphen = _HYPHEN_RE.match(text)
    if hyphen:
        return _hyphen(_parse_partial(hyphen.group(1), source),
                       _parse_partial(hyphen.group(2), source), z)
    comparators: list[Comparator] = []
    for token in _GLUE_RE.sub(r"\1", text).split():
        op = _OP_RE.match(token).group(0) or ""
        partial = _parse_partial(token[len(op):], source)
        comparators.extend(_desugar(op, partial, z, token, source))
    floor = Comparator(">=", _v(0, 0, 0, *z))  # npm rewrites ">=0.0.0" to "*"
    real = [c for c in comparators if c is not ANY and c != floor]
    return real or [ANY]


def satisfies(version: str | Version, range_text: str, *, include_prerelease: bool = False) -> bool:
    """npm's ``semver.satisfies``: False for an unparsable version or range."""
    try:
        return Range.parse(range_text, include_prerelease=include_prerelease).test(version)
    except InvalidRange:
        return False


def valid_range(range_text: str) -> bool:
    try:
        Range.parse(range_text)
        return True
    except InvalidRange:
        return False


def workspace_range(spec: str, version: str) -> str:
    """The range a ``workspace:`` spec stands for, given the workspace package's own ``version``.

    ``workspace:*`` is any version, ``workspace:^``/``workspace:~`` are ``^version``/``~version``,
    and ``workspace:<range>`` is that range (pnpm's publish-time rewrite).
    """
    body = spec[len("workspace:"):] if spec.startswith("workspace:") else spec
    if body in ("", "*"):
        return "*"
    if body in ("^", "~"):
        return body + version
    return body
