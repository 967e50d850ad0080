"""Long sessions (issue 30): `dshctl session show` and the first turn after a host restart, on a
10,005-event session vs a small one.

    .venv/bin/python benchmarks/bench_session_long.py [--runs 7] [--events 10000] [--source DIR]

The sessions are what the agent loop writes (tests/agents/session_helpers.write_turn: a prompt, a
request header, 20 streamed deltas, an assistant message with a tool call, the call and its result,
one commit per turn), one of ~10,000 events and one of one turn. ``show``: CPU (user+sys) of the
`dshctl session show ID` process (text and ``-f json``), small and long interleaved. ``first turn``:
a host booted in process (the agents and agent-loop rows, a model that answers at once), then the
host's CPU from asking for the session (restored from its log) to the end of one turn on it; the
model's own CPU is inside but tiny. ``--source DIR`` runs the dshctl in DIR (PYTHONPATH) for `show`.
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


def build(home: Path, session_id: str, events: int) -> str:
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
    return count


def child_cpu_ms(cmd: list[str], env: dict, cwd: Path | None) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, check=True, cwd=cwd)  # `python -m`: cwd first
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000


def show_figures(home: Path, runs: int, source: Path | None) -> dict:
    env = dict(os.environ, NO_COLOR="1")
    if source is not None:
        env["PYTHONPATH"] = str(source)
    out = {}
    for fmt in ("text", "json"):
        cpu = {"small": [], "long": []}
        for _ in range(runs):
            for name in ("small", "long"):   # interleaved: the machine's load hits both alike
                cmd = [sys.executable, "-m", "dshctl", "session", "show", f"bench-{name}", "--home", str(home),
                       "-f", fmt]
                cpu[name].append(child_cpu_ms(cmd, env, source))
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


def host_turn_figures(root: Path, events: int, runs: int) -> dict:
    """The first turn after a restart as users run it: a fresh `dshctl host run` (scripted model),
    then `dshctl agent run --session ID` from another process; the host's CPU over that run."""
    from tests.agents.test_tools_dsh_host import home_with
    from tests.host.helpers import DSHCTL, HostProcess
    cpu = {"small": [], "long": []}
    for k in range(runs):
        for name, count in (("small", 1), ("long", events)):
            home = home_with(root / f"host-{name}-{k}", [{"text": "answer"}] * 2)
            build(home, f"bench-{name}", count)
            with HostProcess(home) as host:
                time.sleep(0.5)   # the watchers' start-up settles
                before = host_cpu_s(host.proc.pid)
                done = subprocess.run([DSHCTL, "--home", str(home), "agent", "run", "--profile", "p", "--session",
                                       f"bench-{name}", "one more"], capture_output=True, text=True)
                assert done.returncode == 0, done.stderr
                cpu[name].append((host_cpu_s(host.proc.pid) - before) * 1000)
    return {k: statistics.median(v) for k, v in cpu.items()}


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
    args = parser.parse_args()
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores"
          + (f"; show from {args.source}" if args.source else ""))
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        small, long = build(home, "bench-small", 1), build(home, "bench-long", args.events)
        print(f"sessions: {small} and {long} events")
        for fmt, f in show_figures(home, args.runs, args.source).items():
            extra = f["long"] - f["small"]
            print(f"session show -f {fmt}: small {f['small']:.0f} ms, long {f['long']:.0f} ms CPU: +{extra:.0f} ms "
                  f"(target <= +{SHOW_TARGET_MS:.0f}: {'met' if extra <= SHOW_TARGET_MS else 'NOT MET'})")
        if not args.skip_turn:
            t = host_turn_figures(Path(tmp), args.events, args.runs)
            print(f"first turn after a restart through `host run` + `agent run --session` (host CPU): "
                  f"small {t['small']:.0f} ms, long {t['long']:.0f} ms (target <= {TURN_TARGET_MS:.0f} ms: "
                  f"{'met' if t['long'] <= TURN_TARGET_MS else 'NOT MET'})")
            t = turn_figures(Path(tmp), args.events, args.runs)
            print(f"first turn after a restart (host CPU, open + one turn): small {t['small']:.1f} ms, "
                  f"long {t['long']:.1f} ms (target <= {TURN_TARGET_MS:.0f} ms: "
                  f"{'met' if t['long'] <= TURN_TARGET_MS else 'NOT MET'})")
    print(f"load average after {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
