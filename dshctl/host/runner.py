"""``dshctl host run``: boot the composed profile, serve the control socket, hot reload, shut down LIFO.

The :class:`Host` owns one runtime (``Context``), one loader, the config reloader, the module reloader
and the control server. Everything it decides is logged through :class:`HostLog`.
"""
from __future__ import annotations

import asyncio
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from dshctl.errors import DshctlError, Loc

from . import lastgood, state_dir
from .composer import HostComposer
from .failed_rows import annotate, fail_if_rows_failed
from .hostlog import HostLog
from .outcome import APPLIED, REJECTED, ROLLBACK_FAILED, ROLLED_BACK, ReloadOutcome, error_json


HISTORY = 20          # reload verdicts kept for the web app's Status page
STATUS_WAIT_S = 5.0   # how long `status` waits for a running reload pass before answering anyway


@dataclass
class HostOptions:
    home: Path
    profile: str
    patches: list = field(default_factory=list)
    resume: bool = False
    skip_unavailable: bool = False  # rows without a Python implementation are skipped, not failed
    run_for: float | None = None    # seconds, then a graceful shutdown (CI, demos)
    force_polling: bool | None = None
    module_reload: bool = True
    watch: bool = True              # False: reload only when asked (`dshctl reload`)
    socket_mode: int = 0o600
    apply_timeout: float = 30.0     # seconds a plugin's apply may take (RuntimeOptions)
    idle_timeout: float = 60.0      # seconds a control connection may stay silent (control.py)
    # The seam for hosts fed from elsewhere (dshctl/fleet/): a stand-in for HostComposer (boot(),
    # compose(), user_files, directory) whose compositions every reload applies transactionally, and
    # companions started after serve() and stopped before shutdown (``async start(host)``, ``async stop()``).
    composer: object | None = None
    companions: list = field(default_factory=list)


