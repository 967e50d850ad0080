"""What placing npm packages costs on a warm add: unpacked from the store's checked tarballs (as
shipped since issue 30, docs/bundles.md "npm packages are unpacked into the profile") next to the
copy of an unpacked store tree that it replaced (issue 29's placement), on bench_npm_install.py's
set: a bundle of 20 npm dependencies, 37 packages, ~450 files, from the suite's registry on
127.0.0.1. Run on demand:

    .venv/bin/python benchmarks/bench_npm_placement.py [--rounds 7]

One cold `plugin add` fills the store; the unpacked trees of the old layout are made once beside it.
Then, interleaved per round: a warm `plugin add` into a new profile (in process, so CPU is this
process's user+sys, threads included) with each placement; `plugin verify` and a no-op
`plugin install` of a placed profile (both re-hash every placed npm file). Medians. (The hard links
before issue 29 are measured in docs/performance.md; they shared the store's inodes.)
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
from dshctl.bundles.limits import Limits  # noqa: E402


def _copies_of_unpacked_trees(home: Path, scratch: Path):
    """A ``place`` that copies an unpacked tree of the stored tarball, made here once per package
    (the store layout before issue 30, whose trees sat under ``trees/<key>/``)."""
    from dshctl.bundles.npm.extract import extract
    from dshctl.bundles.tree import copy_tree, make_read_only

    trees = {}
    for tgz in (home / ".dshctl/store/npm/tarballs").glob("*.tgz"):
        tree = trees[tgz] = scratch / tgz.name[:-len(".tgz")]
        extract(tgz, tree, what=tgz.name, limits=Limits())
        make_read_only(tree)

    def place(self, entry, dest: Path) -> None:
        copy_tree(trees[entry.tarball], dest)
    return place


def timed(fn) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    fn()
    return time.process_time() - cpu, time.perf_counter() - wall


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    from dshctl.bundles.install import Installer
    from dshctl.bundles.npm.store import NpmStore
    from dshctl.bundles.query import verify

    base = Path(tempfile.mkdtemp(prefix="bench-place-"))
    server = Server(Registry())
    try:
        url = bundle_repo(base, build_registry(server.registry))
        os.environ["npm_config_registry"] = server.registry.url
        os.environ["HOME"] = str(base)
        home = base / "home"
        cold = timed(lambda: Installer(home, "web").add([url]))
        shipped = NpmStore.place
        copies = _copies_of_unpacked_trees(home, base / "old-trees")
        rows: dict[str, list[tuple[float, float]]] = {
            k: [] for k in ("warm add, unpacked", "warm add, tree copies", "verify", "install (no-op)")}
        for r in range(args.rounds):
            for kind, place in (("unpacked", shipped), ("tree copies", copies)):
                NpmStore.place = place
                try:
                    rows[f"warm add, {kind}"].append(
                        timed(lambda: Installer(home, f"p{r}-{kind[0]}").add([url])))
                finally:
                    NpmStore.place = shipped
            rows["verify"].append(timed(lambda: verify(home, "web")))
            rows["install (no-op)"].append(timed(lambda: Installer(home, "web").install()))
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
