"""What copying npm packages out of the store costs next to the hard links it replaced (issue 29,
docs/bundles.md "The store"), on bench_npm_install.py's set: a bundle of 20 npm dependencies, 37
packages, ~450 files, from the suite's registry on 127.0.0.1. Run on demand:

    .venv/bin/python benchmarks/bench_npm_placement.py [--rounds 7]

One cold `plugin add` fills the store; then, interleaved per round: a warm `plugin add` into a new
profile (in process, so CPU is this process's user+sys, threads included) with the placement as
shipped (copies: reflink where the file system has it, else copy_file_range) and with the old hard
links patched in; `plugin verify` and a no-op `plugin install` of a placed profile (both re-hash every
placed npm file now); the per-file digests a cold add now records for the store's trees. Medians.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_npm_install import build_registry, bundle_repo  # noqa: E402
from bundles.npm_registry import Registry, Server  # noqa: E402


def _link_tree(src: str, dst: str) -> None:
    """The placement before issue 29: hard links into the store."""
    import stat

    os.mkdir(dst)
    with os.scandir(src) as entries:
        for entry in entries:
            target = os.path.join(dst, entry.name)
            if entry.is_symlink():
                os.symlink(os.readlink(entry.path), target)
            elif entry.is_dir():
                _link_tree(entry.path, target)
            else:
                os.link(entry.path, target)
    os.chmod(dst, stat.S_IMODE(os.stat(src).st_mode))


def timed(fn) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    fn()
    return time.process_time() - cpu, time.perf_counter() - wall


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    from dshctl.bundles.install import Installer
    from dshctl.bundles.npm import layout
    from dshctl.bundles.query import verify

    base = Path(tempfile.mkdtemp(prefix="bench-place-"))
    server = Server(Registry())
    try:
        url = bundle_repo(base, build_registry(server.registry))
        os.environ["npm_config_registry"] = server.registry.url
        os.environ["HOME"] = str(base)
        home = base / "home"
        cold = timed(lambda: Installer(home, "web").add([url]))
        shipped = layout.copy_tree
        rows: dict[str, list[tuple[float, float]]] = {
            k: [] for k in ("warm add, copies", "warm add, hard links", "verify", "install (no-op)")}
        for r in range(args.rounds):
            for kind, place in (("copies", shipped), ("hard links", _link_tree)):
                layout.copy_tree = place
                try:
                    rows[f"warm add, {kind}"].append(
                        timed(lambda: Installer(home, f"p{r}-{kind[0]}").add([url])))
                finally:
                    layout.copy_tree = shipped
            rows["verify"].append(timed(lambda: verify(home, "web")))
            rows["install (no-op)"].append(timed(lambda: Installer(home, "web").install()))
        from dshctl.bundles.tree import file_digests

        trees = [p for p in (home / ".dshctl/store/npm/trees").iterdir() if p.is_dir()]
        digests = [timed(lambda: [file_digests(t) for t in trees]) for _ in range(args.rounds)]
        rows["record digests (cold add)"] = digests  # what each cold add now also does
        files = sum(1 for _ in (home / "profiles/web/node_modules/dsh-bench/node_modules").rglob("*"))
        print(f"{args.rounds} rounds, {files} placed npm entries per profile; cold add "
              f"{cold[0]:.3f} s CPU / {cold[1]:.3f} s wall")
        print(f"{'':26} {'CPU s':>8} {'wall s':>8}")
        for k, v in rows.items():
            print(f"{k:26} {statistics.median(c for c, _ in v):8.3f} "
                  f"{statistics.median(w for _, w in v):8.3f}")
        print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        server.close()
        import shutil

        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
