"""Config hot reload: watch both user layers, recompose, apply through the loader's transaction.

* Serialized: one reload at a time (a lock), whatever triggered it (watcher or control socket).
* Coalesced: a save during a reload only sets the dirty flag; exactly one more pass follows. No extra
  debounce timer (dsh-config.md §10).
* Failure of any stage (read, parse, validate, compose, apply) keeps the last good tree: the loader's
  update is transactional. The failure is logged with every failed row and file:line:col, and the
  parallel event ``hmr/config-update-failed(filename, error)`` is broadcast; its listeners' failures
  are only logged. Nothing escapes the watcher.
"""
from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import TYPE_CHECKING

from dshctl.errors import DshctlError

from .composer import RestartRequired
from .lastgood import rows_digest
from .outcome import APPLIED, CHANGES, REJECTED, ROLLBACK_FAILED, UNCHANGED, ReloadOutcome, error_json
from .watch import PathWatcher

if TYPE_CHECKING:  # pragma: no cover
    from .runner import Host

FAILED_EVENT = "hmr/config-update-failed"


class _BeforeApply(Exception):
    """An unexpected error while reading or composing: the loader was never called."""


def _internal(exc: BaseException, hint: str) -> dict:
    return {"message": f"internal error: {type(exc).__name__}: {exc}", "loc": None, "hint": hint}


def changed_rows(rows: list) -> str:
    """``loop-runner stopped, echo started``: the rows an apply changed, in words."""
    return ", ".join(f"{r['id']} {r['action']}" for r in rows if r.get("action") in CHANGES)


class ConfigReloader:
    pass_started: float | None = None   # time.time() of the pass now running

    def __init__(self, host: "Host", *, force_polling: bool | None = None):
        self.host = host
        self.lock = asyncio.Lock()
        self.dirty = False
        self.passes = 0               # reloads actually run (tests check the coalescing with it)
        self._changed: set[Path] = set()
        self._pump: asyncio.Task | None = None
        # (tree digest, when, what changed) of the watcher's last apply, for an explicit reload that finds
        # nothing left to do: it still says which rows the save started or stopped.
        self._watch_applied: tuple[str | None, float, str] | None = None
        self.watcher = PathWatcher(host.composer.user_files, self.poke, force_polling=force_polling,
                                   on_error=lambda m: host.log.event("reload/watch-error", m, level="error"))

    async def start(self) -> None:
        self.watcher.start()
        await self.watcher.ready.wait()
        if not self.host.skip_initial_scan:  # booted after an unconfirmed trial: wait for a save
            self.poke(self.host.composer.user_files)  # like dsh's initial scan: a no-op when nothing changed

    async def stop(self) -> None:
        """Close the watcher, then wait for the running reload (dsh's dispose order)."""
        await self.watcher.stop()
        async with self.lock:
            pass  # a reload a control request started is awaited too
        self.dirty = False
        if self._pump is not None:
            await asyncio.gather(self._pump, return_exceptions=True)

    def poke(self, paths) -> None:
        """A watched file changed: schedule a pass, or mark the running one dirty."""
        self._changed.update(paths)
        self.dirty = True
        if self._pump is None or self._pump.done():
            self._pump = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        while self.dirty:
            self.dirty = False
            files, self._changed = sorted(self._changed), set()
            try:
                await self.reload("watch", files)
            except Exception as exc:  # noqa: BLE001 - never escape the watcher
                self.host.log.event("reload/internal-error", f"{type(exc).__name__}: {exc}", level="error")

    async def reload(self, trigger: str, files: list | None = None, *, record: bool = True,
                     on_applied=None) -> ReloadOutcome:
        """One serialized pass: recompose the layers and apply them. ``record=False`` keeps the new
        tree out of the last-good record; ``on_applied()`` runs under the lock after an apply (trials)."""
        async with self.lock:
            self.passes += 1
            self.pass_started = time.time()
            files = list(files or self.host.composer.user_files)
            started = time.perf_counter()
            try:
                outcome = await self._pass(trigger, files, record)
                if outcome.verdict == APPLIED and on_applied is not None:
                    on_applied()
            except _BeforeApply as exc:  # a bug below us, before anything changed: refused
                outcome = ReloadOutcome(REJECTED, trigger, files, digest=self.host.digest,
                                        errors=[_internal(exc.__cause__, "the running tree was not touched")])
            except Exception as exc:  # noqa: BLE001 - a bug below us: say the tree may have changed
                outcome = ReloadOutcome(ROLLBACK_FAILED, trigger, files, digest=self.host.digest,
                                        errors=[_internal(exc, "check `dshctl status`; restart the host if "
                                                               "the tree is not what the files say")])
            finally:
                self.pass_started = None
            outcome.duration_ms = (time.perf_counter() - started) * 1000
            if trigger == "watch" and outcome.verdict == APPLIED:
                self._watch_applied = (outcome.digest, outcome.at, changed_rows(outcome.rows))
            self.host.record_reload(outcome)
            # said first, then (still serialized) the last-good file: a pass is over once it is on disk
            await self.host.settle_record()
            if not outcome.ok:
                await self._broadcast_failure(outcome)
            return outcome

    def _already_applied(self, digest: str, trigger: str) -> str | None:
        """Why an explicit reload finds nothing to do: usually the watcher got to the save first."""
        applied = self._watch_applied
        if trigger == "watch" or applied is None or applied[0] != digest:
            return None
        when = time.strftime("%H:%M:%S", time.localtime(applied[1]))
        changed = f": {applied[2]}" if applied[2] else ""
        return f"the file watcher applied these files at {when}{changed}"

    async def _pass(self, trigger: str, files: list, record: bool = True) -> ReloadOutcome:
        try:
            composed = self.host.composer.compose()
            warnings = [str(w) for w in composed.warnings]
            digest = composed.digest or rows_digest(composed.rows)
        except RestartRequired as err:
            return ReloadOutcome(REJECTED, trigger, files, errors=[error_json(err)],
                                 warnings=["restart required"])
        except DshctlError as err:
            return ReloadOutcome(REJECTED, trigger, files, errors=[error_json(err)])
        except Exception as exc:  # noqa: BLE001 - nothing was applied yet
            raise _BeforeApply from exc
        if digest == self.host.digest:
            return ReloadOutcome(UNCHANGED, trigger, files, warnings=warnings, digest=digest,
                                 note=self._already_applied(digest, trigger))
        outcome = await self.host.apply_rows(composed.rows, trigger, files, digest, record=record)
        outcome.warnings = warnings + outcome.warnings
        return outcome

    async def _broadcast_failure(self, outcome: ReloadOutcome) -> None:
        filename = str(outcome.files[0]) if outcome.files else ""
        error = DshctlError("; ".join(e["message"] for e in outcome.errors) or outcome.summary())
        try:
            await self.host.root.parallel(FAILED_EVENT, filename, error)
        except BaseException as exc:  # noqa: BLE001 - listener failures are only logged
            if isinstance(exc, asyncio.CancelledError):
                raise
            self.host.log.event("reload/listener-failed", f"{FAILED_EVENT} listener failed: {exc}",
                                level="warn")

