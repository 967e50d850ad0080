"""The last rendering of a roster (``preset list -f json``'s text), reused while the roster is the same.

Writing 10,000 presets as indented JSON costs more than scanning them again. After a scan, the
roster's *fingerprint* is a digest of everything its rendering is made from: the roots (path, trust,
origin), the directory of every preset in roster order and of every shadowed copy, the SHA-256 of
the bytes of every ``agent.cordis.yml`` and ``preset.yml`` the scan read (as the scan cache holds
them; a preset file not among them is absent), every skipped entry with its reason, and every root
error. The health, metadata, order and shadowing of each preset
are functions of those (and of dshctl's code, which keys the entry), so an equal fingerprint means
an equal rendering. A scan where some value did not come from a cache entry (a stat or read error,
a FIFO, an oversized file: ``ScanCache.uncached``) has no fingerprint, and nothing is reused.
One sealed entry per set of roots and format (``diskcache``); tests/test_caches.py checks the
rendering against a run without any cache after random edits, renames, touches and truncations.
"""
from __future__ import annotations

import hashlib
import marshal
from typing import Sequence

from dshctl.core.cache.disk import DiskCache, code_version, key_digest

from .cache import ScanCache
from .model import Roster, Root

FORMAT = 1
MAX_BYTES = 64 * 1024 * 1024


def fingerprint(roster: Roster, cache: ScanCache) -> bytes | None:
    """The digest of what ``roster``'s rendering is made from, or None (then never reuse one)."""
    if cache.uncached:
        return None
    # After the scan's retain, a table holds exactly the files the scan read, each with the SHA-256
    # of its bytes; a preset file that is not in its table is absent. Tables keep their insertion
    # order, so the same files can give another digest (a miss, never a wrong hit).
    files = [(kind, list(table), [entry.digest for entry in table.values()])
             for kind, table in sorted(cache.tables.items())]
    parts = (FORMAT, [(str(r.path), r.trust, r.origin) for r in roster.roots],
             [p.dir_str for p in roster.presets], [p.dir_str for p in roster.shadowed], files,
             [(str(s.root.path), s.name, str(s.path), s.reason, s.notable, s.hint) for s in roster.skipped],
             [str(e) for e in roster.root_errors])
    return hashlib.sha256(marshal.dumps(parts)).digest()


def _store() -> DiskCache:
    return DiskCache("preset-list", MAX_BYTES)


def _key(roots: Sequence[Root], kind: str) -> str:
    return key_digest("preset-list", str(FORMAT), code_version(), kind, *(str(r.path) for r in roots))


def load(roots: Sequence[Root], kind: str, print_: bytes) -> str | None:
    """The rendering saved for ``print_`` (a fingerprint), or None."""
    payload = _store().get(_key(roots, kind))
    if payload is None or payload[:len(print_)] != print_:
        return None
    try:
        return payload[len(print_):].decode("utf-8")
    except UnicodeDecodeError:
        return None


def save(roots: Sequence[Root], kind: str, print_: bytes, text: str) -> None:
    store = _store()
    if not store.enabled:
        return
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: never in text print_json wrote; not worth a failure
        return
    store.put(_key(roots, kind), print_ + data)
    store.prune()
