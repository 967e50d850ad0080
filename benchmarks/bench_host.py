"""Host reload latency as users run it: from saving a patch file to `host run` saying the new tree runs,
vs a full restart of `host run`.

    .venv/bin/python benchmarks/bench_host.py [--sizes 1000] [--edits 25] [--source DIR]
    .venv/bin/python benchmarks/bench_host.py --in-process [--sizes 50,500,2000]

Default (issue 30): for each profile size N (rows of a trivial Python plugin), starts the real
``dshctl host run --log-format json`` as a child process (module reload on, as ``host run`` always
runs it: both watchers, the control socket), then saves the profile's user layer ``--edits`` times,
each time changing one row's config, and measures wall time from just before the save until the
host's ``reload/applied`` line is read from its stdout (the line is written after the new tree runs
and after the module watcher took in the new modules). The host's CPU (user+sys, /proc) over the edit
phase is reported per edit (it includes the idle watchers between saves). Then a full restart: SIGTERM,
wait for the exit, start a new ``host run`` and wait for its ``host/ready`` line (interpreter start,
imports, compose, boot of every row). ``--source DIR`` runs the dshctl found in DIR (PYTHONPATH), to
compare a checkout of another commit with the same venv.

``--in-process``: the earlier figure (issue 13): a ``Host`` in this process, polled every 0.5 ms until
the row's fiber is ACTIVE with the new config; ``--no-module-reload`` as before issue 30.
"""
from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import queue
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PLUGIN = "name = 'noop'\nschema = {'type': 'object', 'default': {}}\n\ndef apply(ctx, config):\n    pass\n"
TICK = os.sysconf("SC_CLK_TCK")


def make_home(root: Path, rows: int) -> Path:
    home = root / "home"
    pdir = home / "profiles" / "bench"
    bundle = pdir / "node_modules" / "@bench" / "rows"
    (bundle / "plugins").mkdir(parents=True)
    (pdir / "package.json").write_text(json.dumps({"dsh": {"profile": {"bundles": ["@bench/rows"]}}}))
    (bundle / "package.json").write_text(json.dumps({"name": "@bench/rows", "files": ["cordis.patch.yml"],
                                                     "dsh": {"bundle": {"patch": "cordis.patch.yml"}}}))
    (bundle / "plugins" / "noop.py").write_text(PLUGIN)
    lines = ["- insert:"]
    for i in range(rows):
        lines += [f"    - id: r{i}", "      name: ./plugins/noop.py", f"      config: {{n: {i}}}"]
    (bundle / "cordis.patch.yml").write_text("\n".join(lines) + "\n")
    return home


