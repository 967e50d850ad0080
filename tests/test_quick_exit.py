"""The ``dshctl`` program leaves without tearing down its modules (cli/quick_exit.py), but keeps
what an exit owes: atexit handlers, flushed streams, the exit code; and it exits normally when a
profiler, a tracer or a running thread could lose something by the shortcut."""
from __future__ import annotations

import subprocess
import sys

from dshctl import __version__

# An object whose finalizer runs only at the teardown of __main__'s namespace, an atexit handler,
# then the program as the console script runs it (stdout is a pipe, so block-buffered).
PROGRAM = """\
import atexit, sys
import dshctl.cli.app as app

class Loud:
    def __del__(self):
        print("torn down", flush=True)

keep = Loud()
atexit.register(lambda: print("atexit ran"))
{before}
sys.argv = ["dshctl", *{args!r}]
app.program()
"""


def run(args: list[str], before: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", PROGRAM.format(args=args, before=before)],
                          capture_output=True, text=True, timeout=60)


def test_the_program_skips_the_teardown_but_runs_atexit_and_flushes():
    proc = run(["--version"])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"dshctl {__version__}\natexit ran\n"
    assert proc.stderr == ""


def test_the_exit_code_and_the_error_line_are_kept(tmp_path):
    proc = run(["lint", str(tmp_path / "missing.yml")])
    assert proc.returncode == 1
    assert "no such file or directory" in proc.stderr and "torn down" not in proc.stdout


def test_under_a_profiler_the_exit_is_the_normal_one(tmp_path):
    # cProfile writes its report after the program returns: the shortcut would lose it
    report = tmp_path / "out.prof"
    proc = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(report), "-m", "dshctl",
                           "--version"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout == f"dshctl {__version__}\n"
    assert report.stat().st_size > 0


def test_a_running_non_daemon_thread_is_waited_for():
    before = ("import threading, time\n"
              "threading.Thread(target=lambda: (time.sleep(0.3), print('thread done'))).start()")
    proc = run(["--version"], before=before)
    assert proc.returncode == 0
    assert "thread done" in proc.stdout.splitlines() and "torn down" in proc.stdout


def test_python_dash_m_is_the_program_too(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "dshctl", "lint", str(tmp_path / "none.yml")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and proc.stderr.startswith("dshctl: error:")
