"""``fleet status``: every live host's report against the head, and the members whose lease expired."""
from __future__ import annotations

import json

from .etcd import Etcd
from .keys import Keys
from .publish import read_head


async def fleet_status(etcd: Etcd, keys: Keys) -> dict:
    head = await read_head(etcd, keys)
    live = {}
    for kv in await etcd.get_prefix(keys.hosts):
        try:
            live[kv.key[len(keys.hosts):]] = json.loads(kv.value)
        except ValueError:
            live[kv.key[len(keys.hosts):]] = {"verdict": "unreadable", "revision": None}
    members = [kv.key[len(keys.members):] for kv in await etcd.get_prefix(keys.members)]
    hosts = []
    for host_id in sorted(live):
        report = live[host_id]
        wanted = head.wanted(host_id)
        current = report.get("running_revision") == wanted and report.get("verdict") == "applied"
        hosts.append({**report, "host_id": host_id, "wanted": wanted, "current": current})
    behind = [h["host_id"] for h in hosts if not h["current"]]
    expired = sorted(m for m in members if m not in live)
    rollout = None
    if head.canary or head.halted:
        rollout = {"revision": head.number, "stable": head.stable, "canary": list(head.canary),
                   "halted": head.halted}
    return {"prefix": keys.prefix, "latest": head.number or None, "stable": head.stable or None,
            "rollout": rollout, "hosts": hosts, "behind": behind, "expired": expired,
            "ok": head.number > 0 and not behind and rollout is None}
