"""Trial reloads: apply now, revert automatically unless confirmed in time (``netplan try``, a router's
"commit confirmed", an Erlang release that is installed but not yet made permanent).

``dshctl reload --trial S`` applies the files like any reload but does not record the new tree as
last-good; a timer reverts to the tree that ran before unless ``dshctl reload --confirm`` comes first.
While a trial is pending, ``<profile>/.dshctl/trial.json`` says so on disk: a host that starts and
finds it (the previous one died mid-trial) boots the last-good record, i.e. the confirmed tree, and
does not apply the untried files until they are saved again or reloaded (docs/host.md).
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dshctl.core import fsutil

from .outcome import APPLIED, CONFIRMED, NO_TRIAL, REJECTED, REVERT_FAILED, REVERTED, UNCHANGED, ReloadOutcome

if TYPE_CHECKING:  # pragma: no cover
    from .runner import Host

MARKER_NAME = "trial.json"
MAX_TRIAL_S = 24 * 3600.0


def _clock(at: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(at))


def _iso(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(at))


@dataclass
class PendingTrial:
    previous_rows: list
    previous_digest: str | None
    digest: str | None
    started_at: float
    deadline: float
    timer: asyncio.Task | None = None

    def to_json(self) -> dict:
        return {"started_at": _iso(self.started_at), "deadline": _iso(self.deadline),
                "remaining_s": round(max(0.0, self.deadline - time.time()), 1), "digest": self.digest,
                "previous_digest": self.previous_digest}


class Trials:
    """The host's one pending trial (or none). Every change runs under the reloader's lock."""

    def __init__(self, host: "Host"):
        self.host = host
        self.pending: PendingTrial | None = None
        self.marker: Path = host.last_good_path.with_name(MARKER_NAME)

    # ---- boot ------------------------------------------------------------------------------------
    def abandoned(self) -> dict | None:
        """The marker a host that died mid-trial left behind (removed here), or None."""
        try:
            text = self.marker.read_text(encoding="utf-8")
        except OSError:
            return None
        with contextlib.suppress(OSError):
            self.marker.unlink()
        try:
            doc = json.loads(text)
        except ValueError:
            doc = {}
        return doc if isinstance(doc, dict) else {}

    # ---- reload --trial ----------------------------------------------------------------------------
    async def start(self, seconds: float, trigger: str) -> ReloadOutcome:
        reloader = self.host.reloader
        if not 0 < seconds <= MAX_TRIAL_S:
            return self._refused(trigger, f"a trial lasts more than 0 and at most {MAX_TRIAL_S:g} seconds",
                                 "e.g. dshctl reload --trial 60")
        if self.pending is not None:
            return self._refused(trigger, f"a trial is already pending until {_clock(self.pending.deadline)}",
                                 "confirm it with `dshctl reload --confirm`, or wait for it to revert")
        previous_rows, previous_digest = self.host.rows, self.host.digest
        outcome = await reloader.reload(trigger, record=False,
                                        on_applied=lambda: self._begin(seconds, previous_rows, previous_digest))
        if outcome.verdict == APPLIED and self.pending is not None:
            outcome.trial = self.pending.to_json()
        elif outcome.verdict == UNCHANGED:
            outcome.note = "the files are what runs; no trial started"
        return outcome

    def _begin(self, seconds: float, previous_rows: list, previous_digest: str | None) -> None:
        now = time.time()
        self.pending = PendingTrial(previous_rows, previous_digest, self.host.digest, now, now + seconds)
        fsutil.atomic_write(self.marker, json.dumps(self.pending.to_json()) + "\n", mode=0o600)
        self.pending.timer = asyncio.get_running_loop().create_task(self._expire(self.pending, seconds))

    def _refused(self, trigger: str, message: str, hint: str) -> ReloadOutcome:
        return ReloadOutcome(REJECTED, trigger, errors=[{"message": message, "loc": None, "hint": hint}],
                             digest=self.host.digest)

    # ---- expiry and confirmation ----------------------------------------------------------------------
    async def _expire(self, trial: PendingTrial, seconds: float) -> None:
        await asyncio.sleep(seconds)
        reloader = self.host.reloader
        async with reloader.lock:
            if self.pending is not trial:
                return   # confirmed meanwhile
            await self._revert(trial, "trial", f"the trial started at {_clock(trial.started_at)} was not "
                                               f"confirmed in {seconds:g} s")

    async def revert(self, trigger: str = "control") -> ReloadOutcome:
        """The user's revert, before the deadline (the web app's button): as the timer would."""
        async with self.host.reloader.lock:
            trial = self.pending
            if trial is None:
                return self._no_trial(trigger)
            return await self._revert(trial, trigger, f"the trial started at {_clock(trial.started_at)} "
                                                      f"was reverted ({trigger})")

    async def _revert(self, trial: PendingTrial, trigger: str, note: str) -> ReloadOutcome:
        started = time.perf_counter()
        try:
            outcome = await self.host.apply_rows(trial.previous_rows, trigger, [], trial.previous_digest)
        except Exception as exc:  # noqa: BLE001 - reported as a failed revert
            outcome = ReloadOutcome(REVERT_FAILED, trigger, errors=[
                {"message": f"internal error: {type(exc).__name__}: {exc}", "loc": None, "hint": None}])
        outcome.verdict = REVERTED if outcome.verdict == APPLIED else REVERT_FAILED
        outcome.duration_ms = (time.perf_counter() - started) * 1000
        outcome.note = note
        self._end()
        self.host.record_reload(outcome)
        return outcome

    def _no_trial(self, trigger: str) -> ReloadOutcome:
        last = self.host.last_reload
        why = (f"; the last trial was reverted at {_clock(last.at)}"
               if last is not None and last.verdict in (REVERTED, REVERT_FAILED) else "")
        return ReloadOutcome(NO_TRIAL, trigger, digest=self.host.digest, errors=[
            {"message": "no trial is pending" + why, "loc": None,
             "hint": "start one with `dshctl reload --trial SECONDS`"}])

    async def confirm(self, trigger: str = "control") -> ReloadOutcome:
        async with self.host.reloader.lock:
            trial = self.pending
            if trial is None:
                return self._no_trial(trigger)
            self._end()
            await self.host.record_last_good()
            outcome = ReloadOutcome(CONFIRMED, trigger, digest=self.host.digest,
                                    note=f"the trial started at {_clock(trial.started_at)}")
            self.host.record_reload(outcome)
            return outcome

    def _end(self) -> None:
        trial, self.pending = self.pending, None
        if trial is not None and trial.timer is not None and trial.timer is not asyncio.current_task():
            trial.timer.cancel()
        with contextlib.suppress(OSError):
            self.marker.unlink()

    async def stop(self) -> None:
        """Shutdown: the timer goes; the marker stays, so the next boot runs the confirmed tree."""
        if self.pending is not None and self.pending.timer is not None:
            self.pending.timer.cancel()
            await asyncio.gather(self.pending.timer, return_exceptions=True)
