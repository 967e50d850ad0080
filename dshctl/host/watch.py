"""Exact-path file watching with watchfiles, including paths whose parent directory does not exist yet.

Each target's nearest existing ancestor directory is watched (not recursively). When a missing directory
on a target's path appears, the watch set is rebuilt, so a file created later under a new directory is
still seen. ``on_change(paths)`` is called with the targets that were added, changed or deleted.
Where native events do not work (or cannot be set up), the exact paths are polled instead.
"""
from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Callable, Iterable

# watchfiles groups events for up to DEBOUNCE ms, yielding STEP ms after the last one: small values keep
# save-to-reload latency low (docs/performance.md); the reloader's dirty flag does the coalescing. A save
# is seen 1-2 steps after it happens; each step also wakes the watcher thread while idle (measured: 0.9 %
# of a core at 5 ms, 1.4 % at 3 ms, 2.7 % at 1 ms), so 3 ms.
DEBOUNCE_MS = 200
STEP_MS = 3
POLL_S = 0.05  # the polling fallback's interval


def _signature(path: Path):
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def _anchor(target: Path) -> Path:
    """The nearest existing ancestor directory of ``target``."""
    node = target.parent
    while not node.is_dir() and node != node.parent:
        node = node.parent
    return node


def _link_dirs(target: Path, max_links: int = 40) -> set[Path]:
    """The directories a symlinked ``target`` is resolved through: the one holding each symlink met on
    the way (component by component, as the kernel resolves it) and the one holding the file it ends
    at. A swap anywhere on that chain (a ConfigMap's ``..data`` renamed in a volume mounted elsewhere)
    is an event in one of them. Empty when no component is a symlink."""
    dirs: set[Path] = set()
    pending = list(target.parts[1:])   # targets are absolute
    current = Path(target.anchor)
    while pending and len(dirs) <= max_links:
        part = pending.pop(0)
        if part == "..":
            current = current.parent
            continue
        candidate = current / part
        try:
            link = Path(os.readlink(candidate))
        except OSError:   # not a symlink, or missing: walk on
            current = candidate
            continue
        dirs.add(current)
        if link.is_absolute():
            current, pending = Path(link.anchor), list(link.parts[1:]) + pending
        else:
            pending = list(link.parts) + pending
    if dirs:
        dirs.add(current.parent)
    return {d for d in dirs if d.is_dir()}


