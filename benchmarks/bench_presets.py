"""Preset discovery + health at scale: 10,000 presets across 3 roots.

    .venv/bin/python benchmarks/bench_presets.py [--presets N] [--repeat R]

Prints the cold scan (a fresh ScanCache: every file read, hashed and parsed) and the re-scan with
nothing changed (same cache: stat only). Targets: cold < 2 s, re-scan < 200 ms. Not part of the tests.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
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


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--presets", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-presets-"))
    try:
        roots = build(base, args.presets)
        cold, warm = [], []
        for _ in range(args.repeat):
            cache = ScanCache()
            cold.append(timed(lambda: discover(roots, cache=cache)))
            warm.append(timed(lambda: discover(roots, cache=cache)))
        roster = discover(roots, cache=cache)
        assert len(roster.presets) == args.presets and all(p.health.ok for p in roster.presets)
        print(f"presets: {args.presets} across {len(roots)} roots")
        print(f"cold scan (fresh cache):   median {statistics.median(cold) * 1000:7.1f} ms  "
              f"(runs: {', '.join(f'{t * 1000:.0f}' for t in cold)})")
        print(f"re-scan (nothing changed): median {statistics.median(warm) * 1000:7.1f} ms  "
              f"(runs: {', '.join(f'{t * 1000:.0f}' for t in warm)})")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
