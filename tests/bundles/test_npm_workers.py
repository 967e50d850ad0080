"""npm/workers.py, the small pool that replaced ThreadPoolExecutor on the cold path: results and
exceptions come back to whoever waits, at most max_workers threads run, shutdown drops jobs not
started (Cancelled) and waits for the running ones, a with block runs every job."""
from __future__ import annotations

import threading
import time

import pytest

from dshctl.bundles.npm.workers import Cancelled, Job, Workers


def test_results_and_exceptions_reach_the_caller():
    with Workers(3, "t") as pool:
        jobs = [pool.submit(lambda x: x * x, i) for i in range(20)]
        bad = pool.submit(lambda: 1 / 0)
        assert [j.result() for j in jobs] == [i * i for i in range(20)]
        with pytest.raises(ZeroDivisionError):
            bad.result()
    assert Job.finished("x").result() == "x"


def test_no_more_threads_than_asked_and_they_run_in_parallel():
    running, peak, lock = [0], [0], threading.Lock()
    both = threading.Barrier(2, timeout=10)

    def work(i):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        if i < 2:
            both.wait()  # two jobs at once, or this times out
        time.sleep(0.01)
        with lock:
            running[0] -= 1

    with Workers(2, "t") as pool:
        jobs = [pool.submit(work, i) for i in range(8)]
    for job in jobs:
        job.result()
    assert peak[0] == 2 and len([t for t in threading.enumerate() if t.name.startswith("t_")]) == 0


def test_shutdown_cancels_what_has_not_started_and_waits_for_the_rest():
    started, release = threading.Event(), threading.Event()
    pool = Workers(1, "t")
    first = pool.submit(lambda: (started.set(), release.wait(10), "done")[2])
    later = [pool.submit(lambda: "ran") for _ in range(3)]
    assert started.wait(10)
    threading.Timer(0.05, release.set).start()
    pool.shutdown()
    assert first.result() == "done"
    for job in later:
        with pytest.raises(Cancelled):
            job.result()
    with pytest.raises(RuntimeError):
        pool.submit(lambda: None)


def test_leaving_a_with_block_runs_every_job():
    with Workers(1, "t") as pool:
        jobs = [pool.submit(time.sleep, 0.001) for _ in range(10)]
    assert all(j._done.is_set() for j in jobs)


def test_a_pool_nobody_shut_down_still_lets_the_process_exit_after_its_running_job():
    import subprocess
    import sys

    script = ("import time\n"
              "from dshctl.bundles.npm.workers import Workers\n"
              "pool = Workers(1, 't')\n"
              "pool.submit(lambda: (time.sleep(0.3), print('ran', flush=True)))\n"
              "for _ in range(5): pool.submit(print, 'never')\n"
              "time.sleep(0.05)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and out.stdout.split() == ["ran"], out
