"""Preset discovery + health at scale: 10,000 presets across 3 roots.

    .venv/bin/python benchmarks/bench_presets.py [--presets N] [--repeat R]
    .venv/bin/python benchmarks/bench_presets.py --growth   # re-scan at 2.5k / 5k / 10k, with ratios
    .venv/bin/python benchmarks/bench_presets.py --list     # issue 13: `preset list -f json`, unchanged

Prints the cold scan (a fresh ScanCache: every file read, hashed and parsed), the re-scan with
nothing changed (same cache: stat only), and the whole CLI in a fresh process
(`dshctl preset list --root … -f json`: imports, scan, JSON). Each with wall and CPU time: on a
shared machine the CPU time is the stable figure. Targets: cold < 2 s, re-scan < 200 ms. Not part of
the tests.
"""
from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dshctl.core.presets import Root, ScanCache, discover

COMPOSITION = """\
# preset {i}
- id: tools
  name: "@dshctl/tools"
  config:
    allow: [read, grep]
- id: session-log
  name: cordis:group
  group: true
  isolate:
    logger: true
  disabled: !!js process.env.DSH_PRESET_LOG === 'off'
  config:
    - id: logger
      name: "@dshctl/logger"
"""
METADATA = "name: Preset {i}\ndescription: Benchmark preset number {i}.\norder: {order}\n"


def build(base: Path, count: int, roots: int = 3) -> list[Root]:
    paths = [base / f"root{r}" for r in range(roots)]
    for i in range(count):
        d = paths[i % roots] / f"preset-{i:05d}"
        d.mkdir(parents=True)
        (d / "agent.cordis.yml").write_text(COMPOSITION.format(i=i))
        if i % 2:
            (d / "preset.yml").write_text(METADATA.format(i=i, order=i % 7))
    return [Root(p) for p in paths]


def timed(fn) -> tuple[float, float]:
    """(wall, CPU) seconds of ``fn()``; CPU counts this process and the children it waited for."""
    def cpu() -> float:
        own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

    wall, used = time.perf_counter(), cpu()
    fn()
    return time.perf_counter() - wall, cpu() - used


def cli_list(roots: list[Root], home: Path) -> None:
    dshctl = Path(sys.executable).parent / "dshctl"
    args = [str(dshctl), "preset", "list", "--home", str(home), "--no-user-root", "-f", "json"]
    for root in roots:
        args += ["--root", str(root.path)]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)


def report(label: str, runs: list[tuple[float, float]]) -> None:
    wall = statistics.median(t for t, _ in runs) * 1000
    cpu = statistics.median(c for _, c in runs) * 1000
    print(f"{label:<34} median wall {wall:7.1f} ms, CPU {cpu:7.1f} ms  "
          f"(wall runs: {', '.join(f'{t * 1000:.0f}' for t, _ in runs)})")


def cpu_of(fn) -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    fn()
    after = resource.getrusage(resource.RUSAGE_SELF)
    return after.ru_utime + after.ru_stime - own.ru_utime - own.ru_stime


def growth(sizes=(2_500, 5_000, 10_000), repeat: int = 7) -> None:
    """In-process re-scan with nothing changed at 1x / 2x / 4x: median CPU and the ratio to 1x
    (target: linear, <= 150 ms at 10,000)."""
    first = None
    for n in sizes:
        base = Path(tempfile.mkdtemp(prefix="bench-presets-"))
        try:
            roots = build(base, n)
            cache = ScanCache()
            discover(roots, cache=cache)
            runs = [cpu_of(lambda: discover(roots, cache=cache)) for _ in range(repeat)]
            med = statistics.median(runs) * 1000
            first = first or med
            print(f"re-scan {n:>6} presets: median CPU {med:6.1f} ms, best {min(runs) * 1000:6.1f} ms, "
                  f"ratio {med / first:4.2f}x (size {n / sizes[0]:.0f}x)")
        finally:
            shutil.rmtree(base, ignore_errors=True)


LIST_TARGET_MS = 300.0  # issue 13: `preset list -f json`, 10,000 presets unchanged since the last run


def list_target(count: int = 10_000, runs: int = 11) -> None:
    """The issue-13 row as compare_peers.py runs it: the CLI over ``count`` presets whose caches were
    filled by earlier runs (one, then one more past the 2 s racy window, so stamps are trusted), CPU
    time (user + sys of the child) of each run, interleaved with a `--no-cache` run for reference."""
    import os

    base = Path(tempfile.mkdtemp(prefix="bench-presets-"))
    env = dict(os.environ, XDG_CACHE_HOME=str(base / "cache"))
    try:
        roots = build(base / "roster", count)
        dshctl = str(Path(sys.executable).parent / "dshctl")
        cmd = [dshctl, "preset", "list", "--home", str(base / "home"), "--no-user-root", "-f", "json"]
        for root in roots:
            cmd += ["--root", str(root.path)]
        subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
        time.sleep(2.1)
        subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)

        def child_cpu(args: list[str]) -> float:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run(args, env=env, check=True, stdout=subprocess.DEVNULL)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000

        warm, cold = [], []
        for _ in range(runs):
            warm.append(child_cpu(cmd))
            cold.append(child_cpu([dshctl, "--no-cache", *cmd[1:]]))
        med = statistics.median(warm)
        print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
        print(f"preset list -f json, {count:,} presets, --no-cache: median CPU {statistics.median(cold):.0f} ms")
        print(f"preset list -f json, {count:,} presets, unchanged: median CPU {med:.0f} ms "
              f"(runs: {', '.join(f'{w:.0f}' for w in warm)})")
        print(f"target: preset list of {count:,} unchanged presets <= {LIST_TARGET_MS:.0f} ms CPU: {med:.0f} ms: "
              f"{'met' if med <= LIST_TARGET_MS else 'NOT MET'}")
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--presets", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--growth", action="store_true", help="re-scan at 2.5k / 5k / 10k presets")
    parser.add_argument("--list", action="store_true", help="the issue-13 `preset list` target")
    args = parser.parse_args()
    if args.growth:
        growth()
        return
    if args.list:
        list_target(args.presets)
        return
    base = Path(tempfile.mkdtemp(prefix="bench-presets-"))
    try:
        roots = build(base, args.presets)
        cold, warm, cli = [], [], []
        for _ in range(args.repeat):
            cache = ScanCache()
            cold.append(timed(lambda: discover(roots, cache=cache)))
            warm.append(timed(lambda: discover(roots, cache=cache)))
            cli.append(timed(lambda: cli_list(roots, base / "home")))
        roster = discover(roots, cache=cache)
        assert len(roster.presets) == args.presets and all(p.health.ok for p in roster.presets)
        print(f"presets: {args.presets} across {len(roots)} roots")
        report("cold scan (fresh cache):", cold)
        report("re-scan (nothing changed):", warm)
        report("CLI `preset list` (new process):", cli)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
