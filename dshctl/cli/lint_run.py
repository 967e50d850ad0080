"""The body of `dshctl lint` without typer: the typer command (cli/lint_cmd.py) and the fast path
(cli/fastpath.py) both call ``run``."""
from __future__ import annotations

import sys
from pathlib import Path

TYPE_CHECKING = False  # typing is not imported at run time (a cached lint's start-up)
if TYPE_CHECKING:
    from typing import Optional

from dshctl.errors import EXIT_FINDINGS, EXIT_OK, UsageError

STDIN = "-"


def run(state, *, paths: Optional[list[str]], fmt: str, config: Optional[Path], select: Optional[str],
        ignore: Optional[str], strict: bool, kind: Optional[str], stdin_filename: Optional[str],
        list_rules: bool, jobs: Optional[int], no_cache: bool) -> int:
    """Lint ``paths``; the exit code (1 on errors, or on warnings with ``strict``)."""
    from dshctl.report import FORMATS

    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r}", hint="choose one of: " + ", ".join(FORMATS))
    options = _options(config, select, ignore, kind)
    if list_rules:
        _print_rules(fmt, Path(paths[0]) if paths and paths[0] != STDIN else Path.cwd(), options)
        return EXIT_OK
    if not paths:
        raise UsageError("no paths given", hint="run: dshctl lint PATH… (files or directories, or - for stdin)")
    diags, count = _run(paths, options, stdin_filename, jobs=jobs, use_cache=not no_cache)
    return _report(diags, count, fmt, strict)


def _options(config, select, ignore, kind):
    # lint.plan, not lint.pipeline: a run where every file hits the cache imports no parser or rule
    from dshctl.lint.config import parse_rule_list
    from dshctl.lint.plan import RULE_IDS, LintOptions, kind_named

    return LintOptions(config=config, select=parse_rule_list(select, "--select", RULE_IDS),
                       ignore=parse_rule_list(ignore, "--ignore", RULE_IDS) or frozenset(),
                       kind=kind_named(kind) if kind else None)


def _run(paths: list[str], options, stdin_filename: str | None, *, jobs: int | None, use_cache: bool):
    """Cached results for unchanged files; the rest linted on ``jobs`` cores (lint/parallel.py)."""
    from dshctl.lint.parallel import run_cached

    files = [p for p in paths if p != STDIN]
    result = run_cached(files, options, jobs=jobs, use_cache=use_cache)
    diags, count = list(result.diagnostics), result.files
    for skipped in result.skipped:
        sys.stderr.write(f"dshctl: note: {skipped}: not a dsh file kind; skipped "
                         "(use --kind to lint it as one)\n")
    if STDIN in paths:
        diags += _lint_stdin(options, stdin_filename)
        count += 1
    return diags, count


def _lint_stdin(options, stdin_filename: str | None):
    from dshctl.lint.pipeline import lint_text
    from dshctl.lint.plan import kind_of

    shown = stdin_filename or "<stdin>"
    kind = options.kind or (kind_of(Path(stdin_filename)) if stdin_filename else None)
    if kind is None:
        raise UsageError("cannot tell the kind of standard input",
                         hint="add --kind KIND (e.g. --kind cordis.patch) or --stdin-filename NAME")
    text = sys.stdin.buffer.read().decode("utf-8", errors="replace")
    return lint_text(text, shown, kind=kind, options=options)


def _report(diags, count: int, fmt: str, strict: bool) -> int:
    from dshctl.core.diagnostics import has_errors
    from dshctl.report import render

    render(diags, fmt, files=count)
    _summary(diags, count, fmt)
    failed = has_errors(diags) or (strict and any(d.severity == "warning" for d in diags))
    return EXIT_FINDINGS if failed else EXIT_OK


def _summary(diags, count: int, fmt: str) -> None:
    """One line on stderr for humans; data formats keep stdout clean."""
    from dshctl.report import resolve_format

    if resolve_format(fmt) != "text":
        return
    errors = sum(d.severity == "error" for d in diags)
    warnings = sum(d.severity == "warning" for d in diags)
    sys.stderr.write(f"{count} file(s) checked: {errors} error(s), {warnings} warning(s)\n")


def _print_rules(fmt: str, where: Path, options) -> None:
    from dshctl.cli.shared import console, print_json
    from dshctl.lint import all_rules
    from dshctl.lint.config import level_of
    from dshctl.lint.plan import policy_for

    policy = policy_for(where, options)
    rules = all_rules()
    if fmt == "json":
        print_json([{"id": r.id, "level": level_of(r, policy), "default_level": r.level, "doc": r.doc,
                     "kinds": sorted(r.kinds), "example_file": r.example_file, "good": r.good,
                     "bad": r.bad} for r in rules])
        return
    out = console()
    for r in rules:
        level = level_of(r, policy)
        shown = level if level == r.level else f"{level}, default {r.level}"
        out.print(f"{r.id} ({shown}; {', '.join(sorted(r.kinds))})", markup=False)
        out.print(f"  {r.doc}", markup=False)
        for label, text in (("passes", r.good), ("fails", r.bad)):
            out.print(f"  {label} ({r.example_file}):", markup=False)
            for ln in text.rstrip("\n").split("\n"):
                out.print(f"    {ln}", markup=False)
        out.print("")
