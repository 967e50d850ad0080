"""Benchmark profile composition (issue 3): run on demand, not part of the test suite.

    .venv/bin/python benchmarks/bench_compose.py

Builds homes of B bundles x 200 rows with P override patches (1x: 20 bundles, 2,000 patches; then
2x and 4x), and prints: compose in-process cold (parse included) and warm (parse cache hit), each with explain's
change records (`touches`, what `explain`/edits use) and without them (what `profile dump` uses), the
patch pass alone, and `dshctl profile dump` end to end (subprocess, median of 5) without and with the
dump cache.

    .venv/bin/python benchmarks/bench_compose.py --dump [--runs N]

only times issue 13's target: `dshctl --no-cache --home H profile dump` of the 1x home, CPU (user + sys
of the child) median of N runs taken in turn with `python -c pass` (the interpreter's own start-up),
with the load average, against the 300 ms target (met / not met). A first, untimed run writes the
bytecode cache of dshctl's modules, as an installed dshctl has it.
"""
from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dshctl.core.compose.composition import compose_layers, compose_profile  # noqa: E402
from dshctl.core.compose.layers import _PARSED, bundle_layers, user_layers  # noqa: E402

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
        t0 = time.process_time()  # CPU time: the machine is shared, wall time swings with its load
        fn()
        times.append(time.process_time() - t0)
    return min(times) * 1000


FRESH = """
import sys, time
from dshctl.core.compose.composition import compose_profile
t0, c0 = time.perf_counter(), time.process_time()
compose_profile(sys.argv[1], "web", touches=False)
print((time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000)
"""


def first_compose_in_fresh_process(home: Path, runs: int = 5) -> tuple[list[float], list[float]]:
    """The truly cold figure a CLI run pays (no parse cache, nothing warmed up): wall and CPU ms."""
    wall, cpu = [], []
    for _ in range(runs):
        proc = subprocess.run([sys.executable, "-c", FRESH, str(home)], capture_output=True, text=True,
                              check=True, cwd=ROOT)
        w, c = proc.stdout.split()
        wall.append(float(w))
        cpu.append(float(c))
    return wall, cpu


def run_timed(cmd: list[str], env: dict) -> tuple[float, float]:
    """Wall and CPU (user + sys of the child) milliseconds of one subprocess run. On a shared machine
    CPU time is the steadier figure: wall time includes waiting for other jobs' cores."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True, env=env)
    wall = (time.perf_counter() - t0) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return wall, cpu


DUMP_TARGET_MS = 300


def dump_target(runs: int) -> None:
    """Issue 13: `profile dump` of the 20-bundle home, every cache off, <= 300 ms CPU."""
    exe = ROOT / ".venv" / "bin" / "dshctl"
    with tempfile.TemporaryDirectory() as tmp:
        home = build_home(Path(tmp), 20, 2000)
        age(home)
        cmd = [str(exe), "--no-cache", "--home", str(home), "profile", "dump"]
        # As installed, dshctl's modules have their bytecode cached (pip compiles a wheel; an editable
        # checkout writes __pycache__ on first import): this first run writes it even where the
        # shell sets PYTHONDONTWRITEBYTECODE, so the runs below time the dump, not the compiler.
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        out = subprocess.run(cmd, capture_output=True, check=True, env=env).stdout
        dumps, bare = [], []
        load_before = os.getloadavg()[0]
        for _ in range(runs):
            dumps.append(run_timed(cmd, env)[1])
            bare.append(run_timed([sys.executable, "-c", "pass"], env)[1])
        load_after = os.getloadavg()[0]
        median = statistics.median(dumps)
        lines = out.count(b"\n")
        print(f"home: 20 bundles x {ROWS_PER_BUNDLE} rows + 2,000 patches; dump {len(out):,} bytes, "
              f"{lines:,} lines")
        print(f"runs (ms CPU): {', '.join(f'{c:.0f}' for c in dumps)}; python -c pass median "
              f"{statistics.median(bare):.0f} ms; load average {load_before:.2f} -> {load_after:.2f}")
        print(f"profile dump, no cache: median {median:.0f} ms CPU, best {min(dumps):.0f} ms   target <= "
              f"{DUMP_TARGET_MS} ms   {'met' if median <= DUMP_TARGET_MS else 'not met'}")


def main() -> None:
    if "--dump" in sys.argv:
        runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 11
        dump_target(runs)
        return
    with tempfile.TemporaryDirectory() as tmp:
        print(f"{'size':>5} {'rows':>6} {'patches':>8} {'cold ms':>8} {'warm ms':>8} {'cold-dump':>9} "
              f"{'warm-dump':>9} {'pass ms':>8} {'warm ratio':>10}")
        first_warm = None
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
            first_warm = first_warm or total
            print(f"{factor:>4}x {rows:>6} {2000 * factor:>8} {cold:>8.1f} {total:>8.1f} {cold_dump:>9.1f} "
                  f"{warm_dump:>9.1f} {passed:>8.1f} {total / first_warm:>9.2f}x")
        home = Path(tmp) / "home-20-2000"
        wall, cpu = first_compose_in_fresh_process(home)
        print(f"compose (1x, first call in a fresh process, touches=False): median wall "
              f"{statistics.median(wall):.0f} ms, CPU {statistics.median(cpu):.0f} ms")
        exe = ROOT / ".venv" / "bin" / "dshctl"
        cmd = [str(exe), "--home", str(home), "profile", "dump"]
        with tempfile.TemporaryDirectory() as cache:
            for label, env in (("no cache", {"DSHCTL_CACHE": "0"}), ("cache", {"DSHCTL_CACHE_DIR": cache})):
                runs = [run_timed(cmd, {**os.environ, **env}) for _ in range(5)]
                walls, cpus = [w for w, _ in runs], [c for _, c in runs]
                print(f"dshctl profile dump (1x, subprocess, {label}): wall median "
                      f"{statistics.median(walls):.0f} ms, best {min(walls):.0f} ms; CPU median "
                      f"{statistics.median(cpus):.0f} ms")


if __name__ == "__main__":
    main()
