"""Sandbox figures (docs/performance.md): the overhead of confinement on a 50 ms command, per backend.

    .venv/bin/python benchmarks/bench_sandbox.py [--runs 30]

One call is what the bash tool pays: ``confine`` (policy -> argv, env), spawn, the command
(``sleep 0.05``), reap, and the tree's end (``kill_tree``). The same command spawned bare (no sandbox,
same environment allow-list) is the baseline; overhead = median(confined) - median(bare). The probe runs
once before timing (it is cached for the life of the service).
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dshctl.agents.sandbox import SandboxPolicy, SandboxService  # noqa: E402

COMMAND = ["sleep", "0.05"]


def one(service: SandboxService, policy: SandboxPolicy) -> float:
    start = time.perf_counter()
    command = service.confine(COMMAND, policy)
    proc = command.spawn(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    proc.proc.wait()
    proc.kill_tree()
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    runs = parser.parse_args().runs
    ws = tempfile.mkdtemp(prefix="dshctl-bench-sandbox-")
    bare = SandboxService([])
    rows = [("bare (danger-full-access)", bare, SandboxPolicy("danger-full-access", ws))]
    for backend in ("bwrap", "landlock"):
        service = SandboxService([backend])
        if service.backend() is None:
            print(f"{backend}: not usable here ({'; '.join(service.unavailable_reasons)})")
            continue
        rows.append((f"{backend} workspace-write", service, SandboxPolicy("workspace-write", ws)))
        rows.append((f"{backend} workspace-write, no network", service,
                     SandboxPolicy("workspace-write", ws, network=False)))
    base = None
    for label, service, policy in rows:
        one(service, policy)                                  # warm: page cache, the probe
        times = sorted(one(service, policy) for _ in range(runs))
        median = statistics.median(times)
        base = median if base is None else base
        print(f"{label:38s} median {median:6.1f} ms  p90 {times[int(runs * 0.9) - 1]:6.1f} ms  "
              f"overhead {median - base:+6.1f} ms")


if __name__ == "__main__":
    main()
