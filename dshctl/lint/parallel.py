"""Lint many files on several cores: each job is one file; results come back in job order, so the
output is the same for every ``-j``."""
from __future__ import annotations

import os
from typing import Any, Mapping, Sequence

from dshctl.core.lintcache import Job, Result
from dshctl.lint.pipeline import lint_file

# Below this many files a pool's start-up (forking, importing nothing new, pickling results) costs
# more than it saves.
MIN_FILES_PER_WORKER = 8


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))  # the cores this process may run on
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def lint_jobs(jobs: Sequence[Job], rule_config: Mapping[str, Any] | None, workers: int) -> list[Result]:
    workers = max(1, min(workers, len(jobs) // MIN_FILES_PER_WORKER))
    if workers == 1:
        return [lint_file(path, explicit, rule_config, data) for path, explicit, data in jobs]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from dshctl.core import schemas

    for name in schemas.SCHEMAS:  # compiled once here, inherited by every forked worker
        schemas._validator(name)

    # fork: the workers inherit the imported parser, rules and compiled schemas instead of redoing it.
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
        chunk = max(1, len(jobs) // (workers * 4))
        return list(pool.map(_lint_one, jobs, [rule_config] * len(jobs), chunksize=chunk))


def _lint_one(job: Job, rule_config: Mapping[str, Any] | None) -> Result:
    path, explicit, data = job
    return lint_file(path, explicit, rule_config, data)
