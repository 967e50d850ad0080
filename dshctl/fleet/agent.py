"""``dshctl host run --fleet URL --host-id ID``: follow the published head, apply each revision
through the host's transactional reload, report under ``<prefix>/hosts/<ID>`` with a lease.

* Boot: the latest revision; when etcd is unreachable, the revision this host last applied (saved
  in its state directory), and the host's own ``--resume`` last-good tree after that.
* Follow: read ``head``, then watch it from the next etcd revision. Every head write seen while
  connected is applied in order; after an outage the host re-reads ``head`` and applies the latest
  once (a revision already tried is never applied twice; one superseded while away is not needed).
* Report: after every attempt, and again whenever the lease had to be granted afresh (etcd lost it
  while the host was away). The lease is kept alive every TTL/3; a host killed -9 stops that and its
  key disappears after the TTL. A graceful stop revokes the lease and removes its member key.
"""
from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path

from dshctl.core.fsutil import atomic_write
from dshctl.errors import DshctlError
from dshctl.host import state_dir

from . import publish as P
from . import revision as R
from .etcd import Etcd, EtcdError, EtcdUnavailable
from .keys import Keys
from .report import LAST_GOOD, fleet_verdict, report_doc

CACHE_NAME = "fleet-revision.json"
RETRY_MIN_S, RETRY_MAX_S = 0.1, 1.0


@dataclass
class FleetOptions:
    url: str
    host_id: str
    prefix: str = "/dshctl"
    lease_ttl: int = 10


