"""Propagation on a fleet: `fleet publish` → every host reports the revision applied (docs/fleet.md).

Starts a real etcd on loopback and HOSTS real `dshctl host run --fleet` processes (the test homes of
tests/host/helpers.py), then publishes ROUNDS revisions (alternating a row's config) through the
publish service and measures, for each, the time from the committed txn until every host's report
says `applied` for it (reports watched by polling etcd every 2 ms). Prints p50, p95 and max.

    .venv/bin/python benchmarks/bench_fleet.py [--hosts 5] [--rounds 40]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fleet.conftest import ROWS, EtcdServer  # noqa: E402
from tests.host.helpers import HostProcess, make_home, write  # noqa: E402


async def propagation(url: str, prefix: str, pub: Path, hosts: int, rounds: int) -> list[float]:
    from dshctl.fleet import publish as P
    from dshctl.fleet.etcd import Etcd
    from dshctl.fleet.keys import Keys

    keys, out = Keys(prefix), []
    async with Etcd(url) as etcd:
        for i in range(rounds):
            write(pub / "profiles" / "p" / "cordis.patch.yml", f"- id: c\n  config: {{tag: r{i}}}\n")
            records, digest, dump = P.build(pub, "p")
            head = await P.read_head(etcd, keys)
            number = await P.commit(etcd, keys, head, {"format": "dshctl-fleet-revision/1", "profile": "p",
                                                        "layers": records, "digest": digest, "dump": dump})
            start = time.perf_counter()
            while True:
                reports = [json.loads(kv.value) for kv in await etcd.get_prefix(keys.hosts)]
                if len(reports) == hosts and all(r["running_revision"] == number for r in reports):
                    break
                await asyncio.sleep(0.002)
            out.append(time.perf_counter() - start)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=40)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        server = EtcdServer(root / "etcd").start()
        procs = []
        try:
            pub = make_home(root / "pub", ROWS)
            prefix = "/bench"
            asyncio.run(propagation(server.url, prefix, pub, 0, 1))   # revision 1, so hosts can boot
            for i in range(args.hosts):
                procs.append(HostProcess(make_home(root / f"h{i}", ROWS), "p", "--fleet", server.url,
                                         "--host-id", f"h{i}", "--prefix", prefix).__enter__())
            times = sorted(asyncio.run(propagation(server.url, prefix, pub, args.hosts, args.rounds)))
        finally:
            for p in procs:
                p.stop()
            server.stop()
    q = statistics.quantiles(times, n=20)
    print(f"{args.hosts} hosts, {args.rounds} revisions: publish -> all applied "
          f"p50 {statistics.median(times) * 1000:.1f} ms, p95 {q[18] * 1000:.1f} ms, max {times[-1] * 1000:.1f} ms")


if __name__ == "__main__":
    main()
