"""`dshctl plugin add` of a bundle with 20 npm dependencies, side by side with `pnpm add` (what
`dsh plugin add` runs), against the same registry on 127.0.0.1. Run on demand:

    .venv/bin/python benchmarks/bench_npm_install.py [--rounds 3] [--variant both] [--floor]
        [--baseline DIR]

pnpm is installed with npm into a scratch directory (never by the suite). Cold: a fresh home / a
fresh pnpm store and cache. Warm: a new profile (project) with the store (and pnpm's metadata
cache) left by the cold run. CPU is user+sys of the whole process tree (RUSAGE_CHILDREN), wall is
time to exit; user CPU is printed too (pnpm's CPU is mostly the kernel's, dshctl's mostly the
interpreter's). Two registries run side by side, one sending registry.npmjs.org's caching headers
(``Cache-Control: public, max-age=300``, ETag, Last-Modified) and one sending no Cache-Control at
all; the rounds alternate between them. Target (issue 30): dshctl's CPU <= pnpm's, cold and warm,
in both; each is printed with met / not met, next to the load average. ``--baseline DIR`` also
runs the dshctl of another tree (``git archive main | tar -x -C DIR``), interleaved with this one,
against the same registries: before/after figures from one run.

dshctl's modules are byte-compiled first (``compileall``), as pip does when it installs dshctl: with
``PYTHONDONTWRITEBYTECODE`` set (as on the shared machine) every run would otherwise compile them
again, ~30 ms that no installed copy pays.

On ext4 without a journal (the shared machine's disk) creating a file right after a large delete
costs up to ~40x more kernel time (the allocator skips inodes freed in the last ~30 s), and dshctl
creates more inodes than pnpm (copies, not links): start it 30 s after other benchmarks' cleanup
(docs/performance.md, issue 30, the disk note).
"""
from __future__ import annotations

import argparse
import compileall
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from bundles.npm_registry import Registry, Server  # noqa: E402

ENV = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
       "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.invalid",
       "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.invalid"}
POOL = [f"util-{c}" for c in "abcdefghijkl"]


def build_registry(reg: Registry) -> dict[str, str]:
    rnd = random.Random(20)
    for i, name in enumerate(POOL):
        for v in ("1.0.0", "1.1.0", "2.0.0"):
            later = POOL[i + 1:i + 3]
            reg.add(name, v, deps={d: rnd.choice(["^1.0.0", "^2.0.0", "*"]) for d in later[:rnd.randint(0, 2)]},
                    files={f"lib/f{k}.js": f"module.exports = {k};\n" * 40 for k in range(8)})
    deps = {}
    for i in range(20):
        name = f"bench-dep-{i:02d}" if i % 4 else f"@bench/dep-{i:02d}"
        for v in ("1.0.0", "1.1.0", "1.2.0"):
            reg.add(name, v, deps={d: "^1.0.0" for d in rnd.sample(POOL, 2)}, esm=i % 2 == 0,
                    files={f"dist/m{k}.js": f"export const v{k} = {k};\n" * 60 for k in range(12)})
        deps[name] = "^1.0.0"
    return deps


def bundle_repo(base: Path, deps: dict[str, str]) -> str:
    work = base / "dsh-bench"
    work.mkdir(parents=True)
    (work / "package.json").write_text(json.dumps(
        {"name": "dsh-bench", "version": "1.0.0", "dsh": {"bundle": {"patch": "cordis.patch.yml"}},
         "dependencies": deps}, indent=2))
    (work / "cordis.patch.yml").write_text("- insert:\n    - id: bench\n      name: bench\n")
    for cmd in (["init", "-q", "-b", "main", "."], ["add", "-A"], ["commit", "-qm", "init"]):
        subprocess.run(["git", *cmd], cwd=work, env=ENV, check=True, capture_output=True)
    return work.as_uri()


