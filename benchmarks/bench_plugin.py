"""Benchmarks for `dshctl plugin` (run on demand: python benchmarks/bench_plugin.py).

Targets (issue 6): adding a bundle whose commit is already stored < 300 ms; `update` of 20 unchanged
bundles < 2 s. Prints figures for the in-process service call and for the whole CLI process.
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

from dshctl.bundles.install import Installer, Options

ENV = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
       "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.invalid",
       "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.invalid"}


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=ENV, check=True, capture_output=True)


def make_bundle_repo(root: Path, name: str, files: int = 30) -> str:
    work = root / name
    work.mkdir(parents=True)
    git("init", "-q", "-b", "main", ".", cwd=work)
    (work / "package.json").write_text(json.dumps(
        {"name": name, "version": "1.0.0", "dsh": {"bundle": {"patch": "cordis.patch.yml"}},
         "peerDependencies": {"@deepseek-ai/dsh": "^0.1.1-rc.1"}}))
    (work / "cordis.patch.yml").write_text(f"- insert:\n    - id: {name}\n      name: {name}\n")
    for i in range(files):
        (work / "lib" / f"m{i}.js").parent.mkdir(exist_ok=True)
        (work / "lib" / f"m{i}.js").write_text(f"export const x{i} = {i};\n" * 50)
    git("add", "-A", cwd=work)
    git("commit", "-qm", "init", cwd=work)
    return work.as_uri()


def timed(fn, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def report(label: str, samples: list[float], target_ms: float) -> None:
    print(f"{label:55} median {statistics.median(samples):7.1f} ms  max {max(samples):7.1f} ms  "
          f"(target < {target_ms:.0f} ms, n={len(samples)})")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        home = root / "home"
        url = make_bundle_repo(root / "src", "dsh-bench")
        Installer(home, "seed", Options()).add([url + "#main"])  # fetch once into the store
        counter = iter(range(10_000))
        report("add, commit already stored (in-process)",
               timed(lambda: Installer(home, f"p{next(counter)}", Options()).add([url + "#main"]), 15),
               300)
        cli_env = {**os.environ, "DSH_HOME": str(home)}
        report("add, commit already stored (dshctl CLI process)",
               timed(lambda: subprocess.run(
                   [sys.executable, "-m", "dshctl", "plugin", "--profile", f"c{next(counter)}",
                    "add", url + "#main"], env=cli_env, check=True, capture_output=True), 5), 300)

        urls = [make_bundle_repo(root / "many", f"dsh-b{i}") for i in range(20)]
        Installer(home, "twenty", Options()).add(urls)
        report("update of 20 unchanged bundles (in-process)",
               timed(lambda: Installer(home, "twenty", Options()).update([]), 5), 2000)
        report("update of 20 unchanged bundles (dshctl CLI process)",
               timed(lambda: subprocess.run(
                   [sys.executable, "-m", "dshctl", "plugin", "--profile", "twenty", "update"],
                   env=cli_env, check=True, capture_output=True), 3), 2000)


if __name__ == "__main__":
    main()
