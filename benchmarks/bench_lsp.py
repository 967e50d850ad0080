"""`dshctl lsp` latency (docs/performance.md): a 500-row entry list open in a real `dshctl lsp` process;
the time from sending one `textDocument/didChange` (a one-character edit, as a keystroke sends it) to
receiving its `publishDiagnostics`, over the pipes, as an editor sees it.

    .venv/bin/python benchmarks/bench_lsp.py [--rows 500] [--runs 50]

Every edit flips one row's `disabled: true` <-> `disabled: "yes"`, so each publish carries a real
finding or clears it (the server lints the whole buffer each time, as `dshctl lint -` would).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.editors.lsp_client import LspClient  # noqa: E402


def document(rows: int) -> str:
    return "".join(f"- id: row-{n}\n  name: '@demo/plugin-{n % 7}'\n  disabled: true\n"
                   f"  config:\n    port: {3000 + n}\n    host: 127.0.0.1\n" for n in range(rows))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=500)
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    dshctl = Path(sys.executable).parent / "dshctl"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cordis.yml"
        text = document(args.rows)
        path.write_text(text)
        client = LspClient([str(dshctl), "lsp"], {}, Path(tmp))
        try:
            started = time.perf_counter()
            client.open(path)
            first = time.perf_counter() - started
            line = 6 * (args.rows // 2) + 2  # the middle row's disabled line
            times = []
            for run in range(args.runs):
                bad = run % 2 == 0
                new, old = ('"yes"', "true") if bad else ("true", '"yes"')
                change = {"range": {"start": {"line": line, "character": 12},
                                    "end": {"line": line, "character": 12 + len(old)}}, "text": new}
                t0 = time.perf_counter()
                found = client.change(path, run + 2, [change])
                times.append(time.perf_counter() - t0)
                assert bool(found) == bad, found
        finally:
            client.close()
    times.sort()
    print(f"rows: {args.rows}, lines: {text.count(chr(10))}, runs: {args.runs}")
    print(f"open -> first publish (includes the server's start-up): {first * 1000:.0f} ms")
    print(f"change -> publish: median {statistics.median(times) * 1000:.1f} ms, "
          f"p90 {times[int(len(times) * 0.9) - 1] * 1000:.1f} ms, max {times[-1] * 1000:.1f} ms")


if __name__ == "__main__":
    main()
