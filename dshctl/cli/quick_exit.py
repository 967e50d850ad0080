"""Leave the process without the interpreter's teardown of its modules.

A `plugin add` imports ~230 modules, and tearing them down at exit (each module's namespace
cleared, each class freed, the collector run over all of it) costs ~30 ms of CPU on the bench
machine: a tenth of a cold add, a quarter of a warm one (docs/performance.md). dshctl needs none of
it, since its files are closed where they are written. What an exit does that matters is kept:
``atexit`` handlers run (logging's flush, weakref finalizers such as a TemporaryDirectory's
cleanup) and the standard streams are flushed. The normal exit is taken whenever skipping the
teardown could change anything: another non-daemon thread still running, a profiler or tracer
that writes its report at exit (cProfile, coverage), or a stream that cannot be flushed (the
interpreter then reports it as it always has).
"""
from __future__ import annotations

import atexit
import os
import sys


def leave(code: int):
    """Exit with ``code``; never returns (no ``typing.NoReturn``: typing costs `--version` 3 ms)."""
    if _teardown_matters():
        sys.exit(code)
    atexit._run_exitfuncs()  # what the interpreter runs at exit; it forgets them once run
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        sys.exit(code)
    os._exit(code)


def _teardown_matters() -> bool:
    if sys.getprofile() is not None or sys.gettrace() is not None:
        return True
    monitoring = getattr(sys, "monitoring", None)  # 3.12+: coverage's tracer
    if monitoring is not None and any(monitoring.get_tool(i) for i in range(6)):
        return True
    threading = sys.modules.get("threading")  # not imported: no thread was started through it
    if threading is None:
        return False
    main = threading.main_thread()
    return any(t is not main and not t.daemon and t.is_alive() for t in threading.enumerate())
