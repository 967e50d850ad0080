"""CPython's cyclic GC around dshctl's heaps: paused around work that allocates many long-lived objects
and frees none; a long-running process's settled heap frozen out of the collector's scans."""
from __future__ import annotations

import contextlib
import gc
from typing import Iterator


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """The collector would rescan the growing heap again and again (quadratic in its size) for
    nothing; it resumes, if it was on, when the block ends."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def freeze_settled_heap() -> int:
    """Collect the garbage made so far, then freeze what survives (``gc.freeze``); returns how many
    objects are frozen. For a long-running process once its start-up heap is built (``host run``
    once ready, ``dshctl lsp`` after its imports): a full collection walks every tracked container,
    ~100,000 of them after a host's boot, up to 130 ms on the event loop (a streamed token waited
    that long; docs/performance.md, issue 26). Later collections walk only what was made since. A
    frozen cycle that becomes garbage later (a module unloaded by a reload) is not reclaimed; that
    is bounded by what one start-up loaded. Never for an in-process host in a test run (its hosts
    come and go)."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
