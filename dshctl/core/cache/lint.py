"""The lint result cache: a file is linted again only when something its result depends on changed.

An entry's key is the file's bytes, its path and whether it was named explicitly (both appear in
or decide the result), the dshctl version (the rules' code), the effective rule configuration
(an explicit input: whatever produces it, select/ignore options or config files, hands the
resolved mapping in) and a digest of the shipped JSON Schemas. The value is the file's
diagnostics and whether it counted as checked. No stat data is trusted: every run reads every
file, so an edit within one timestamp tick is still seen. Entries are sealed files under
``<cache root>/lint`` (``diskcache``), 64 MiB at most.

This module imports no parser: a run where every file hits never loads ruamel or jsonschema, nor
json when every hit is clean (a clean result is stored as a word, findings as JSON).
"""
from __future__ import annotations

from functools import lru_cache

TYPE_CHECKING = False  # typing is not imported at run time (a cached lint's start-up)
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable, Mapping, Sequence

from dshctl.core.data import schemas_dir
from dshctl.core.diagnostics import Diagnostic
from dshctl.core.cache.disk import DiskCache, code_version, extend_key, key_prefix, new_hash, read_regular

FORMAT = 2   # 2: clean results as words, not JSON
MAX_BYTES = 64 * 1024 * 1024
MAX_CACHED_FILE = 4 * 1024 * 1024  # bigger files are linted every time (and never stored)

# (path, explicit, bytes or None when unreadable) -> (diagnostics, counted)
Job = tuple[str, bool, "bytes | None"]
Result = tuple[list[Diagnostic], bool]


@lru_cache(maxsize=None)
def schema_digest() -> str:
    h = new_hash()
    for path in sorted(schemas_dir().glob("*.json")):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def config_digest(rule_config: Mapping[str, Any] | None) -> str:
    """The rule configuration (rule ids to levels and options: plain data), in a stable order."""
    return new_hash(repr(sorted((rule_config or {}).items())).encode()).hexdigest()


def _read(path: str) -> bytes | None:
    """The bytes of a regular file of cacheable size; None sends the file down the uncached path
    (which reports a directory, a FIFO, a missing or an oversized file with its own message)."""
    return read_regular(path, MAX_CACHED_FILE)


CLEAN = {True: b"clean", False: b"clean, not counted"}
_CLEAN_RESULTS = {word: counted for counted, word in CLEAN.items()}


def _encode(result: Result) -> bytes:
    diags, counted = result
    if not diags:
        return CLEAN[bool(counted)]
    import json

    return json.dumps([counted, [[d.file, d.line, d.column, d.rule, d.severity, d.message, d.hint,
                                  d.json_path] for d in diags]]).encode()


def _decode(payload: bytes) -> Result | None:
    counted = _CLEAN_RESULTS.get(payload)
    if counted is not None:
        return [], counted
    import json

    try:
        counted, rows = json.loads(payload)
        return [Diagnostic(*row) for row in rows], bool(counted)
    except (ValueError, TypeError):
        return None


class LintCache:
    def __init__(self, rule_config: Mapping[str, Any] | None, *, enabled: bool = True) -> None:
        self.store = DiskCache("lint", MAX_BYTES, enabled=enabled)
        self.fixed = (str(FORMAT), code_version(), schema_digest() if self.store.enabled else "",
                      config_digest(rule_config))
        self._prefix = key_prefix("lint", *self.fixed)   # hashed once, extended per file
        self.hits = 0

    def key(self, path: str, explicit: bool, data: bytes) -> str:
        return extend_key(self._prefix, path, "1" if explicit else "0", data)

    def get(self, path: str, explicit: bool, data: bytes) -> Result | None:
        payload = self.store.get(self.key(path, explicit, data))
        result = _decode(payload) if payload is not None else None
        self.hits += result is not None
        return result

    def put(self, path: str, explicit: bool, data: bytes, result: Result) -> None:
        self.store.put(self.key(path, explicit, data), _encode(result))


def lint_with_cache(files: Iterable[tuple], rule_config: Mapping[str, Any] | None,
                    run: Callable[[Sequence[Job]], list[Result]], *, use_cache: bool = True
                    ) -> tuple[list[Diagnostic], int, int]:
    """Diagnostics (sorted), files checked, files linted (cache misses). ``files`` are ``(path,
    explicit)`` or ``(path, explicit, salt)``, the salt naming what else decides that file's result
    (its kind and the rule levels in force for it, config files found upward included). ``run``
    lints the misses, from the given bytes, and returns one result per job in order."""
    cache = LintCache(rule_config, enabled=use_cache)
    results: list[Result | None] = []
    jobs: list[Job] = []
    slots: list[int] = []
    salts: list[str] = []
    for item in files:
        path, explicit = item[0], item[1]
        salt = item[2] if len(item) > 2 else ""  # what else decides this file's result (kind, levels)
        name = str(path)
        data = _read(name) if cache.store.enabled else None
        hit = cache.get(name + "\0" + salt, explicit, data) if data is not None else None
        if hit is None:
            slots.append(len(results))
            jobs.append((name, explicit, data))
            salts.append(salt)
        results.append(hit)
    if jobs:
        for slot, job, salt, result in zip(slots, jobs, salts, run(jobs)):
            results[slot] = result
            if job[2] is not None:
                cache.put(job[0] + "\0" + salt, job[1], job[2], result)
        cache.store.prune()
    diags = [d for found, _ in results for d in found]  # type: ignore[misc]
    return sorted(diags, key=Diagnostic.sort_key), sum(counted for _, counted in results), len(jobs)  # type: ignore[misc]
