"""A Kubernetes ConfigMap update reaching a plain host: the kubelet's `..data` swap → `reload/applied`.

Starts a real `dshctl host run` whose profile layer is a symlink into a ConfigMap volume laid out as the
kubelet does (tests/host/kubelet.py), then swaps ROUNDS generations (alternating a row's config, the old
generation removed after each), timing each from the rename of `..data` to the host's `reload/applied`
log line (its own timestamp). Run once with native events and once with `WATCHFILES_FORCE_POLLING=1`;
prints p50, p95 and max for each (docs/performance.md, "ConfigMap swaps").

    .venv/bin/python benchmarks/bench_configmap_swap.py [--rounds 40]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.host.helpers import HostProcess, make_home, user_file  # noqa: E402
from tests.host.kubelet import ConfigMapVolume  # noqa: E402

ROWS = """\
    - id: c
      name: ./plugins/boom.py
      config: {tag: old}
"""


def layer(tag: str) -> dict:
    return {"cordis.patch.yml": f"- id: c\n  config: {{tag: {tag}}}\n"}


def latencies(rounds: int, polling: bool) -> list[float]:
    if polling:
        os.environ["WATCHFILES_FORCE_POLLING"] = "1"
    else:
        os.environ.pop("WATCHFILES_FORCE_POLLING", None)
    with tempfile.TemporaryDirectory() as tmp:
        home = make_home(Path(tmp), ROWS)
        volume = ConfigMapVolume(Path(tmp) / "config", layer("r0"))
        os.symlink(volume.directory / "cordis.patch.yml", user_file(home))
        out = []
        with HostProcess(home) as host:
            for i in range(1, rounds + 1):
                swapped = time.time()
                old = volume.swap(layer(f"r{i}"))
                event = host.wait_for("reload/applied")
                out.append((event["ts"] - swapped) * 1000)
                volume.remove(old)
                time.sleep(0.05)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()
    for polling in (False, True):
        ms = sorted(latencies(args.rounds, polling))
        p95 = ms[max(0, int(len(ms) * 0.95) - 1)]
        mode = "polling" if polling else "native"
        print(f"{mode:8} swap -> reload/applied over {len(ms)} swaps: p50 {statistics.median(ms):.1f} ms, "
              f"p95 {p95:.1f} ms, max {ms[-1]:.1f} ms (load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
