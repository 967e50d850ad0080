"""The scan cache on disk: a later `dshctl preset …` run re-reads only files whose stat changed.

One sealed entry per set of roots (``diskcache``), holding every table of the ``ScanCache``: path →
(stat stamp, SHA-256 of the bytes, parsed health or metadata). Loading trusts a stamp only when it
was at least two seconds older than the save (git's "racily clean" rule: a same-size rewrite within
one timestamp tick leaves mtime, size and ctime equal); a younger entry keeps its hash and value,
so the file is read and hashed again and re-parsed only if its bytes differ. The payload is
``marshal`` data of plain tuples, checked against its seal (``diskcache``: BLAKE2b-256) before it is
decoded; anything unreadable, damaged or written by another dshctl version is ignored and rebuilt.
"""
from __future__ import annotations

import marshal
import time
from typing import Any, Sequence

from dshctl.core.cache.disk import DiskCache, code_version, key_digest
from dshctl.core.gcpause import gc_paused
from dshctl.errors import Loc

from .cache import Entry, ScanCache
from .model import Health, Metadata, MetadataProblem, Root

FORMAT = 1
MAX_BYTES = 256 * 1024 * 1024
RACY_NS = 2_000_000_000


def _store() -> DiskCache:
    return DiskCache("presets", MAX_BYTES)


def _digest(roots: Sequence[Root]) -> str:
    return key_digest("presets", str(FORMAT), code_version(), *(str(r.path) for r in roots))


def load_scan_cache(roots: Sequence[Root]) -> ScanCache:
    """The cache saved for these roots, or an empty one."""
    with gc_paused():  # ~15,000 entries at 10,000 presets, none of them garbage
        return _load(roots)


def _load(roots: Sequence[Root]) -> ScanCache:
    cache = ScanCache()
    payload = _store().get(_digest(roots))
    if payload is None:
        return cache
    try:
        data = marshal.loads(payload)
        if data[0] != (FORMAT, code_version(), [str(r.path) for r in roots]):
            return cache
        for kind, rows in data[1].items():
            decode = _DECODERS[kind]
            cache.tables[kind] = {path: Entry(stamp, digest, decode(value))
                                  for path, (stamp, digest, value) in rows.items()}
    except (ValueError, EOFError, TypeError, KeyError, IndexError):
        return ScanCache()  # sealed but not in the shape we write: rebuild
    return cache


def save_scan_cache(roots: Sequence[Root], cache: ScanCache) -> None:
    """Write the cache when the scan changed it (silently skipped when the disk refuses)."""
    if not cache.dirty:
        return
    store = _store()
    if not store.enabled:
        return
    young = time.time_ns() - RACY_NS
    tables = {}
    for kind, table in cache.tables.items():
        encode = _ENCODERS[kind]
        tables[kind] = {path: (_trusted(e.stamp, young), e.digest, encode(e.value)) for path, e in table.items()}
    try:
        payload = marshal.dumps(((FORMAT, code_version(), [str(r.path) for r in roots]), tables))
    except ValueError:
        return  # a value of a type marshal does not know: not worth a failure, just no cache
    store.put(_digest(roots), payload)
    store.prune()


def _trusted(stamp, young: int):
    """None (never equal to a real stamp) for a file changed within the racy window."""
    if stamp is None or stamp[0] >= young or stamp[2] >= young:
        return None
    return stamp


def _loc(loc: Loc | None) -> Any:
    return None if loc is None else (loc.file, loc.line, loc.column)


def _unloc(raw: Any) -> Loc | None:
    return None if raw is None else Loc(*raw)


def _encode_health(h: Health) -> Any:
    return None if h.broken is None and h.loc is None and h.detail is None else (h.broken, _loc(h.loc), h.detail)


_HEALTHY = Health()


def _decode_health(raw: Any) -> Health:
    return _HEALTHY if raw is None else Health(raw[0], _unloc(raw[1]), raw[2])


def _encode_metadata(m: Metadata) -> Any:
    return (m.name, m.description, m.order, tuple((p.message, _loc(p.loc)) for p in m.problems))


def _decode_metadata(raw: Any) -> Metadata:
    name, description, order, problems = raw
    return Metadata(name, description, order, tuple(MetadataProblem(msg, _unloc(loc)) for msg, loc in problems))


_ENCODERS = {"health": _encode_health, "metadata": _encode_metadata}
_DECODERS = {"health": _decode_health, "metadata": _decode_metadata}
