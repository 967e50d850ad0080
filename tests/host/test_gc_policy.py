"""``host run`` freezes its boot heap (dshctl/core/gcpause.py): the boot's garbage is collected
first (a cycle is not kept forever), and what survives leaves the collector's generations; a large
acyclic build after that (a restore checkpoint's events) is frozen with it."""
from __future__ import annotations

import gc
import weakref

from dshctl.core.gcpause import build_long_lived, freeze_settled_heap, thaw_heap


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
        thaw_heap()
    assert gc.get_freeze_count() == 0


def _in_young_generations(obj) -> bool:
    return any(o is obj for gen in (0, 1, 2) for o in gc.get_objects(generation=gen))


def test_a_build_in_a_cli_process_pauses_the_collector_and_freezes_nothing():
    assert gc.get_freeze_count() == 0 and gc.isenabled()
    seen = []
    built = build_long_lived(lambda: seen.append(gc.isenabled()) or [[i] for i in range(100)])
    assert seen == [False] and gc.isenabled()      # paused inside, on again after
    assert gc.get_freeze_count() == 0 and _in_young_generations(built)


def test_after_the_heap_froze_a_build_is_frozen_too_and_the_garbage_before_it_collected():
    freeze_settled_heap()
    try:
        garbage = Node()
        garbage.self = garbage
        gone = weakref.ref(garbage)
        del garbage
        before = gc.get_freeze_count()
        built = build_long_lived(lambda: [[i] for i in range(1000)])
        assert gone() is None                       # collected, not frozen with the build
        assert not _in_young_generations(built)     # no young collection walks it
        assert gc.get_freeze_count() >= before + 1001 and gc.isenabled()
        del built                                   # acyclic: reference counting still frees it
        assert gc.get_freeze_count() < before + 1001
    finally:
        thaw_heap()


def test_a_restore_in_a_host_that_froze_its_heap_leaves_the_restored_events_frozen(tmp_path):
    from dshctl.agents.session import checkpoint
    from dshctl.agents.session.api import SessionStore
    from dshctl.agents.session.restore import restore
    from tests.agents.session_helpers import write_turn

    log = SessionStore(tmp_path).create(cwd="/w", session_id="s")
    for turn in range(1, 121):
        write_turn(log, turn, f"prompt {turn}", deltas=4)
        log.commit()
    log.close()
    restore(log.path, strict=True, save=True)       # writes the checkpoint
    freeze_settled_heap()
    try:
        again = restore(log.path, strict=True, save=False)
        assert again.from_checkpoint > checkpoint.SAVE_AFTER
        assert not _in_young_generations(again.scan.events[0])
    finally:
        thaw_heap()