def save(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp~")
    tmp.write_text(text)
    os.replace(tmp, path)


def edit_text(k: int, rows: int) -> tuple[str, int]:
    value = 10_000 + k
    return f"- id: r{(k * 7) % rows}\n  config: {{n: {value}}}\n", value


# ---- through `host run` ---------------------------------------------------------------------------------
class HostProcess:
    """``dshctl host run --log-format json`` as a child; its stdout lines, time-stamped on arrival."""

    def __init__(self, home: Path, source: Path | None):
        env = dict(os.environ, PYTHONUNBUFFERED="1", NO_COLOR="1")
        if source is not None:
            env["PYTHONPATH"] = str(source)
        self.proc = subprocess.Popen([sys.executable, "-m", "dshctl", "--home", str(home), "--profile", "bench",
                                      "host", "run", "--log-format", "json"],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True,
                                     cwd=source)   # `python -m` puts the working directory first
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            self.lines.put((time.perf_counter(), record))
        self.lines.put((time.perf_counter(), None))

    def wait_for(self, event: str, timeout: float = 120.0) -> tuple[float, dict]:
        deadline = time.monotonic() + timeout
        while True:
            at, record = self.lines.get(timeout=max(0.1, deadline - time.monotonic()))
            if record is None:
                raise SystemExit(f"host run exited (code {self.proc.wait()}) before {event}")
            if record.get("event") == event:
                return at, record
            if record.get("event", "").startswith("reload/") and record["event"] in ("reload/failed",
                                                                                     "reload/rejected"):
                raise SystemExit(f"unexpected {record['event']}: {record.get('message')}")

    def cpu_s(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / TICK   # utime, stime

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(60)


def measure_host_run(rows: int, edits: int, source: Path | None) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        home = make_home(Path(tmp), rows)
        user = home / "profiles" / "bench" / "cordis.patch.yml"
        host = HostProcess(home, source)
        host.wait_for("host/ready")
        time.sleep(0.3)   # the config watcher's initial scan (a no-op) is done
        latencies = []
        cpu_before = host.cpu_s()
        phase = time.perf_counter()
        for k in range(edits):
            text, value = edit_text(k, rows)
            started = time.perf_counter()
            save(user, text)
            at, record = host.wait_for("reload/applied")
            latencies.append((at - started) * 1000)
            time.sleep(0.05)   # let the watchers go quiet between saves
        cpu_per_edit = (host.cpu_s() - cpu_before) * 1000 / edits
        idle_s = time.perf_counter() - phase
        restarts = []
        for _ in range(3):
            started = time.perf_counter()
            host.stop()
            host = HostProcess(home, source)
            at, _ = host.wait_for("host/ready")
            restarts.append((at - started) * 1000)
        host.stop()
    return {"rows": rows, "reload_median_ms": statistics.median(latencies),
            "reload_p90_ms": sorted(latencies)[max(0, int(len(latencies) * 0.9) - 1)],
            "restart_median_ms": statistics.median(restarts), "cpu_per_edit_ms": cpu_per_edit,
            "phase_s": idle_s}


# ---- in process (issue 13's figure) ---------------------------------------------------------------------
async def measure_in_process(rows: int, edits: int, module_reload: bool) -> dict:
    from dshctl.host.hostlog import HostLog
    from dshctl.host.runner import Host, HostOptions
    from dshctl.runtime import State

    async def boot(home: Path) -> Host:
        host = Host(HostOptions(home=home, profile="bench", module_reload=module_reload),
                    HostLog("json", io.StringIO()))
        await host.boot()
        await host.serve()
        return host

    with tempfile.TemporaryDirectory() as tmp:
        home = make_home(Path(tmp), rows)
        host = await boot(home)
        user = home / "profiles" / "bench" / "cordis.patch.yml"
        latencies = []
        for k in range(edits):
            text, value = edit_text(k, rows)
            target = f"r{(k * 7) % rows}"
            started = time.perf_counter()
            save(user, text)
            while True:
                fiber = host.loader.resolve(target).fiber
                if fiber is not None and fiber.state is State.ACTIVE and (fiber.config or {}).get("n") == value:
                    break
                await asyncio.sleep(0.0005)
            latencies.append((time.perf_counter() - started) * 1000)
            await asyncio.sleep(0.05)  # let the watcher go quiet between saves
        restarts = []
        for _ in range(3):
            started = time.perf_counter()
            await host.shutdown()
            host = await boot(home)
            restarts.append((time.perf_counter() - started) * 1000)
        await host.shutdown()
    return {"rows": rows, "reload_median_ms": statistics.median(latencies),
            "reload_p90_ms": sorted(latencies)[max(0, int(len(latencies) * 0.9) - 1)],
            "restart_median_ms": statistics.median(restarts)}


# issue 30: save -> applied under `host run`, 1 row of 1,000 changed
TARGET_ROWS, TARGET_MS, TARGET_RATIO = 1000, 20.0, 40.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000")
    parser.add_argument("--edits", type=int, default=25)
    parser.add_argument("--source", type=Path, default=None, help="run the dshctl in this directory")
    parser.add_argument("--in-process", action="store_true", help="a Host in this process (issue 13's figure)")
    parser.add_argument("--no-module-reload", action="store_true", help="with --in-process: as before issue 30")
    args = parser.parse_args()
    mode = ("in process" + (", module reload off" if args.no_module_reload else "")) if args.in_process \
        else f"through `dshctl host run`{f' from {args.source}' if args.source else ''}"
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores; {mode}")
    print(f"{'rows':>6} {'reload median':>14} {'reload p90':>11} {'restart median':>15} {'restart/reload':>15}"
          + ("" if args.in_process else f" {'host CPU/edit':>14}"))
    for size in (int(s) for s in args.sizes.split(",")):
        if args.in_process:
            r = asyncio.run(measure_in_process(size, args.edits, not args.no_module_reload))
        else:
            r = measure_host_run(size, args.edits, args.source)
        ratio = r["restart_median_ms"] / r["reload_median_ms"]
        print(f"{r['rows']:>6} {r['reload_median_ms']:>11.1f} ms {r['reload_p90_ms']:>8.1f} ms "
              f"{r['restart_median_ms']:>12.1f} ms {ratio:>14.1f}x"
              + ("" if args.in_process else f" {r['cpu_per_edit_ms']:>11.1f} ms"))
        if size == TARGET_ROWS:
            met = r["reload_median_ms"] <= TARGET_MS and ratio >= TARGET_RATIO
            print(f"target: reload of 1 row in {TARGET_ROWS:,} <= {TARGET_MS:.0f} ms and >= {TARGET_RATIO:.0f}x "
                  f"faster than a restart: {r['reload_median_ms']:.1f} ms, {ratio:.1f}x: "
                  f"{'met' if met else 'NOT MET'}")
    print(f"load average after {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
