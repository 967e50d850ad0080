"""``host run`` freezes its boot heap (dshctl/core/gcpause.py): the boot's garbage is collected
first (a cycle is not kept forever), and what survives leaves the collector's generations."""
from __future__ import annotations

import gc
import weakref

from dshctl.core.gcpause import freeze_settled_heap


class Node:
    pass


def test_the_boot_heap_is_frozen_after_its_garbage_is_collected():
    garbage = Node()
    garbage.self = garbage                 # a cycle: only the collector can free it
    gone = weakref.ref(garbage)
    del garbage
    try:
        frozen = freeze_settled_heap()
        assert gone() is None              # collected before the freeze, not frozen forever
        # the count it returns is the frozen heap's; a frozen object freed since (by refcount, any
        # thread) leaves it, none joins without another freeze
        assert frozen >= gc.get_freeze_count() > 1000
        assert len(gc.get_objects(generation=2)) < frozen / 10   # full collections skip them now
    finally:
        gc.unfreeze()
    assert gc.get_freeze_count() == 0