def measure(cmd: list[str], cwd: Path, env: dict) -> tuple[float, float, float]:
    """(CPU, wall, user CPU) of one run of ``cmd``: user+sys of its whole process tree."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[:4]} failed:\n{proc.stdout}\n{proc.stderr}")
    user = after.ru_utime - before.ru_utime
    return user + (after.ru_stime - before.ru_stime), wall, user


def install_pnpm(scratch: Path) -> Path:
    subprocess.run(["npm", "install", "--silent", "--prefix", str(scratch), "pnpm"], check=True)
    return scratch / "node_modules" / ".bin" / "pnpm"


def run_dshctl(base: Path, url: str, registry: str, home: Path, profile: str, tree: Path | None = None):
    env = {**ENV, "DSH_HOME": str(home), "npm_config_registry": registry, "HOME": str(base)}
    if tree is not None:  # another tree's dshctl (the venv's packages, that tree's own code)
        env["PYTHONPATH"] = str(tree)
    return measure([sys.executable, "-m", "dshctl", "plugin", "--profile", profile, "add", url],
                   base, env)


def run_pnpm(pnpm: Path, base: Path, url: str, registry: str, store: Path, project: Path):
    project.mkdir(parents=True)
    (project / "package.json").write_text(json.dumps(
        {"name": "dsh-profile-web", "private": True, "dependencies": {}}))
    env = {**ENV, "HOME": str(base), "npm_config_registry": registry}
    return measure([str(pnpm), "add", f"git+{url}", f"--registry={registry}",
                    f"--store-dir={store / 'store'}", f"--cache-dir={store / 'cache'}",
                    "--reporter=silent"], project, env)


def cpu_of(cmd: list[str], *, env: dict | None = None, cwd: Path | None = None, runs: int = 7) -> float:
    return statistics.median(measure(cmd, cwd or ROOT, env or ENV)[0] for _ in range(runs))


def floor(base: Path, url: str, registry: str) -> None:
    """What a warm and a cold `plugin add` cost before any of its own work: the interpreter, the
    modules a warm run imports (found by running one), httpx, and the git commands of a cold add."""
    home = base / "floor-home"
    run_dshctl(base, url, registry, home, "web")
    listing = base / "modules.txt"
    env = {**ENV, "DSH_HOME": str(home), "npm_config_registry": registry, "HOME": str(base)}
    probe = ("import atexit, runpy, sys\n"
             f"atexit.register(lambda: open({str(listing)!r}, 'w').write('\\n'.join(sys.modules)))\n"
             f"sys.argv = ['dshctl', 'plugin', '--profile', 'probe', 'add', {url!r}]\n"
             "runpy.run_module('dshctl', run_name='__main__')\n")
    subprocess.run([sys.executable, "-c", probe], env=env, cwd=base, capture_output=True, check=True)
    mods = sorted(m for m in listing.read_text().split("\n") if m and m != "__main__")
    importer = ("import importlib\n"
                f"for m in {mods!r}:\n"
                "    try: importlib.import_module(m)\n"
                "    except Exception: pass\n")
    ours = [m for m in mods if m.startswith("dshctl")]
    rows = [
        ("interpreter start (python -c pass)", [sys.executable, "-c", "pass"]),
        (f"imports of a warm plugin add ({len(mods)} modules, {len(ours)} of dshctl)",
         [sys.executable, "-c", importer]),
        ("  the standard library alone", [sys.executable, "-c", importer.replace(
            f"{mods!r}", repr([m for m in mods if m.split('.')[0] in sys.stdlib_module_names]))]),
        ("  ruamel.yaml alone (dshctl's YAML dialect)", [sys.executable, "-c", "import ruamel.yaml"]),
        ("httpx import + a plain-http client, as dshctl makes it (cold)", [sys.executable, "-c",
         "import sys; sys.modules['httpx._main'] = None; import httpx; "
         "httpx.Client(verify=False, trust_env=False)"]),
        ("  http.client instead (the standard library's)", [sys.executable, "-c",
         "import http.client; http.client.HTTPConnection('127.0.0.1')"]),
        ("  dshctl's registry client (npm/http_pool.py) + a pool", [sys.executable, "-c",
         "from dshctl.bundles.npm.http_pool import Pool; Pool(30.0)"]),
    ]
    print("floor (CPU, median of 7):")
    for label, cmd in rows:
        print(f"  {label:58} {cpu_of(cmd, cwd=ROOT) * 1000:6.1f} ms")
    repo = base / "floor-repo.git"
    commit = subprocess.run(["git", "ls-remote", url, "HEAD"], capture_output=True, text=True,
                            env=ENV).stdout.split()[0]
    git_cpu = []
    for i in range(5):
        shutil.rmtree(repo, ignore_errors=True)
        subprocess.run(["git", "init", "-q", "--bare", str(repo)], env=ENV, check=True)
        cmds = [["git", "ls-remote", "--", url],
                ["git", "-c", "core.fsync=none", "-c", "maintenance.auto=false", "--git-dir",
                 str(repo), "fetch", "-q", "--no-tags", "--depth=1", "--", url, commit],
                ["git", "--git-dir", str(repo), "archive", "--format=tar", commit]]
        git_cpu.append(sum(measure(c, base, ENV)[0] for c in cmds))
    print(f"  {'git: ls-remote + fetch + archive (cold only)':58} "
          f"{statistics.median(git_cpu) * 1000:6.1f} ms")


VARIANTS = {"npm headers": 300, "no cache headers": None}  # Cache-Control max-age sent


def one_round(base: Path, r: int, pnpm: Path, url: str, variant: str, server: Server,
              rows: dict[str, list[tuple[float, float, float]]], baseline: Path | None = None) -> None:
    """Cold then warm, dshctl then pnpm: the warm add follows its cold add within seconds, as a
    user's second `plugin add` does."""
    reg = server.registry.url
    tag = variant.replace(" ", "-")
    home = base / f"home-{tag}{r}"
    store = base / f"pnpm-store-{tag}{r}"
    def baseline_pair() -> None:  # before or after this tree's, alternating between rounds
        old = base / f"home-base-{tag}{r}"
        rows[f"{variant}|baseline cold"].append(run_dshctl(base, url, reg, old, "web", baseline))
        rows[f"{variant}|baseline warm"].append(run_dshctl(base, url, reg, old, "second", baseline))

    if baseline is not None and r % 2:
        baseline_pair()
    rows[f"{variant}|dshctl cold"].append(run_dshctl(base, url, reg, home, "web"))
    rows[f"{variant}|pnpm cold"].append(run_pnpm(pnpm, base, url, reg, store, base / f"proj-{tag}{r}a"))
    rows[f"{variant}|dshctl warm"].append(run_dshctl(base, url, reg, home, "second"))
    rows[f"{variant}|pnpm warm"].append(run_pnpm(pnpm, base, url, reg, store, base / f"proj-{tag}{r}b"))
    if baseline is not None and not r % 2:
        baseline_pair()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--variant", choices=[*VARIANTS, "both"], default="both",
                        help="which caching headers the registry sends (default: both, interleaved)")
    parser.add_argument("--floor", action="store_true",
                        help="also measure the costs no plugin add can avoid (interpreter, imports, git)")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="a tree (e.g. main via git archive) whose dshctl runs interleaved too")
    args = parser.parse_args()
    compileall.compile_dir(ROOT / "dshctl", quiet=1)
    if args.baseline is not None:
        args.baseline = args.baseline.resolve()
        compileall.compile_dir(args.baseline / "dshctl", quiet=1)
    base = Path(tempfile.mkdtemp(prefix="bench-npm-"))
    variants = list(VARIANTS) if args.variant == "both" else [args.variant]
    servers = {v: Server(Registry(max_age=VARIANTS[v])) for v in variants}
    try:
        deps = {}
        for server in servers.values():
            deps = build_registry(server.registry)
        url = bundle_repo(base, deps)
        pnpm = install_pnpm(base / "pnpm-tool")
        version = subprocess.run([str(pnpm), "--version"], capture_output=True, text=True).stdout
        tarballs = len(next(iter(servers.values())).registry.tarballs)
        print(f"pnpm {version.strip()}, 20 npm dependencies, {tarballs} tarballs served, "
              f"{args.rounds} rounds, registries: {', '.join(variants)} (interleaved)")
        rows: dict[str, list[tuple[float, float, float]]] = {
            f"{v}|{k}": [] for v in variants for k in ("dshctl cold", "pnpm cold", "dshctl warm", "pnpm warm")
            + (("baseline cold", "baseline warm") if args.baseline else ())}
        for r in range(args.rounds):
            for v in (variants if r % 2 == 0 else variants[::-1]):
                one_round(base, r, pnpm, url, v, servers[v], rows, args.baseline)
        med = {k: tuple(statistics.median(run[i] for run in v) for i in range(3))
               for k, v in rows.items()}
        print(f"{'':32} {'CPU s':>8} {'wall s':>8} {'user s':>8}")
        for k, (cpu, wall, user) in med.items():
            print(f"{k.replace('|', ': '):32} {cpu:8.3f} {wall:8.3f} {user:8.3f}")
        if args.floor:
            floor(base, url, next(iter(servers.values())).registry.url)
        print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        for v in variants:
            for phase in ("cold", "warm"):
                (d_cpu, d_wall, _), (p_cpu, p_wall, _) = med[f"{v}|dshctl {phase}"], med[f"{v}|pnpm {phase}"]
                print(f"{v}, {phase}: dshctl/pnpm CPU {d_cpu / p_cpu:.2f} (target <= 1.00: "
                      f"{'met' if d_cpu <= p_cpu else 'not met'}), wall {d_wall / p_wall:.2f}")
                if args.baseline is not None:
                    b_cpu = med[f"{v}|baseline {phase}"][0]
                    print(f"{v}, {phase}: baseline/pnpm CPU {b_cpu / p_cpu:.2f}, "
                          f"this tree/baseline CPU {d_cpu / b_cpu:.2f}")
    finally:
        for server in servers.values():
            server.close()
        shutil.rmtree(base, ignore_errors=True)

if __name__ == "__main__":
    main()
