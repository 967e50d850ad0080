"""Client-side CPU of ``dshctl agent run`` on a running host (issue 24: first streamed event <= 100 ms).

    .venv/bin/python benchmarks/bench_agent_client.py [--runs 10]

A host (``dshctl host run``, scripted model, dsh's tool rows) runs in its own process; each run of
``dshctl agent run`` is timed by the CPU (user + system) its process used, read with
``resource.getrusage(RUSAGE_CHILDREN)`` — the whole client run (start-up, connect, the turn's stream, exit),
so an upper bound of the CPU to the first streamed event. Each run is paired with one through typer
(``DSHCTL_FASTPATH=0``, what ``agent run`` was before it joined the fast path), interleaved.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.agents.test_tools_dsh_host import home_with  # noqa: E402
from tests.host.helpers import DSHCTL, HostProcess  # noqa: E402


def child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = home_with(Path(tmp), [{"text": "answer"}] * 2 * (args.runs + 1))
        with HostProcess(home):
            figures: dict[str, list[float]] = {"fast path": [], "typer (before)": []}
            for n in range(args.runs + 1):
                for label, fast in (("fast path", "1"), ("typer (before)", "0")):
                    before = child_cpu()
                    done = subprocess.run([DSHCTL, "--home", str(home), "agent", "run", "--profile", "p", "hi"],
                                          capture_output=True, text=True, cwd=tmp,
                                          env=dict(os.environ, DSHCTL_FASTPATH=fast))
                    assert done.returncode == 0, done.stderr
                    if n:            # the first round warms the disk caches
                        figures[label].append((child_cpu() - before) * 1000)
    print(f"dshctl agent run on a running host, client CPU per whole run over {args.runs} runs "
          f"(target <= 100 ms to the first event), load {os.getloadavg()[0]:.1f}:")
    for label, values in figures.items():
        print(f"  {label:<15} median {statistics.median(values):.0f} ms, min {min(values):.0f} ms, "
              f"max {max(values):.0f} ms")


if __name__ == "__main__":
    main()
