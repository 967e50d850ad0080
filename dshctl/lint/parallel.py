"""Lint many files on several cores, with the result cache: each job is one file; results come back
in job order, so the output is the same for every ``-j``."""
from __future__ import annotations

import os
from pathlib import Path

TYPE_CHECKING = False  # typing is not imported at run time (a cached lint's start-up)
if TYPE_CHECKING:
    from typing import Any, Iterable, Mapping, Sequence

from dshctl.core.cache.lint import Job, Result, lint_with_cache
from dshctl.lint.plan import (LintOptions, LintResult, Policies, discover, job_salt, policies_for,
                              rule_config_of)

# Below this many files a pool's start-up (forking, importing nothing new, pickling results) costs
# more than it saves.
MIN_FILES_PER_WORKER = 8
_POLICIES = None   # the run's rule policies, set before forking so every worker inherits them


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))  # the cores this process may run on
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def run_cached(paths: Iterable[str | Path], options: LintOptions, *, jobs: int | None = None,
               use_cache: bool = True) -> LintResult:
    """``pipeline.run_lint`` with the result cache and ``jobs`` processes: the same result."""
    rule_config = rule_config_of(options)
    policies = policies_for(rule_config)
    result = LintResult([], 0)
    files = []
    for path, explicit in discover(paths):
        salt = job_salt(path, explicit, options, policies)
        if salt is None:
            result.skipped.append(str(path))  # only explicit files get here: the walk filters by kind
            continue
        files.append((path, explicit, salt))
    workers = jobs or default_jobs()
    result.diagnostics, result.files, _ = lint_with_cache(
        files, rule_config, lambda batch: lint_jobs(batch, rule_config, workers, policies),
        use_cache=use_cache)
    return result


def lint_jobs(jobs: Sequence[Job], rule_config: Mapping[str, Any] | None, workers: int,
              policies: Policies | None = None) -> list[Result]:
    global _POLICIES
    from dshctl.lint.pipeline import lint_one  # only now: a fully cached run never imports the parser

    _POLICIES = policies or policies_for(rule_config)
    workers = max(1, min(workers, len(jobs) // MIN_FILES_PER_WORKER))
    if workers == 1:
        return [lint_one(path, explicit, _POLICIES, data) for path, explicit, data in jobs]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from dshctl.core import schemas

    schemas.prepare()  # the schema checks compiled once here, inherited by every forked worker

    # fork: the workers inherit the imported parser, rules and compiled checks instead of redoing it.
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
        chunk = max(1, len(jobs) // (workers * 4))
        return list(pool.map(_lint_one, jobs, chunksize=chunk))


def _lint_one(job: Job) -> Result:
    from dshctl.lint.pipeline import lint_one

    path, explicit, data = job
    return lint_one(path, explicit, _POLICIES, data)
