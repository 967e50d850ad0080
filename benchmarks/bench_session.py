"""Session log figures (docs/performance.md): cold restore of a 10,000-event session, and appends.

    .venv/bin/python benchmarks/bench_session.py [--events 10000] [--runs 15]

The session is what the agent loop writes: turns of one prompt, a request header, 20 streamed text
deltas, an assistant message with a tool call, the call and its result, committed once per turn
(one Zstandard frame per turn), until it holds the asked number of events. "restore" is
``SessionStore.open`` (read the file, check every frame's checksum, expand packed chunk rows,
re-validate every event with dsh's rules, take the writer lock) plus ``derive_history``; "read" is
the read-only path ``dshctl session show`` uses. Both encodings; median and worst wall time of the runs, and the median CPU time.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dshctl.agents.session.api import SessionStore, derive_history  # noqa: E402
from tests.agents.session_helpers import write_turn  # noqa: E402

TARGET_MS = 200.0


def build(home: Path, compression: str, events: int) -> tuple[str, float, int]:
    store = SessionStore(home, compression=compression)
    log = store.create(cwd="/bench", session_id=f"bench-{compression}")
    turn = 0
    started = time.perf_counter()
    while len(log.events) < events:
        turn += 1
        write_turn(log, turn, f"prompt {turn} " + "lorem ipsum " * 20, deltas=20)
        log.commit()
    append_s = time.perf_counter() - started
    count = len(log.events)
    log.close()
    return log.id, append_s / count * 1e6, count


def time_ms(fn, runs: int) -> tuple[float, float, float]:
    """Median and worst wall time, and median CPU time (what contention from other processes hides)."""
    wall, cpu = [], []
    for _ in range(runs):
        started, started_cpu = time.perf_counter(), time.process_time()
        fn()
        wall.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - started_cpu) * 1000)
    return statistics.median(wall), max(wall), statistics.median(cpu)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for compression in ("zstd", "none"):
            home = Path(tmp) / compression
            session_id, append_us, count = build(home, compression, args.events)
            store = SessionStore(home, compression=compression)
            size = store.find(session_id).stat().st_size

            def restore():
                log = store.open(session_id)
                derive_history(log.events)
                log._durable = len(log.events)       # drop the pending seed marker: no write per run
                log.close()

            restore_med, restore_max, restore_cpu = time_ms(restore, args.runs)
            read_med, read_max, _ = time_ms(lambda: store.read(session_id), args.runs)
            list_med, _, _ = time_ms(store.list, args.runs)
            print(f"{compression:>4}: {count} events, {size / 1024:.0f} KiB on disk, "
                  f"append+commit {append_us:.1f} us/event")
            print(f"      restore (open + history) median {restore_med:.1f} ms, worst {restore_max:.1f} ms, "
                  f"CPU {restore_cpu:.1f} ms (target <= {TARGET_MS:.0f} ms: {restore_med / TARGET_MS:.2f} of it)")
            print(f"      read-only (session show) median {read_med:.1f} ms, worst {read_max:.1f} ms; "
                  f"list (header only) {list_med:.2f} ms")


if __name__ == "__main__":
    main()
