"""CPython's cyclic GC around dshctl's heaps: paused around work that allocates many long-lived objects
and frees none; a long-running process's settled heap frozen out of the collector's scans."""
from __future__ import annotations

import contextlib
import gc
from typing import Callable, Iterator, TypeVar

T = TypeVar("T")
_SETTLED = False   # freeze_settled_heap ran (asked here: gc.get_freeze_count walks the frozen list)


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
    global _SETTLED
    gc.collect()
    gc.freeze()
    _SETTLED = True
    return gc.get_freeze_count()


def thaw_heap() -> None:
    """Undo ``freeze_settled_heap`` (tests): the heap rejoins the collector's oldest generation."""
    global _SETTLED
    gc.unfreeze()
    _SETTLED = False


def build_long_lived(build: Callable[[], T]) -> T:
    """``build()`` with the collector paused; in a process that froze its settled heap (``host run``),
    what it built is frozen too. The first young collection after a large paused build walks all of
    it (a restored 10,000-event session: ~30,000 containers, 2–9 ms on the first turn; issue 30), and
    the ones after walk it again as it ages. The garbage made so far is collected first, so the freeze
    keeps nothing unreachable; what ``build`` makes must be acyclic (``marshal`` data is), so that
    reference counting still frees it once dropped."""
    if not _SETTLED:   # a CLI run, a test run: the usual generations
        with gc_paused():
            return build()
    gc.collect()   # walks only what was made since the last freeze
    with gc_paused():
        result = build()
        gc.freeze()
    return result
