"""Pause CPython's cyclic GC around work that allocates many long-lived objects and frees none."""
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
