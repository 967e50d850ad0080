"""Long sessions (issue 30): `dshctl session show` and the first turn after a host restart, on a
10,005-event session vs a small one.

    .venv/bin/python benchmarks/bench_session_long.py [--runs 7] [--events 10000] [--source DIR]

The sessions are what the agent loop writes (tests/agents/session_helpers.write_turn: a prompt, a
request header, 20 streamed deltas, an assistant message with a tool call, the call and its result,
one commit per turn), one of ~10,000 events and one of one turn. ``show``: CPU (user+sys) of the
`dshctl session show ID` process (text and ``-f json``), small and long interleaved. ``first turn``:
a host booted in process (the agents and agent-loop rows, a model that answers at once), then the
host's CPU from asking for the session (restored from its log) to the end of one turn on it; the
model's own CPU is inside but tiny. ``--source DIR`` runs the dshctl in DIR (PYTHONPATH) for `show`
and, with ``--compare``, as the "before" host interleaved with this tree's.

Each session is closed and then checkpointed (``SessionStore.checkpoint``), as the host's agent
registry does when it retires a session or stops; ``long-nockpt`` is the same long session without
its ``.restore`` file (a log dsh wrote, or a crash before any checkpoint). The processes run with
bytecode written (a first untimed run compiles it), as an installed dshctl has it: the shells here set
``PYTHONDONTWRITEBYTECODE``, which made every lazily imported module compile on the first turn.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

SHOW_TARGET_MS, TURN_TARGET_MS = 60.0, 40.0


def build(home: Path, session_id: str, events: int, checkpointed: bool = True) -> str:
    from dshctl.agents.session.api import SessionStore
    from tests.agents.session_helpers import write_turn
    log = SessionStore(home).create(cwd="/bench", session_id=session_id)
    turn = 0
    while turn == 0 or len(log.events) < events:
        turn += 1
        write_turn(log, turn, f"prompt {turn} " + "lorem ipsum " * 20, deltas=20)
        log.commit()
    count = len(log.events)
    log.close()
    if checkpointed:
        SessionStore(home).checkpoint(session_id)   # what the host's registry does on retiring it
    return count


def child_cpu_ms(cmd: list[str], env: dict, cwd: Path | None) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, check=True, cwd=cwd)  # `python -m`: cwd first
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000


def show_figures(home: Path, runs: int, sources: dict) -> dict:
    out = {}
    for label, source in sources.items():   # untimed: bytecode
        subprocess.run([sys.executable, "-m", "dshctl", "--version"], env=_env(source), cwd=source,
                       stdout=subprocess.DEVNULL, check=True)
    for fmt in ("text", "json"):
        cpu = {(label, name): [] for label in sources for name in ("small", "long")}
        for _ in range(runs):
            for name in ("small", "long"):   # interleaved: the machine's load hits both alike
                for label, source in sources.items():
                    cmd = [sys.executable, "-m", "dshctl", "session", "show", f"bench-{name}", "--home",
                           str(home), "-f", fmt]
                    cpu[label, name].append(child_cpu_ms(cmd, dict(_env(source), NO_COLOR="1"), source))
        out[fmt] = {k: statistics.median(v) for k, v in cpu.items()}
    return out


async def first_turn(home: Path, session_id: str) -> float:
    from bench_loop import with_host

    async def job(host) -> float:
        agents = host.root.get("agents")
        started = time.process_time()
        agent = await agents.open(session_id)
        agent.followup("one more")
        await agent.when_idle()
        return (time.process_time() - started) * 1000
    return await with_host(home, job)


def host_cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")   # utime, stime


def host_threads_cpu(pid: int) -> dict[str, float]:
    """Each thread's CPU (s) at nanosecond resolution (``/proc/PID/task/TID/schedstat``): /proc's
    utime+stime tick at 10 ms, as coarse as the figure itself."""
    out = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            out[task.name] = int((task / "schedstat").read_text().split()[0]) / 1e9
        except (OSError, ValueError):
            pass
    return out


def cpu_between(before: dict, after: dict, ticks: float) -> float:
    """The process's CPU between two samples: the threads' sum when none of them exited in between
    (an exited thread's time leaves the sum), else the 10 ms-tick figure."""
    if set(before) - set(after):
        return ticks
    return sum(after.values()) - sum(before.values())


def _host_class(source: Path | None):
    from tests.host.helpers import HostProcess

    class SourceHost(HostProcess):
        """``host run`` from ``source`` (``python -m dshctl`` there), else this tree's venv."""
        def __init__(self, home: Path):
            if source is None:
                super().__init__(home)
                return
            import queue
            import threading
            self.home, self.profile = home, "p"
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "dshctl", "--home", str(home), "host", "run", "--profile", "p",
                 "--log-format", "json", "--apply-timeout", "1"], cwd=source, env=_env(source),
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self.lines, self.seen = queue.Queue(), []
            threading.Thread(target=self._pump, daemon=True).start()
    return SourceHost


