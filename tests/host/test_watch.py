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
