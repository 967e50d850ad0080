"""The host process and Python's cyclic garbage collector.

A full (generation 2) collection walks every tracked container in the process. Once ``host run`` is
ready, most of them are the boot's: imported modules, the plugin tree, parsed config (about 100,000
containers). Walking them took up to 130 ms, on the event loop, a few times a minute in a busy
session: a streamed token waited that long to reach the browser (docs/performance.md, issue 26). So
the boot's garbage is collected once and what survives is frozen (``gc.freeze``): later collections
walk only what the running host made since. The cost is that a reference cycle among the frozen
objects that later becomes garbage (a module unloaded by a reload) is not reclaimed; those are
bounded by what one boot loaded. Only the ``host run`` process does this, never an in-process host in
a test run (its hosts come and go)."""
from __future__ import annotations

import gc


def freeze_boot_heap() -> int:
    """Collect the boot's garbage, freeze the rest; returns how many objects were frozen."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