def _env(source: Path | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if source is not None:
        env["PYTHONPATH"] = str(source)
    return env


def _client(source: Path | None) -> list[str]:
    from tests.host.helpers import DSHCTL
    return [DSHCTL] if source is None else [sys.executable, "-m", "dshctl"]


SESSIONS = (("small", 1, True), ("long", None, True), ("long-nockpt", None, False))


def one_host_turn(root: Path, name: str, count: int, checkpointed: bool, source: Path | None) -> float:
    from tests.agents.test_tools_dsh_host import home_with
    home = home_with(root, [{"text": "answer"}] * 2)
    build(home, f"bench-{name}", count, checkpointed)
    with _host_class(source)(home) as host:
        time.sleep(0.5)   # the watchers' start-up settles
        before, threads = host_cpu_s(host.proc.pid), host_threads_cpu(host.proc.pid)
        done = subprocess.run([*_client(source), "--home", str(home), "agent", "run", "--profile", "p",
                               "--session", f"bench-{name}", "one more"], capture_output=True, text=True,
                              cwd=source, env=_env(source))
        assert done.returncode == 0, done.stderr
        ticks = host_cpu_s(host.proc.pid) - before
        return cpu_between(threads, host_threads_cpu(host.proc.pid), ticks) * 1000


def host_turn_figures(root: Path, events: int, runs: int, sources: dict) -> dict:
    """The first turn after a restart as users run it: a fresh `dshctl host run` (scripted model),
    then `dshctl agent run --session ID` from another process; the host's CPU over that run. Each
    source (label -> dir or None for this tree) runs right after the other, session by session."""
    for label, source in sources.items():      # untimed: writes the bytecode both trees import
        one_host_turn(root / f"warm-{label}", "small", 1, True, source)
    cpu = {(label, name): [] for label in sources for name, _, _ in SESSIONS}
    for k in range(runs):
        for name, count, checkpointed in SESSIONS:
            for label, source in sources.items():
                cpu[label, name].append(one_host_turn(root / f"host-{label}-{name}-{k}", name,
                                                      count or events, checkpointed, source))
    return {key: statistics.median(v) for key, v in cpu.items()}


def turn_figures(root: Path, events: int, runs: int) -> dict:
    from bench_loop import make_home
    cpu = {"small": [], "long": []}
    for k in range(runs):
        for name, count in (("small", 1), ("long", events)):
            home = make_home(root / f"turn-{name}-{k}", 0, 0, 0)
            build(home, f"bench-{name}", count)
            cpu[name].append(asyncio.run(first_turn(home, f"bench-{name}")))
    return {k: statistics.median(v) for k, v in cpu.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--source", type=Path, default=None)
    parser.add_argument("--skip-turn", action="store_true")
    parser.add_argument("--skip-show", action="store_true")
    parser.add_argument("--compare", action="store_true", help="first turn: --source as before, this tree after")
    args = parser.parse_args()
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores"
          + (f"; show from {args.source}" if args.source else ""))
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        small, long = build(home, "bench-small", 1), build(home, "bench-long", args.events)
        print(f"sessions: {small} and {long} events")
        sources = {"before": args.source, "after": None} if args.compare else {"this tree": args.source}
        for fmt, f in ({} if args.skip_show else show_figures(home, args.runs, sources)).items():
            for label in sources:
                extra = f[label, "long"] - f[label, "small"]
                print(f"[{label}] session show -f {fmt}: small {f[label, 'small']:.0f} ms, long "
                      f"{f[label, 'long']:.0f} ms CPU: +{extra:.0f} ms (target <= +{SHOW_TARGET_MS:.0f}: "
                      f"{'met' if extra <= SHOW_TARGET_MS else 'NOT MET'})")
        if not args.skip_turn:
            t = host_turn_figures(Path(tmp), args.events, args.runs, sources)
            for label in sources:
                print(f"[{label}] first turn after a restart through `host run` + `agent run --session` "
                      f"(host CPU, median of {args.runs}): small {t[label, 'small']:.1f} ms, long "
                      f"{t[label, 'long']:.1f} ms, long without a checkpoint {t[label, 'long-nockpt']:.1f} ms "
                      f"(target <= {TURN_TARGET_MS:.0f} ms: {'met' if t[label, 'long'] <= TURN_TARGET_MS else 'NOT MET'})")
            t = turn_figures(Path(tmp), args.events, args.runs)
            print(f"first turn after a restart (host CPU, open + one turn): small {t['small']:.1f} ms, "
                  f"long {t['long']:.1f} ms (target <= {TURN_TARGET_MS:.0f} ms: "
                  f"{'met' if t['long'] <= TURN_TARGET_MS else 'NOT MET'})")
    print(f"load average after {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
