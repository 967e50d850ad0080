"""HTTP caching of packuments in the store, the way npm (make-fetch-happen) caches them.

    store/npm/packuments/<sha256 of "url\\naccept">.json
        {"url", "accept", "etag", "lastModified", "maxAge", "noCache", "age", "storedAt", "body"}

The registry's ``Cache-Control: max-age`` (registry.npmjs.org sends ``public, max-age=300``) says
how long a packument is *fresh*: a fresh entry is used without a request. A stale one is
revalidated with ``If-None-Match``/``If-Modified-Since``; a 304 renews it. A packument with no
``max-age`` (a registry that sends no ``Cache-Control``) is fresh for a short heuristic time, as
RFC 9111 §4.2.2 allows and npm does (10 % of the time since its ``Last-Modified``), here kept
between 60 s and 300 s (docs/bundles.md, "Packument cache"). ``no-store`` (or
``private``) is never written, ``no-cache`` is always revalidated. The key is the packument URL
plus the ``Accept`` header (the abbreviated and the full document differ); request headers, and so
an auth token, are never stored. An entry that does not parse or does not match its key is absent.

Policies (docs/bundles.md): ``default`` (fresh: use; stale: revalidate), ``prefer-online``
(always revalidate: ``update``, npm's ``prefer-online``), ``prefer-offline`` (any cached entry,
whatever its age; fetch only what is missing: npm's ``prefer-offline``), ``offline`` (the cache
alone: ``--offline``, npm's ``offline``).
"""
from __future__ import annotations

import hashlib
import json
import re
import time
from pathlib import Path

from dshctl.bundles.store import write_unsynced
from dshctl.records import record

POLICIES = ("default", "prefer-online", "prefer-offline", "offline")
_MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*\"?(\d+)", re.I)  # s-maxage: shared caches only
HEURISTIC_MIN, HEURISTIC_MAX = 60, 300  # seconds a packument without max-age is fresh


@record
class Entry:
    url: str
    accept: str
    body: dict
    etag: str | None = None
    last_modified: str | None = None
    max_age: int | None = None  # seconds (explicit or heuristic); None: revalidate (old entries)
    no_cache: bool = False
    age: float = 0.0  # the response's Age header when it was stored
    stored_at: float = 0.0

    def fresh(self, now: float | None = None) -> bool:
        if self.no_cache or self.max_age is None:
            return False
        age = (time.time() if now is None else now) - self.stored_at + self.age
        return 0 <= age < self.max_age

    def validators(self) -> dict[str, str]:
        headers = {}
        if self.etag:
            headers["if-none-match"] = self.etag
        if self.last_modified:
            headers["if-modified-since"] = self.last_modified
        return headers

    def renewed(self, headers, now: float | None = None) -> "Entry":
        """The entry after a 304: new freshness (and validators, when the answer has them)."""
        fresh = from_response(self.url, self.accept, self.body, headers, now)
        if fresh is None:
            return self
        fresh.etag = fresh.etag or self.etag
        fresh.last_modified = fresh.last_modified or self.last_modified
        return fresh


def storable(headers) -> bool:
    cc = (headers.get("cache-control") or "").lower()
    return "no-store" not in cc and "private" not in cc


def from_response(url: str, accept: str, body: dict, headers, now: float | None = None) -> Entry | None:
    """The cache entry for a 200 (or 304) answer, or None when it may not be stored."""
    if not storable(headers):
        return None
    cc = headers.get("cache-control") or ""
    match = _MAX_AGE.search(cc)
    try:
        age = max(0.0, float(headers.get("age") or 0))
    except ValueError:
        age = 0.0
    now = time.time() if now is None else now
    return Entry(url, accept, body, etag=headers.get("etag"),
                 last_modified=headers.get("last-modified"),
                 max_age=int(match.group(1)) if match else heuristic_max_age(headers, now),
                 no_cache="no-cache" in cc.lower(), age=age, stored_at=now)


def heuristic_max_age(headers, now: float) -> int:
    """Freshness of an answer that gives none: 10 % of how long ago it last changed (by the
    server's ``Date``), as npm's cache computes it, within [HEURISTIC_MIN, HEURISTIC_MAX]. The
    floor lets a second ``plugin add`` within a minute skip the registry (npm revalidates a
    packument that changed a moment ago; pnpm revalidates every one on every run); the cap keeps a
    registry without headers from being trusted longer than registry.npmjs.org's own 300 s."""
    def when(name: str) -> float | None:
        return http_date(headers.get(name) or "")

    changed = when("last-modified")
    served = when("date") or now
    since = served - changed if changed is not None else 0.0
    return int(min(HEURISTIC_MAX, max(HEURISTIC_MIN, since * 0.1)))


class PackumentCache:
    def __init__(self, root: Path):
        self.root = root  # store/npm/packuments

    def path(self, url: str, accept: str) -> Path:
        return self.root / (hashlib.sha256(f"{url}\n{accept}".encode()).hexdigest() + ".json")

    def get(self, url: str, accept: str) -> Entry | None:
        try:
            data = json.loads(self.path(url, accept).read_bytes())
            entry = Entry(data["url"], data["accept"], data["body"], data.get("etag"),
                          data.get("lastModified"), data.get("maxAge"), bool(data.get("noCache")),
                          float(data.get("age") or 0), float(data["storedAt"]))
        except (OSError, ValueError, KeyError, TypeError):
            return None  # missing or damaged: as if never cached
        if entry.url != url or entry.accept != accept or not isinstance(entry.body, dict) or \
                not (entry.max_age is None or isinstance(entry.max_age, int)):
            return None
        return entry

    def put(self, entry: Entry) -> None:
        """Temp file + rename, not fsynced: a killed run leaves the old entry or the new one."""
        path = self.path(entry.url, entry.accept)
        data = {"url": entry.url, "accept": entry.accept, "etag": entry.etag,
                "lastModified": entry.last_modified, "maxAge": entry.max_age,
                "noCache": entry.no_cache, "age": entry.age, "storedAt": entry.stored_at,
                "body": entry.body}
        self.root.mkdir(parents=True, exist_ok=True)
        write_unsynced(path, json.dumps(data, separators=(",", ":")).encode())


_MONTHS = {m: i for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)}


def http_date(value: str) -> float | None:
    """Seconds since the epoch of an HTTP date, None when it is not one. The IMF-fixdate every
    current server sends (``Sun, 06 Nov 1994 08:49:37 GMT``) is read here; the two obsolete forms
    go to ``email.utils``, whose import (~5 ms) a cold add otherwise never pays."""
    import calendar

    parts = value.split()
    if len(parts) == 6 and parts[5] == "GMT" and parts[2].lower() in _MONTHS:
        try:
            day, (hour, minute, second) = int(parts[1]), (int(x) for x in parts[4].split(":"))
            if not (1 <= day <= 31 and 0 <= hour < 24 and 0 <= minute < 60 and 0 <= second <= 60):
                return None
            return float(calendar.timegm((int(parts[3]), _MONTHS[parts[2].lower()],
                                          day, hour, minute, second)))
        except (ValueError, OverflowError):
            return None
    from email.utils import parsedate_to_datetime

    try:
        return parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
