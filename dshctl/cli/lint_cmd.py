"""`dshctl lint PATH…`: check dsh configuration files and report diagnostics."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer
from typing_extensions import Annotated

from dshctl.errors import EXIT_FINDINGS, EXIT_OK, UsageError


def register(app: typer.Typer) -> None:
    app.command("lint")(lint)


def lint(
    paths: Annotated[Optional[List[Path]], typer.Argument(
        help="Files or directories (directories are searched for cordis.yml, *.cordis.yml, "
             "cordis.patch*.yml, *.overlay.yml, preset.yml and package.json).",
        show_default=False)] = None,
    fmt: Annotated[str, typer.Option(
        "--format", "-f", help="auto (github under GitHub Actions, else text), text, json, sarif, github.")
    ] = "auto",
    list_rules: Annotated[bool, typer.Option("--list-rules", help="Describe every rule and exit.")] = False,
    jobs: Annotated[Optional[int], typer.Option(
        "--jobs", "-j", help="Files linted in parallel (default: the cores available).",
        show_default=False, min=1)] = None,
    no_cache: Annotated[bool, typer.Option(
        "--no-cache", help="Lint every file again; neither read nor write the result cache.")] = False,
) -> None:
    """Lint dsh config files (dialect, schemas, rules); exit 1 on errors."""
    from dshctl.report import FORMATS

    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r}", hint="choose one of: " + ", ".join(FORMATS))
    if list_rules:
        _print_rules(fmt)
        return
    if not paths:
        raise UsageError("no paths given", hint="run: dshctl lint PATH… (files or directories)")
    from dshctl.core.diagnostics import has_errors

    diags, count = run_lint(paths, rule_config={"select": None}, jobs=jobs, use_cache=not no_cache)
    from dshctl.report import render

    render(diags, fmt)
    _summary(diags, count, fmt)
    raise typer.Exit(EXIT_FINDINGS if has_errors(diags) else EXIT_OK)


def run_lint(paths, *, rule_config, jobs: int | None, use_cache: bool):
    """Cached results for unchanged files; the rest linted on ``jobs`` cores (core/lintcache.py).
    The parser and rules are imported only when some file missed the cache."""
    from dshctl.core.lintcache import lint_with_cache
    from dshctl.core.yaml.filekinds import discover

    def run_misses(batch):
        from dshctl.lint.parallel import default_jobs, lint_jobs

        return lint_jobs(batch, rule_config, jobs or default_jobs())

    diags, count, _ = lint_with_cache(discover(paths), rule_config, run_misses, use_cache=use_cache)
    return diags, count


def _summary(diags, count: int, fmt: str) -> None:
    """One line on stderr for humans; data formats keep stdout clean."""
    from dshctl.report import resolve_format

    if resolve_format(fmt) != "text":
        return
    errors = sum(d.severity == "error" for d in diags)
    warnings = sum(d.severity == "warning" for d in diags)
    sys.stderr.write(f"{count} file(s) checked: {errors} error(s), {warnings} warning(s)\n")


def _print_rules(fmt: str) -> None:
    from dshctl.cli.common import console, print_json
    from dshctl.lint import all_rules

    rules = all_rules()
    if fmt == "json":
        print_json([{"id": r.id, "level": r.level, "doc": r.doc, "kinds": sorted(r.kinds),
                     "example_file": r.example_file, "good": r.good, "bad": r.bad} for r in rules])
        return
    out = console()
    for r in rules:
        out.print(f"{r.id} ({r.level}; {', '.join(sorted(r.kinds))})", markup=False)
        out.print(f"  {r.doc}", markup=False)
        for label, text in (("passes", r.good), ("fails", r.bad)):
            out.print(f"  {label} ({r.example_file}):", markup=False)
            for ln in text.rstrip("\n").split("\n"):
                out.print(f"    {ln}", markup=False)
        out.print("")
