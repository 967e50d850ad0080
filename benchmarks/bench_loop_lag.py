"""What holds up the host's event loop while a session streams (issue 26: a token must reach the page
within 50 ms of the host logging it).

    .venv/bin/python benchmarks/bench_loop_lag.py [--windows 6] [--seconds 10]

Runs the benchmark home of bench_webui.py in this process (the loop-agent bundle under /forever on
the scripted model, a streamed reply every ~50 ms, a Status client and a chat client on real HTTP)
and a 2 ms ticker on the host's loop. For each gap between two ticks it records the wall time and
the CPU time of the loop's thread: a long gap with little CPU is the OS not running the process (or
another thread holding the GIL), a long gap with CPU is the loop computing. Each collection of the
garbage collector is timed too. Windows alternate the boot's heap frozen (``gc.freeze``, as ``host
run`` does since this round: dshctl/host/gc_policy.py) and not frozen (``gc.unfreeze``), so both face
the same machine load and the same growing session.
"""
from __future__ import annotations

import argparse
import asyncio
import gc
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_webui import scripted_loop_home  # noqa: E402

from tests.host.helpers import InProcess, bundle_dir, write  # noqa: E402

collections: list[tuple[int, float]] = []
_started = [0.0]


def _timed(phase, info):
    if phase == "start":
        _started[0] = time.perf_counter()
    else:
        collections.append((info["generation"], (time.perf_counter() - _started[0]) * 1000))


async def ticker(gaps: list):
    last_wall, last_cpu = time.monotonic(), time.thread_time()
    while True:
        await asyncio.sleep(0.002)
        wall, cpu = time.monotonic(), time.thread_time()
        gaps.append(((wall - last_wall) * 1000, (cpu - last_cpu) * 1000))
        last_wall, last_cpu = wall, cpu


async def follow(url: str, path: str):
    import httpx
    async with httpx.AsyncClient(base_url=url, timeout=None) as client:
        async with client.stream("GET", path) as feed:
            async for _ in feed.aiter_lines():
                pass


def summary(name: str, gaps: list, gcs: list) -> str:
    walls = sorted(w for w, _ in gaps)
    computing = max((c for _, c in gaps), default=0)
    full = [ms for gen, ms in gcs if gen == 2]
    return (f"{name}: {len(gaps)} ticks, gaps p99 {walls[int(len(walls) * 0.99)]:.0f} ms, worst {walls[-1]:.0f} ms, "
            f"{sum(1 for w in walls if w > 50)} over 50 ms; longest the loop computed {computing:.0f} ms; "
            f"full collections {len(full)}, worst {max(full, default=0):.0f} ms")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--windows", type=int, default=6)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-lag-"))
    home = scripted_loop_home(tmp, 20000)
    patch = bundle_dir(home) / "cordis.patch.yml"
    write(patch, patch.read_text() + '    - {"id": "status-page", "name": "@dshctl/status-page"}\n')
    gc.callbacks.append(_timed)
    async with InProcess(home) as host:
        import httpx
        server = host.root.get("http")
        url = server.url.rstrip("/")
        async with httpx.AsyncClient(base_url=url, headers={"X-Dshctl-Token": server.token}) as http:
            session = (await http.post("/api/chat/send", json={"session": None, "text": "/forever"})).json()["session"]
        streams = [asyncio.ensure_future(follow(url, p)) for p in
                   ("/api/status/events", f"/api/chat/events?session={session}")]
        results = {"frozen": ([], []), "not frozen": ([], [])}
        for window in range(args.windows):
            name = "frozen" if window % 2 else "not frozen"
            gc.unfreeze()
            if name == "frozen":
                gc.collect()
                gc.freeze()
            gaps: list = []
            collections.clear()
            task = asyncio.ensure_future(ticker(gaps))
            await asyncio.sleep(args.seconds)
            task.cancel()
            results[name][0].extend(gaps)
            results[name][1].extend(collections)
            print(summary(f"  window {window + 1} ({name})", gaps, collections), flush=True)
        events = len(host.root.get("agents").live[session].session.events)
        for task in streams:
            task.cancel()
        gc.unfreeze()
    for name, (gaps, gcs) in results.items():
        print(summary(name, gaps, gcs))
    print(f"session grew to {events} events; load average {' '.join(f'{x:.1f}' for x in __import__('os').getloadavg())}")


if __name__ == "__main__":
    asyncio.run(main())
