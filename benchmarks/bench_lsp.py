"""`dshctl lsp` latency (docs/performance.md): a 500-row entry list open in a real `dshctl lsp` process;
the time from sending one `textDocument/didChange` (a one-character edit, as a keystroke sends it) to
receiving its `publishDiagnostics`, over the pipes, as an editor sees it.

    .venv/bin/python benchmarks/bench_lsp.py [--rows 500] [--runs 200] [--base DIR]

Every edit flips one row's `disabled: true` <-> `disabled: "yes"`, so each publish carries a real
finding or clears it (the server lints the whole buffer each time, as `dshctl lint -` would). A burst
sends five such edits 5 ms apart (a fast typist, key repeat, a paste in pieces) and times the last one
to the publish of its version.

``--base DIR`` also starts the server of another checkout (e.g. ``git worktree add /tmp/base main``)
and interleaves the two edit by edit, so both see the same machine load.
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

from tests.editors.lsp_client import LspClient  # noqa: E402


def document(rows: int) -> str:
    return "".join(f"- id: row-{n}\n  name: '@demo/plugin-{n % 7}'\n  disabled: true\n"
                   f"  config:\n    port: {3000 + n}\n    host: 127.0.0.1\n" for n in range(rows))


class Session:
    """One server with the document open, and its timings."""

    def __init__(self, label: str, argv: list[str], tmp: Path, rows: int, env: dict | None = None):
        self.label, self.path = label, tmp / label / "cordis.yml"
        self.path.parent.mkdir()
        self.path.write_text(document(rows))
        self.client = LspClient(argv, {}, self.path.parent, env=env)
        self.client.open(self.path)
        self.line = 6 * (rows // 2) + 2  # the middle row's disabled line
        self.version, self.bad = 1, False
        self.single: list[float] = []
        self.burst: list[float] = []
        self.cpu_at_start = self.cpu()

    def cpu(self) -> float:
        """The server process's CPU time so far (user + system, seconds), from /proc."""
        fields = Path(f"/proc/{self.client.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def _flip(self) -> dict:
        self.bad = not self.bad
        new, old = ('"yes"', "true") if self.bad else ("true", '"yes"')
        self.version += 1
        return {"range": {"start": {"line": self.line, "character": 12},
                          "end": {"line": self.line, "character": 12 + len(old)}}, "text": new}

    def edit(self) -> None:
        change = self._flip()
        t0 = time.perf_counter()
        found = self.client.change(self.path, self.version, [change])
        self.single.append(time.perf_counter() - t0)
        assert bool(found) == self.bad, found

    def edit_burst(self, keys: int = 5, gap: float = 0.005) -> None:
        uri = self.path.as_uri()
        for n in range(keys):
            change = self._flip()
            t0 = time.perf_counter()
            self.client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": self.version},
                                                          "contentChanges": [change]})
            if n < keys - 1:
                time.sleep(gap)
        deadline = time.monotonic() + 30
        with self.client._cond:
            while self.client.versions.get(uri) != self.version:
                assert time.monotonic() < deadline, "no publish of the last version"
                self.client._cond.wait(1)
            found = self.client.diagnostics[uri]
        self.burst.append(time.perf_counter() - t0)
        assert bool(found) == self.bad, found


def pct(times: list[float], q: float) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))] * 1000


def report(s: Session) -> None:
    edits = len(s.single) + 5 * len(s.burst)
    print(f"{s.label:5} server CPU per edit (all edits): {(s.cpu_end - s.cpu_at_start) * 1000 / edits:.1f} ms")
    for name, times in (("change -> publish", s.single), ("burst of 5, last -> publish", s.burst)):
        print(f"{s.label:5} {name:28} p50 {statistics.median(times) * 1000:6.1f} ms  p90 {pct(times, .9):6.1f}"
              f"  p99 {pct(times, .99):6.1f}  max {max(times) * 1000:6.1f}  (n={len(times)})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=500)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--base", type=Path, help="another checkout's tree, run side by side")
    args = parser.parse_args()
    dshctl = Path(sys.executable).parent / "dshctl"
    with tempfile.TemporaryDirectory() as tmp:
        sessions = [Session("this", [str(dshctl), "lsp"], Path(tmp), args.rows)]
        if args.base is not None:
            site = next(p for p in sys.path if p.endswith("site-packages"))
            env = {**os.environ, "PYTHONPATH": f"{args.base.resolve()}{os.pathsep}{site}"}
            argv = [sys.executable, "-S", "-c", "import os; os.chdir('/'); "
                    "from dshctl.lsp.server import serve; serve()"]
            sessions.append(Session("base", argv, Path(tmp), args.rows, env=env))
        try:
            for _ in range(args.runs):
                for s in sessions:
                    s.edit()
            for _ in range(max(args.runs // 5, 1)):
                for s in sessions:
                    s.edit_burst()
            for s in sessions:
                s.cpu_end = s.cpu()
        finally:
            for s in sessions:
                s.client.close()
    print(f"rows: {args.rows}, lines: {document(args.rows).count(chr(10))}, load average: "
          f"{os.getloadavg()[0]:.1f}")
    for s in sessions:
        report(s)


if __name__ == "__main__":
    main()