class FleetAgent:
    def __init__(self, options: FleetOptions, composer, log, home: Path, profile: str):
        self.options = options
        self.keys = Keys(options.prefix)
        self.composer = composer
        self.log = log
        self.profile = profile
        self.cache_path = state_dir.state_dir(home, profile) / CACHE_NAME
        self.etcd = Etcd(options.url)
        self.host = None
        self.attempted: int | None = None   # the revision last tried (applied or not)
        self.running: int | None = None     # the revision whose composition runs
        self.last_report: dict | None = None
        self.lease: int | None = None
        self.offline = False
        self._tasks: list[asyncio.Task] = []
        self._report_lock = asyncio.Lock()

    # ---- before the host boots ----------------------------------------------------------------
    async def prepare(self) -> None:
        """Choose the revision the host boots: etcd's latest, else the one saved here."""
        await self.etcd.__aenter__()
        try:
            head = await P.read_head(self.etcd, self.keys)
            while head.wanted(self.options.host_id) == 0:
                if self.attempted is None:
                    self.attempted = 0
                    self.log.event("fleet/waiting", f"no revision published under {self.keys.prefix} yet; "
                                   "waiting for `dshctl fleet publish`")
                await asyncio.sleep(0.2)
                head = await P.read_head(self.etcd, self.keys)
            wanted = head.wanted(self.options.host_id)
            self.composer.revision = await P.load_revision(self.etcd, self.keys, wanted)
            self.log.event("fleet/connected", f"etcd {self.options.url}: booting revision {wanted}",
                           revision=wanted)
        except EtcdUnavailable as err:
            self.offline = True
            self.composer.revision = self._load_cache()
            saved = self.composer.revision["revision"] if self.composer.revision else None
            self.log.event("fleet/offline", f"{err.message}; booting "
                           + (f"revision {saved}, the last this host applied" if saved else
                              "the last-good tree (no revision saved on this host)"), level="warn")
        self.attempted = self.composer.revision["revision"] if self.composer.revision else None

    def _load_cache(self) -> dict | None:
        try:
            return R.check_document(json.loads(self.cache_path.read_text()), str(self.cache_path))
        except (OSError, ValueError, DshctlError):
            return None

    def _save_cache(self, doc: dict) -> None:
        try:
            state_dir.ensure(self.cache_path.parent)
            atomic_write(self.cache_path, json.dumps(doc, sort_keys=True))
        except OSError as exc:
            self.log.event("fleet/cache-failed", f"could not save revision {doc['revision']} at "
                           f"{self.cache_path}: {exc}", level="warn")

    # ---- companion of the running host ---------------------------------------------------------
    async def start(self, host) -> None:
        self.host = host
        booted = self.composer.revision
        failed = [r for r in (host.boot_report or {}).get("rows", []) if r.get("action") == "failed"]
        if host.source == "last-good" or booted is None:
            verdict, self.running = LAST_GOOD, None
        else:
            verdict = "failed" if failed else "applied"
            self.running = booted["revision"]
            if not failed:
                self._save_cache(booted)
        self.last_report = report_doc(self.options.host_id, self.profile, revision=self.attempted,
                                      running=self.running, verdict=verdict,
                                      rows=(host.boot_report or {}).get("rows", []),
                                      source="cache" if self.offline else "etcd", digest=host.digest)
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._follow()), loop.create_task(self._keepalive())]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        if self.etcd._client is None:
            return
        try:   # a graceful leave: the report and the membership go now, not after the TTL
            if self.lease:
                await self.etcd.revoke(self.lease)
            await self.etcd.delete(self.keys.member(self.options.host_id))
        except DshctlError:
            pass
        await self.etcd.close()

    # ---- following the head --------------------------------------------------------------------
    async def _follow(self) -> None:
        delay = RETRY_MIN_S
        while True:
            try:
                await self._publish_report()
                head = await P.read_head(self.etcd, self.keys)
                self._online()
                delay = RETRY_MIN_S
                await self._apply_head(head)
                async for kv in self.etcd.watch(self.keys.head, head.mod_revision + 1):
                    await self._apply_head(P.Head.parse(kv.value, kv.mod_revision))
            except EtcdUnavailable as err:
                if not self.offline:
                    self.offline = True
                    self.log.event("fleet/offline", f"{err.message}; serving the running tree", level="warn")
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_MAX_S)
            except DshctlError as err:   # a malformed revision: said, skipped, the tree kept
                self.log.event("fleet/error", str(err), level="error", hint=err.hint)
                await asyncio.sleep(RETRY_MAX_S)
            except Exception as exc:  # noqa: BLE001 - a bug here must not leave the host deaf to the fleet
                self.log.event("fleet/internal-error", f"{type(exc).__name__}: {exc}", level="error")
                await asyncio.sleep(RETRY_MAX_S)

    def _online(self) -> None:
        if self.offline:
            self.offline = False
            self.log.event("fleet/online", f"etcd {self.options.url} reachable again")

    async def _apply_head(self, head) -> None:
        """The revision the head wants for this host, unless it is the one tried last."""
        wanted = head.wanted(self.options.host_id)
        if wanted and wanted != self.attempted:
            await self.apply(wanted)

    async def apply(self, number: int) -> None:
        self.attempted = number
        try:
            doc = await P.load_revision(self.etcd, self.keys, number)
        except EtcdUnavailable:
            self.attempted = None   # not tried: the next head read tries again
            raise
        except DshctlError as err:   # not a revision: refused like a layer that does not parse
            self.log.event("fleet/error", f"revision {number}: {err}", level="error", hint=err.hint)
            self.last_report = report_doc(self.options.host_id, self.profile, revision=number,
                                          running=self.running, verdict="rejected",
                                          errors=[{"message": err.message, "loc": str(err.loc) if err.loc else None,
                                                   "hint": err.hint}], digest=self.host.digest)
            await self._publish_report()
            return
        self.composer.revision = doc
        self.log.event("fleet/revision", f"applying revision {number}", revision=number)
        outcome = await self.host.reloader.reload("fleet", [self.keys.revision(number)])
        verdict = fleet_verdict(outcome.verdict)
        if verdict == "applied":
            self.running = number
            self._save_cache(doc)
        self.last_report = report_doc(self.options.host_id, self.profile, revision=number, running=self.running,
                                      verdict=verdict, rows=outcome.rows, errors=outcome.errors,
                                      note=outcome.note or (outcome.verdict if outcome.verdict != verdict else None),
                                      digest=self.host.digest)
        await self._publish_report()

    # ---- the report and its lease --------------------------------------------------------------
    async def _publish_report(self) -> None:
        async with self._report_lock:
            if self.last_report is None:
                return
            for _ in range(2):
                if self.lease is None:
                    self.lease = await self.etcd.grant(self.options.lease_ttl)
                    await self.etcd.put(self.keys.member(self.options.host_id),
                                        json.dumps({"host_id": self.options.host_id, "joined_at": R.now_iso()}))
                try:
                    await self.etcd.put(self.keys.host(self.options.host_id), json.dumps(self.last_report),
                                        lease=self.lease)
                    return
                except EtcdError as err:
                    if err.code != EtcdError.NOT_FOUND:
                        raise
                    self.lease = None   # it expired while etcd could not hear us: grant a new one

    async def _keepalive(self) -> None:
        while True:
            await asyncio.sleep(max(self.options.lease_ttl / 3, 0.2))
            try:
                if self.lease is not None and not await self.etcd.keepalive(self.lease):
                    self.lease = None   # expired while etcd could not hear us: grant and report again
                    await self._publish_report()
            except EtcdUnavailable:
                continue
            except DshctlError:   # etcd refused the keep-alive: the lease is gone
                self.lease = None
                try:
                    await self._publish_report()
                except DshctlError:
                    continue


async def run_fleet_host(options, fleet: FleetOptions, log) -> int:
    """The host of ``options`` fed from the fleet (host/runner.py's run_host with the fleet seam)."""
    from dshctl.host.runner import run_host

    from .composer import FleetComposer
    from .keys import check_host_id

    check_host_id(fleet.host_id)
    composer = FleetComposer(options.home, options.profile, options.patches)
    agent = FleetAgent(fleet, composer, log, options.home, options.profile)
    try:
        await agent.prepare()
    except BaseException:
        await agent.etcd.close()
        raise
    options.composer = composer
    options.resume = True            # etcd away and nothing saved: the host's own last-good tree
    options.watch = options.watch and bool(composer.user_files)
    options.companions = [*options.companions, agent]
    return await run_host(options, log)
