"""The exact-path watcher on real files: native events, and the polling mode it falls back to."""
from __future__ import annotations

import pytest

from dshctl.host.watch import PathWatcher

from .helpers import run_async, until, write


@pytest.mark.parametrize("polling", [False, True])
def test_add_change_delete_and_a_parent_that_appears_later(tmp_path, polling):
    @run_async()
    async def scenario():
        near = tmp_path / "a" / "layer.yml"
        far = tmp_path / "b" / "c" / "layer.yml"       # its parent directories do not exist yet
        (tmp_path / "a").mkdir()
        seen: list = []
        watcher = PathWatcher([near, far], seen.extend, force_polling=polling)
        watcher.start()
        await watcher.ready.wait()   # the OS watcher (or the poller's baseline) exists from here
        # (sizes differ: a polling watcher compares size and mtime)
        for step, action in enumerate([lambda: write(near, "x"), lambda: write(near, "yy"),
                                       lambda: near.unlink(), lambda: write(far, "z")]):
            seen.clear()
            action()
            target = far if step == 3 else near
            await until(lambda: target in seen, what=f"event {step}")
        await watcher.stop()

    scenario()


@pytest.mark.parametrize("polling", [False, True])
def test_a_target_added_later_is_not_reported_as_changed_until_it_changes(tmp_path, polling):
    # The module reloader adds plugin and dshctl modules as the host imports them after start; an
    # existing file added to the watch set must not look like a file that just appeared (that once
    # made the host ask for a restart because a lazily imported dshctl module "changed").
    @run_async()
    async def scenario():
        first, late = tmp_path / "first.py", tmp_path / "late.py"
        write(first, "a")
        write(late, "b")
        seen: list = []
        watcher = PathWatcher([first], seen.extend, force_polling=polling)
        watcher.start()
        await watcher.ready.wait()
        watcher.add([late])
        write(first, "aa")                          # a real change, to know a batch went through
        await until(lambda: first in seen, what="the change to first.py")
        await until(lambda: first in seen, what="one more batch")
        assert late not in seen
        write(late, "bbb")
        await until(lambda: late in seen, what="the real change to late.py")
        await watcher.stop()

    scenario()


@pytest.mark.parametrize("polling", [False, True])
def test_a_target_symlinked_into_a_configmap_volume_elsewhere_sees_each_swap_and_not_the_cleanup(
        tmp_path, polling):
    # The target's directory holds only a symlink into the volume; the kubelet's swap is a rename of
    # ..data in the volume, a directory nobody named. Removing the old generation changes nothing.
    import asyncio
    import os

    from .kubelet import ConfigMapVolume

    @run_async()
    async def scenario():
        volume = ConfigMapVolume(tmp_path / "config", {"layer.yml": "one"})
        target = tmp_path / "profile" / "layer.yml"
        target.parent.mkdir()
        os.symlink(volume.directory / "layer.yml", target)
        seen: list = []
        watcher = PathWatcher([target], seen.extend, force_polling=polling)
        watcher.start()
        await watcher.ready.wait()
        for text in ("two", "three"):
            old = volume.swap({"layer.yml": text})
            await until(lambda: target in seen, what=f"the swap to {text}")
            seen.clear()
            volume.remove(old)
            await asyncio.sleep(0.8)     # several steps and one rust_timeout: time to see a change
            assert seen == []
        await watcher.stop()

    scenario()
