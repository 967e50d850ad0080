"""Benchmark profile composition (issue 3): run on demand, not part of the test suite.

    .venv/bin/python benchmarks/bench_compose.py

Builds homes of B bundles x 200 rows with P override patches (1x: 20 bundles, 2,000 patches; then
2x and 4x), and prints: compose in-process cold (parse included) and warm (parse cache hit), each with explain's
change records (`touches`, what `explain`/edits use) and without them (what `profile dump` uses), the
patch pass alone, and `dshctl profile dump` end to end (subprocess, median of 5) without and with the
dump cache.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dshctl.core.compose import compose_layers, compose_profile  # noqa: E402
from dshctl.core.layers import _PARSED, bundle_layers, user_layers  # noqa: E402

ROWS_PER_BUNDLE = 200


def build_home(base: Path, bundles: int, patches: int) -> Path:
    home = base / f"home-{bundles}-{patches}"
    pdir = home / "profiles" / "web"
    names = [f"@bench/b{i:03d}" for i in range(bundles)]
    for i, name in enumerate(names):
        bdir = pdir / "node_modules" / name
        bdir.mkdir(parents=True)
        (bdir / "package.json").write_text(json.dumps({"name": name, "dsh": {"bundle": {"patch": "p.yml"}}}))
        lines = ["- insert:"]
        for r in range(ROWS_PER_BUNDLE):
            lines += [f"    - id: b{i}-r{r}", f"      name: '@bench/plugin-{r % 17}'",
                      "      config:", f"        port: {3000 + r}", "        host: 127.0.0.1",
                      f"        tags: [a, b, {r}]"]
        (bdir / "p.yml").write_text("\n".join(lines) + "\n")
    (pdir / "package.json").write_text(json.dumps({"dsh": {"profile": {"bundles": names}}}))
    out = []
    for k in range(patches):
        b, r = k % bundles, (k * 7) % ROWS_PER_BUNDLE
        if k % 3 == 0:
            out += [f"- id: b{b}-r{r}", "  disabled: true"]
        else:
            out += [f"- id: b{b}-r{r}", "  config:", f"    port: {9000 + k}", "    host: 0.0.0.0"]
    (pdir / "cordis.patch.yml").write_text("\n".join(out) + "\n")
    return home


def age(root: Path) -> None:
    """Make every input older than the caches' 2-second "racily clean" window."""
    past = time.time() - 60
    for p in [root, *root.rglob("*")]:
        os.utime(p, (past, past))


def best_of(fn, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times) * 1000


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        print(f"{'size':>5} {'rows':>6} {'patches':>8} {'cold ms':>8} {'warm ms':>8} {'cold-dump':>9} "
              f"{'warm-dump':>9} {'pass ms':>8}")
        for factor in (1, 2, 4):
            home = build_home(Path(tmp), 20 * factor, 2000 * factor)
            age(home)
            cold = best_of(lambda: (_PARSED.clear(), compose_profile(home, "web")))
            total = best_of(lambda: compose_profile(home, "web"))
            cold_dump = best_of(lambda: (_PARSED.clear(), compose_profile(home, "web", touches=False)))
            warm_dump = best_of(lambda: compose_profile(home, "web", touches=False))
            stack = bundle_layers(home, "web") + user_layers(home, "web")
            passed = best_of(lambda: compose_layers(stack))
            rows = 20 * factor * ROWS_PER_BUNDLE
            print(f"{factor:>4}x {rows:>6} {2000 * factor:>8} {cold:>8.1f} {total:>8.1f} {cold_dump:>9.1f} "
                  f"{warm_dump:>9.1f} {passed:>8.1f}")
        home = Path(tmp) / "home-20-2000"
        exe = ROOT / ".venv" / "bin" / "dshctl"
        cmd = [str(exe), "--home", str(home), "profile", "dump"]
        with tempfile.TemporaryDirectory() as cache:
            for label, env in (("no cache", {"DSHCTL_CACHE": "0"}), ("cache", {"DSHCTL_CACHE_DIR": cache})):
                times = []
                for _ in range(5):
                    t0 = time.perf_counter()
                    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True, env={**os.environ, **env})
                    times.append((time.perf_counter() - t0) * 1000)
                print(f"dshctl profile dump (1x, subprocess, {label}): median "
                      f"{statistics.median(times):.0f} ms, best {min(times):.0f} ms")


if __name__ == "__main__":
    main()