class Host:
    def __init__(self, options: HostOptions, log: HostLog):
        self.options = options
        self.log = log
        self.composer = options.composer or HostComposer(options.home, options.profile, options.patches)
        self.profile_dir = self.composer.directory
        self.last_good_path = state_dir.last_good_path(options.home, options.profile)
        self.socket_path = state_dir.socket_path(options.home, options.profile)
        self.root = None
        self.loader = None
        self.rows: list = []
        self.digest: str | None = None
        self.source = "layers"
        self.started_at = time.time()
        self.last_reload: ReloadOutcome | None = None
        self.reload_history: list[ReloadOutcome] = []   # newest last, at most HISTORY (the web app's Status)
        self.boot_report: dict | None = None
        from .recorder import Recorder
        self.recorder = Recorder(self.last_good_path, options.profile, log)   # last-good.json, in order
        self.reloader = None
        self.modules = None
        self.control = None
        self._stopping = asyncio.Event()
        self._resumed_digest: str | None = None   # a tree booted from last-good runs under its digest
        self._boot_error: DshctlError | None = None  # why the loader refused the tree at boot
        self._claim: int | None = None   # fd of the profile's host lock, held until shutdown
        from .trial import Trials
        self.trials = Trials(self)
        self.skip_initial_scan = False   # booted from an abandoned trial: do not apply the untried files

    # ---- boot ----------------------------------------------------------------------------------
    async def boot(self) -> None:
        from dshctl.runtime import Context, RuntimeOptions
        timeout = self.options.apply_timeout
        self.root = Context(RuntimeOptions(apply_timeout=timeout, dispose_timeout=timeout))
        self.root.provide("host", self)
        self._watch_lifecycle()
        rows = self._initial_rows()
        self._claim = state_dir.claim(self.options.home, self.options.profile)  # the profile exists now
        report = await self._start(rows)
        if report is not None and report.ok and self.source == "layers":
            await self._commit(rows)
            return
        fallback = self._load_last_good() if self.options.resume and self.source == "layers" else None
        if fallback is not None and fallback.digest != lastgood.rows_digest(rows):
            if self.loader is not None:
                await self.loader.stop()
            self.log.event("host/resume", f"the current layers failed to start; booting from the last-good "
                           f"record saved at {fallback.saved_at} ({fallback.path})", level="warn")
            self.source = "last-good"
            report = await self._start(fallback.rows)
            rows = fallback.rows
            self._resumed_digest = fallback.digest
        if report is None:
            raise self._boot_failure()
        self.rows, self.digest = rows, self._resumed_digest or lastgood.rows_digest(rows)
        if report.ok and self.source == "layers":
            await self._commit(rows)

    def _boot_failure(self) -> DshctlError:
        """The loader's own error (every failed row with file:line:col), said to stop the host."""
        err = self._boot_error
        if err is None:
            return DshctlError("the profile failed to start", loc=Loc(str(self.profile_dir)),
                               hint="fix the rows named above, or run with --resume to boot the last good tree")
        hint = err.hint or "fix the rows named above"
        if "--skip-unavailable" not in hint:
            hint += "; or run with --resume to boot the last good tree"
        return DshctlError(f"the profile failed to start: {err.message}", loc=err.loc, hint=hint)

    def _initial_rows(self) -> list:
        abandoned = self.trials.abandoned()
        if abandoned is not None:
            try:
                rows = self.composer.boot().rows   # bundle layers are read at boot, whatever runs
            except DshctlError:
                rows = None
            record = self._load_last_good()
            if record is not None:
                self.log.event("host/trial-abandoned", f"the previous host stopped during a trial (started "
                               f"{abandoned.get('started_at', '?')}); booting the confirmed tree, the last-good "
                               f"record saved at {record.saved_at}; save the files or run `dshctl reload` to "
                               "apply them", level="warn")
                self.source, self._resumed_digest = "last-good", record.digest
                self.skip_initial_scan = True
                return record.rows
            if rows is not None:
                return rows
        try:
            return self.composer.boot().rows
        except DshctlError as err:
            record = self._load_last_good() if self.options.resume else None
            if record is None:
                raise
            self.log.event("host/resume", f"the current layers do not compose ({err}); booting from the "
                           f"last-good record saved at {record.saved_at} ({record.path})", level="warn")
            self.source = "last-good"
            self._resumed_digest = record.digest
            return record.rows

    def _load_last_good(self):
        record = lastgood.load(self.last_good_path)
        if record is None:
            self.log.event("host/resume", f"no last-good record at {self.last_good_path}", level="warn")
        return record

    async def _start(self, rows: list):
        """Start a fresh loader on ``rows``; the report, or None when the loader refused the tree."""
        from dshctl.loader import Loader, LoaderError
        from dshctl.loader.resolve import PluginResolver
        resolver = PluginResolver(home=self.options.home, profile_dir=self.profile_dir)
        self.loader = Loader(self.root, home=self.options.home,
                             skip_unavailable=self.options.skip_unavailable, resolver=resolver)
        try:
            report = await self.loader.start(rows, base_dir=self.profile_dir)
        except LoaderError as err:
            self._boot_error = err
            self.log.event("host/boot-failed", str(err), level="error", hint=err.hint)
            self.loader = None
            return None
        self.boot_report = report.to_json()
        annotate(self.boot_report["rows"], rows)
        self._log_rows(self.boot_report["rows"], "boot")
        failed = [r for r in report.rows if r.action == "failed"]
        if failed:
            self.log.event("host/boot-audit", f"{len(failed)} row(s) did not activate", level="error")
        return report

    async def _commit(self, rows: list, digest: str | None = None, *, record: bool = True,
                      wait: bool = True) -> None:
        """``rows`` run now: remember them and record them as last-good (serialized off the loop),
        unless a trial is pending: the record stays the confirmed tree (trial.py). ``wait=False`` (a
        watcher's apply): the verdict is logged before the file's fsync; the pass (config_reload.py)
        still waits for it under its lock, and ``status`` and shutdown wait for it too (issue 30)."""
        self.rows = rows
        self.digest = digest or lastgood.rows_digest(rows)
        if record and self.trials.pending is None:
            self.recorder.queue(rows, self.digest)
            if wait:
                await self.settle_record()

    async def settle_record(self) -> None:
        """Wait until every last-good record queued so far is on disk (recorder.py)."""
        await self.recorder.settle()

    async def record_last_good(self) -> None:
        self.recorder.queue(self.rows, self.digest)
        await self.recorder.settle()

    def _watch_lifecycle(self) -> None:
        from dshctl.runtime import State

        def on_status(fiber, old_state):
            if fiber.state != old_state and fiber.state in (State.ACTIVE, State.FAILED, State.DISPOSED):
                self.log.event("fiber/" + fiber.state.name.lower(), fiber.name, level="debug",
                               uid=fiber.uid)
        self.root.on("internal/status", on_status, global_=True)

    def _log_rows(self, rows: list, what: str) -> None:
        for row in rows:
            action = row.get("action")
            if action in ("unchanged", None):
                continue
            level = "error" if action == "failed" else "warn" if action in ("skipped", "rolled-back") else "info"
            where = f" at {row['loc']}" if row.get("loc") and action == "failed" else ""
            if row.get("config_loc"):
                where += f" (config set at {row['config_loc']})"
            reason = f": {row['reason']}" if row.get("reason") else ""
            self.log.event(f"row/{action}", f"{row['id']} ({row['name']}){where}{reason}", level=level,
                           during=what)

    # ---- reload --------------------------------------------------------------------------------
    async def apply_rows(self, rows: list, trigger: str, files: list, digest: str | None = None, *,
                         record: bool = True) -> ReloadOutcome:
        """Apply ``rows`` through the loader's transactional update and classify the result."""
        from dshctl.loader import LoaderError, LoaderUpdateError
        if self.loader is None:
            report = await self._start(rows)
            if report is None or not report.ok:
                return ReloadOutcome(REJECTED, trigger, files, rows=(report.to_json()["rows"] if report else []),
                                     errors=[{"message": "the tree failed to start", "loc": None, "hint": None}])
            await self._commit(rows, digest, record=record)
            return ReloadOutcome(APPLIED, trigger, files, rows=report.to_json()["rows"], digest=self.digest)
        try:
            report = await self.loader.update(rows)
        except LoaderUpdateError as err:
            report_rows = annotate(err.report.to_json()["rows"] if err.report is not None else [], rows)
            # the transaction had begun changing rows (checks that come before any change raise a plain
            # LoaderError, below): applied, then rolled back
            verdict = ROLLBACK_FAILED if err.rollback_failed else ROLLED_BACK
            return ReloadOutcome(verdict, trigger, files, rows=report_rows, errors=[error_json(err)],
                                 digest=self.digest)
        except LoaderError as err:
            return ReloadOutcome(REJECTED, trigger, files, errors=[error_json(err)], digest=self.digest)
        await self._commit(rows, digest, record=record, wait=trigger != "watch")
        self.source = "layers"
        return ReloadOutcome(APPLIED, trigger, files, rows=report.to_json()["rows"], digest=self.digest)

    def record_reload(self, outcome: ReloadOutcome) -> None:
        self.last_reload = outcome
        if not (outcome.verdict == "unchanged" and outcome.trigger == "watch"):
            self.reload_history = self.reload_history[-(HISTORY - 1):] + [outcome]
        if outcome.verdict == APPLIED and self.modules is not None:
            self.modules.refresh()  # rows may have imported new plugin modules
        if outcome.verdict == "unchanged" and outcome.trigger == "watch":
            return  # the watcher's initial scan and no-op saves are not news
        level = "info" if outcome.ok else "error"
        files = ", ".join(str(f) for f in outcome.files)
        if not outcome.ok:
            self.log.event("reload/failed", f"config reload at {files} failed", level="error")
            for err in outcome.errors:
                where = f"{err['loc']}: " if err.get("loc") else ""
                self.log.event("reload/error", where + err["message"], level="error", hint=err.get("hint"))
        self._log_rows(outcome.rows, "reload")
        self.log.event(f"reload/{outcome.verdict}", outcome.summary(), level=level,
                       duration_ms=round(outcome.duration_ms, 1))

    def all_entries(self) -> list:
        """Every loader entry, including the rows of include subtrees."""
        out, todo = [], list(self.loader.entries()) if self.loader else []
        while todo:
            entry = todo.pop(0)
            out.append(entry)
            if entry.subtree is not None:
                todo.extend(entry.subtree.order())
        return out

    def loader_of(self, entry):
        return entry.tree.loader

    # ---- status --------------------------------------------------------------------------------
    def status(self) -> dict:
        """The status document now (a pass in flight shows its half-changed rows: see below)."""
        from .status import host_status
        return host_status(self)

    async def settled_status(self, wait_s: float = STATUS_WAIT_S) -> dict:
        """The status document between reload passes. Mid-pass, the rows hold the new config that the
        pass may still roll back, beside the previous verdict: that mix made `status` contradict
        `reload` (issue 14). So wait for the running pass (bounded: a plugin may hang in apply)."""
        lock = self.reloader.lock if self.reloader is not None else None
        if lock is None or not lock.locked():
            await self.settle_record()
            return self.status()
        try:
            await asyncio.wait_for(lock.acquire(), wait_s)
        except asyncio.TimeoutError:
            return self.status()   # says "reloading" and, in drift, since when
        try:
            await self.settle_record()
            return self.status()
        finally:
            lock.release()

    # ---- run -----------------------------------------------------------------------------------
    async def serve(self) -> None:
        from .config_reload import ConfigReloader
        from .control import ControlServer
        from .control_handler import handle
        self.reloader = ConfigReloader(self, force_polling=self.options.force_polling)
        if self.options.watch:
            await self.reloader.start()
        self.control = ControlServer(self.socket_path, lambda req: handle(self, req),
                                     mode=self.options.socket_mode, idle_timeout=self.options.idle_timeout,
                                     on_error=lambda m: self.log.event("control/error", m, level="error"))
        await self.control.start()
        if self.options.module_reload and self.options.watch:
            from .module_reload import ModuleReloader
            self.modules = ModuleReloader(self)
            await self.modules.start()
        self.log.event("host/ready", f"profile {self.options.profile!r} running ({self.source}); "
                       f"control socket {self.socket_path}", pid=os.getpid(), socket=str(self.socket_path))
        http = self.root.get("http")
        if http is not None:
            page = next((p for (m, p), _ in http.routes.items() if m == "GET" and p.endswith(".json")), None)
            where = f"; status page {http.url}{page[1:-5]} (JSON: {http.url}{page[1:]})" if page else ""
            if ("GET", "/api/status") in http.routes:
                where = f"; open {getattr(http, 'app_url', http.url)} in a browser (the app){where}"
            self.log.event("host/http", f"serving {http.url}{where}", url=http.url)

    def request_stop(self, why: str) -> None:
        if not self._stopping.is_set():
            self._stopping.set()  # first: a log that cannot be written must not keep the host up
            self.log.event("host/stopping", why)

    async def wait(self) -> None:
        if self.options.run_for is not None:
            try:
                await asyncio.wait_for(self._stopping.wait(), self.options.run_for)
            except asyncio.TimeoutError:
                self.request_stop(f"--for {self.options.run_for:g}s elapsed")
        else:
            await self._stopping.wait()

    async def shutdown(self) -> None:
        """Stop the watchers and the socket, then dispose every row newest first."""
        await self.trials.stop()
        for part in (self.modules, self.reloader):
            if part is not None:
                await part.stop()
        if self.control is not None:
            await self.control.stop()
        await self.settle_record()   # a watcher's apply may still be writing its record
        if self.loader is not None:
            await self.loader.stop()
        if self._claim is not None:
            os.close(self._claim)   # releases the host lock
            self._claim = None
        self.log.event("host/stopped", "every row disposed" if self.loader else "nothing was running")


async def run_host(options: HostOptions, log: HostLog) -> int:
    host = Host(options, log)
    handler = log.attach_logging()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, host.request_stop, f"received {signal.Signals(sig).name}")
    try:
        log.event("host/booting", f"profile {options.profile!r} in {options.home}")
        try:
            await host.boot()
            await host.serve()
            for companion in options.companions:
                await companion.start(host)
            from dshctl.core.gcpause import freeze_settled_heap
            freeze_settled_heap()    # full collections no longer walk the boot's objects (tokens wait less)
            await host.wait()
        finally:
            for companion in reversed(options.companions):
                await companion.stop()
            await host.shutdown()
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        log.detach_logging(handler)
    if options.run_for is not None:
        fail_if_rows_failed(host.boot_report)
    return 0