class PathWatcher:
    def __init__(self, targets: Iterable[Path], on_change: Callable[[list[Path]], None], *,
                 force_polling: bool | None = None, on_error: Callable[[str], None] | None = None):
        self.targets = {Path(os.path.abspath(t)) for t in targets}
        self.on_change = on_change
        if force_polling is None and os.environ.get("WATCHFILES_FORCE_POLLING"):
            force_polling = True  # WSL, Docker and network mounts: the usual switch, our poller
        self.force_polling = force_polling
        self.on_error = on_error or (lambda message: None)
        self._stop = asyncio.Event()
        self._task: asyncio.Task | None = None
        self.ready = asyncio.Event()  # set once the first watch set is registered
        # What each mode last saw; targets added later start from what they are when added, so a
        # module imported after start is not mistaken for a file that just appeared.
        self._existing = {t for t in self.targets if t.exists()}
        self._seen = {t: _signature(t) for t in self.targets}

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        self._stop.set()
        if self._task is not None and not self._task.done():
            try:
                await asyncio.wait_for(self._task, 5)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                self._task.cancel()

    def add(self, targets: Iterable[Path]) -> None:
        """Watch more paths (takes effect when the current batch is handled)."""
        new = {Path(os.path.abspath(t)) for t in targets} - self.targets
        if new:
            self._existing |= {t for t in new if t.exists()}
            self._seen.update({t: _signature(t) for t in new})
            self.targets |= new
            self._rebuild = True

    _rebuild = False

    async def _run(self) -> None:
        """Watch; if the OS watcher cannot be created (e.g. the inotify instance limit), say so and
        fall back to polling instead of going silently deaf. ``force_polling`` (also the fallback)
        stats the exact paths itself: watchfiles' poller misses changes when a watched directory's
        ancestor is watched too, which is the usual shape here."""
        while not self._stop.is_set():
            try:
                await (self._poll() if self.force_polling else self._watch())
                return
            except Exception as exc:  # noqa: BLE001 - a watcher must never die quietly
                if self.force_polling:
                    self.on_error(f"file watching failed: {type(exc).__name__}: {exc}")
                    self.ready.set()
                    return
                self.on_error(f"file watching failed ({type(exc).__name__}: {exc}); polling instead")
                self.force_polling = True

    async def _poll(self) -> None:
        """Polling without the OS: stat each exact path (inode, mtime, size) every POLL_S seconds."""
        self.ready.set()
        while not self._stop.is_set():
            try:
                await asyncio.wait_for(self._stop.wait(), POLL_S)
            except asyncio.TimeoutError:
                pass
            now = {t: _signature(t) for t in self.targets}
            hit = sorted(t for t in now if now[t] != self._seen.get(t))
            self._seen = now
            if hit:
                self.on_change(hit)

    def _restat(self, targets) -> set[Path]:
        """The ``targets`` whose file (through any symlinks) is not the one last seen."""
        fresh = {t: _signature(t) for t in targets}
        changed = {t for t, sig in fresh.items() if sig != self._seen.get(t)}
        self._seen.update(fresh)
        return changed

    async def _watch(self) -> None:
        while not self._stop.is_set():
            try:
                await self._watch_once()
            except FileNotFoundError:   # a directory to watch vanished while the set was rebuilt
                await asyncio.sleep(STEP_MS / 1000)

    async def _watch_once(self) -> None:
        """One watch set, until it must be rebuilt (a directory on the way appeared, a symlink on a
        target's chain now points elsewhere, or targets were added)."""
        from contextlib import aclosing

        from watchfiles import awatch

        # a file that appeared or vanished while the watch set was rebuilt is not missed
        now = {t for t in self.targets if t.exists()}
        if now != self._existing:
            self.on_change(sorted(now ^ self._existing))
        self._existing = now
        anchors = {_anchor(t) for t in self.targets}
        links = {t: _link_dirs(t) for t in self.targets}
        linked = {t for t, dirs in links.items() if dirs}
        # a change to a directory on the way to a target means the anchor set must be rebuilt
        pending_dirs = {p for t in self.targets for p in t.parents if p not in anchors}
        self._rebuild = False
        watch = awatch(*sorted(anchors.union(*links.values())), recursive=False, debounce=DEBOUNCE_MS,
                       step=STEP_MS, stop_event=self._stop, watch_filter=None,
                       force_polling=self.force_polling, poll_delay_ms=50, rust_timeout=500,
                       yield_on_timeout=True, ignore_permission_denied=True)
        async with aclosing(watch):  # closes the OS watcher now, not at garbage collection
            # no await before the first __anext__, which creates the OS watcher: nothing is missed
            self.ready.set()
            async for changes in watch:  # also yields (empty) every rust_timeout
                paths = {Path(p) for _, p in changes}
                now = {t for t in self.targets if t.exists()}
                # an appearance or removal between the rebuild and the new OS watcher is caught
                # here, at the latest one rust_timeout later
                hit = (paths & self.targets) | (now ^ self._existing)
                self._existing = now
                # a target reached through a swapped symlink (a Kubernetes ConfigMap's ..data) changes
                # with no event on its own path: its stat says so. With no event, only the symlinked
                # targets are re-checked (a swap just before the OS watcher started had none).
                checked = self.targets if paths else linked
                hit |= self._restat(checked)
                if hit:
                    self.on_change(sorted(hit))
                relinked = any(_link_dirs(t) != links.get(t, set()) for t in checked)
                if paths & pending_dirs or self._rebuild or relinked or \
                        {_anchor(t) for t in self.targets} != anchors:
                    return  # rebuild the watch set
