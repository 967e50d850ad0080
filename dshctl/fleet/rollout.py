"""``fleet publish --canary N``: N hosts get the revision first, the rest only after all N applied it.

The canaries are the first N live hosts by id. The revision and a head naming them are written in
one txn (publish.py); the publisher then watches their reports until ``--canary-wait`` seconds. All
applied: the head becomes the plain revision, so every host applies it. A rejection (or silence past
the deadline) halts the rollout: the head keeps every host, canaries included, on the stable
revision and records which host refused it and why; status shows it until the next publish.
"""
from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Sequence

from dshctl.errors import DshctlError

from . import publish as P
from . import revision as R
from .etcd import Etcd, compare_mod, put_op
from .keys import Keys

POLL_S = 0.05


async def publish_canary(etcd: Etcd, keys: Keys, home: Path, profile: str, patches: Sequence[str],
                         count: int, wait_s: float, *, built: tuple | None = None) -> dict:
    records, digest, dump = built or P.build(home, profile, patches)
    head = await P.read_head(etcd, keys)
    live = sorted(kv.key[len(keys.hosts):] for kv in await etcd.get_prefix(keys.hosts))
    if len(live) < count:
        raise DshctlError(f"--canary {count} needs {count} live host(s); {len(live)} report under {keys.prefix}",
                          hint="start more hosts, or lower --canary")
    canaries = live[:count]
    doc = R.document(head.number + 1, profile, records, digest, dump)
    number = await P.commit(etcd, keys, head, doc, canary=canaries)
    doc["revision"] = number
    trouble = await _await_canaries(etcd, keys, number, canaries, wait_s)
    current = await P.read_head(etcd, keys)
    if current.number != number:
        raise P.PublishLost(f"revision {current.number} was published during the canary of revision {number}",
                            hint="check `dshctl fleet status`")
    if trouble is None:
        await _set_head(etcd, keys, current, P.Head(number, 0, number))
        return {**doc, "canary": canaries}
    halted = {"revision": number, **trouble}
    await _set_head(etcd, keys, current, P.Head(number, 0, current.stable, (), halted))
    raise DshctlError(f"rollout of revision {number} stopped at the canaries: {trouble['why']}; every host "
                      f"stays on revision {current.stable}",
                      hint="fix the revision and publish again (`dshctl fleet status` shows the rows)")


async def _await_canaries(etcd: Etcd, keys: Keys, number: int, canaries: list, wait_s: float) -> dict | None:
    """None when every canary applied ``number`` in time; else what went wrong, for the head and the user."""
    deadline = time.monotonic() + wait_s
    pending = set(canaries)
    while True:
        for host_id in sorted(pending):
            kv = await etcd.get(keys.host(host_id))
            report = json.loads(kv.value) if kv is not None else None
            if report is None:
                return {"host": host_id, "why": f"canary {host_id} went away (its lease expired)"}
            if report.get("revision") != number:
                continue
            if report.get("verdict") == "applied":
                pending.discard(host_id)
                continue
            return {"host": host_id, "verdict": report.get("verdict"), "failed_rows": report.get("failed_rows"),
                    "errors": report.get("errors"), "why": f"canary {host_id} {report.get('verdict')} it"
                    + _first_problem(report)}
        if not pending:
            return None
        if time.monotonic() >= deadline:
            return {"host": sorted(pending)[0], "why": f"canary {', '.join(sorted(pending))} did not report "
                    f"revision {number} within {wait_s:g}s"}
        await asyncio.sleep(POLL_S)


def _first_problem(report: dict) -> str:
    for row in report.get("failed_rows") or []:
        return f" ({row.get('loc')}: row {row.get('id')}: {row.get('reason')})"
    for err in report.get("errors") or []:
        return f" ({err.get('loc') + ': ' if err.get('loc') else ''}{err.get('message')})"
    return ""


async def _set_head(etcd: Etcd, keys: Keys, current: P.Head, new: P.Head) -> None:
    ok, _ = await etcd.txn([compare_mod(keys.head, current.mod_revision)], [put_op(keys.head, new.encode())])
    if not ok:
        raise P.PublishLost("another publish changed the head while the canaries ran",
                            hint="check `dshctl fleet status`")
