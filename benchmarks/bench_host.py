"""Host reload latency: from saving a patch file to the new tree running, vs a full host restart.

    .venv/bin/python benchmarks/bench_host.py [--sizes 50,500,2000] [--edits 25]

For each profile size N (rows of a trivial Python plugin), boots a real host in process (real loader,
runtime and watchfiles), then saves the profile's user layer N times, each time changing one row's
config, and measures wall time from just before the save until that row's fiber is ACTIVE with the new
config (polled every 0.5 ms). Then measures a full restart of the same profile (graceful shutdown and a
fresh boot until ready). Prints medians and the ratio.
"""
from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dshctl.host.hostlog import HostLog  # noqa: E402
from dshctl.host.runner import Host, HostOptions  # noqa: E402
from dshctl.runtime import State  # noqa: E402

PLUGIN = "name = 'noop'\nschema = {'type': 'object', 'default': {}}\n\ndef apply(ctx, config):\n    pass\n"


def make_home(root: Path, rows: int) -> Path:
    home = root / "home"
    pdir = home / "profiles" / "bench"
    bundle = pdir / "node_modules" / "@bench" / "rows"
    (bundle / "plugins").mkdir(parents=True)
    (pdir / "package.json").write_text(json.dumps({"dsh": {"profile": {"bundles": ["@bench/rows"]}}}))
    (bundle / "package.json").write_text(json.dumps({"name": "@bench/rows", "files": ["cordis.patch.yml"],
                                                     "dsh": {"bundle": {"patch": "cordis.patch.yml"}}}))
    (bundle / "plugins" / "noop.py").write_text(PLUGIN)
    lines = ["- insert:"]
    for i in range(rows):
        lines += [f"    - id: r{i}", "      name: ./plugins/noop.py", f"      config: {{n: {i}}}"]
    (bundle / "cordis.patch.yml").write_text("\n".join(lines) + "\n")
    return home


def save(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp~")
    tmp.write_text(text)
    os.replace(tmp, path)


async def boot(home: Path) -> Host:
    host = Host(HostOptions(home=home, profile="bench", module_reload=False), HostLog("json", io.StringIO()))
    await host.boot()
    await host.serve()
    return host


async def measure(rows: int, edits: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        home = make_home(Path(tmp), rows)
        host = await boot(home)
        user = home / "profiles" / "bench" / "cordis.patch.yml"
        latencies = []
        for k in range(edits):
            target = f"r{(k * 7) % rows}"
            value = 10_000 + k
            started = time.perf_counter()
            save(user, f"- id: {target}\n  config: {{n: {value}}}\n")
            while True:
                fiber = host.loader.resolve(target).fiber
                if fiber is not None and fiber.state is State.ACTIVE and (fiber.config or {}).get("n") == value:
                    break
                await asyncio.sleep(0.0005)
            latencies.append((time.perf_counter() - started) * 1000)
            await asyncio.sleep(0.05)  # let the watcher go quiet between saves
        restarts = []
        for _ in range(3):
            started = time.perf_counter()
            await host.shutdown()
            host = await boot(home)
            restarts.append((time.perf_counter() - started) * 1000)
        await host.shutdown()
    return {"rows": rows, "reload_median_ms": statistics.median(latencies),
            "reload_p90_ms": sorted(latencies)[int(len(latencies) * 0.9) - 1],
            "restart_median_ms": statistics.median(restarts)}


# issue 13: save -> reload applied, 1 row of 1,000 changed
TARGET_ROWS, TARGET_MS, TARGET_RATIO = 1000, 50.0, 20.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="50,500,2000")
    parser.add_argument("--edits", type=int, default=25)
    args = parser.parse_args()
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    print(f"{'rows':>6} {'reload median':>14} {'reload p90':>11} {'restart median':>15} {'restart/reload':>15}")
    for size in (int(s) for s in args.sizes.split(",")):
        r = asyncio.run(measure(size, args.edits))
        ratio = r["restart_median_ms"] / r["reload_median_ms"]
        print(f"{r['rows']:>6} {r['reload_median_ms']:>11.1f} ms {r['reload_p90_ms']:>8.1f} ms "
              f"{r['restart_median_ms']:>12.1f} ms {ratio:>14.1f}x")
        if size == TARGET_ROWS:
            met = r["reload_median_ms"] <= TARGET_MS and ratio >= TARGET_RATIO
            print(f"target: reload of 1 row in {TARGET_ROWS:,} <= {TARGET_MS:.0f} ms and >= {TARGET_RATIO:.0f}x "
                  f"faster than a restart: {r['reload_median_ms']:.1f} ms, {ratio:.1f}x: "
                  f"{'met' if met else 'NOT MET'}")


if __name__ == "__main__":
    main()
