"""`dshctl lint PATH…`: check dsh configuration files and report diagnostics."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer
from typing_extensions import Annotated

from dshctl.errors import EXIT_FINDINGS, EXIT_OK, UsageError

STDIN = "-"
EPILOG = """Example: dshctl lint .

Example: dshctl lint --select schema,duplicate-id presets/

Example: dshctl lint --strict --format sarif .

Example: dshctl lint - --kind cordis.patch --stdin-filename profiles/web/my.yml

Config: the nearest .dshctl-lint.yaml (or pyproject.toml with a tool.dshctl.lint table) above each file;
see docs/cli.md."""


def register(app: typer.Typer) -> None:
    app.command("lint", epilog=EPILOG)(lint)


def lint(
    paths: Annotated[Optional[List[str]], typer.Argument(
        help="Files or directories to lint, or - for standard input. Directories are searched for "
             "cordis.yml, *.cordis.yml, cordis.patch*.yml, *.overlay.yml, preset.yml, package.json and "
             "a dsh home's settings.yaml; a file named here that is none of these is skipped with a note.",
        show_default=False)] = None,
    fmt: Annotated[str, typer.Option(
        "--format", "-f", help="auto (github under GitHub Actions, else text), text, json, sarif, github.")
    ] = "auto",
    config: Annotated[Optional[Path], typer.Option(
        "--config", help="Use this config file (.dshctl-lint.yaml or pyproject.toml) for every file "
                         "instead of the nearest one.", show_default=False)] = None,
    select: Annotated[Optional[str], typer.Option(
        "--select", help="Run only these rules (comma-separated ids, e.g. schema,duplicate-id).",
        show_default=False)] = None,
    ignore: Annotated[Optional[str], typer.Option(
        "--ignore", help="Turn these rules off (comma-separated ids).", show_default=False)] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Warnings fail too (exit 1).")] = False,
    kind: Annotated[Optional[str], typer.Option(
        "--kind", help="Lint the named files (and -) as this kind: entry-list, cordis.patch, preset, "
                       "package.json or settings.", show_default=False)] = None,
    stdin_filename: Annotated[Optional[str], typer.Option(
        "--stdin-filename", help="The path standard input stands for: reported in findings, and its "
                                 "name and directory pick the kind and the config.",
        show_default=False)] = None,
    list_rules: Annotated[bool, typer.Option(
        "--list-rules", help="Describe every rule with its level under the config (of the first PATH, "
                             "else the current directory) and exit.")] = False,
    jobs: Annotated[Optional[int], typer.Option(
        "--jobs", "-j", help="Files linted in parallel (default: the cores available).",
        show_default=False, min=1, max=1024)] = None,
    no_cache: Annotated[bool, typer.Option(
        "--no-cache", help="Lint every file again; neither read nor write the result cache.")] = False,
) -> None:
    """Lint dsh config files (dialect, schemas, rules); exit 1 on errors.

    Warnings fail too with --strict.
    """
    from dshctl.report import FORMATS

    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r}", hint="choose one of: " + ", ".join(FORMATS))
    options = _options(config, select, ignore, kind)
    if list_rules:
        _print_rules(fmt, Path(paths[0]) if paths and paths[0] != STDIN else Path.cwd(), options)
        return
    if not paths:
        raise UsageError("no paths given", hint="run: dshctl lint PATH… (files or directories, or - for stdin)")
    diags, count = _run(paths, options, stdin_filename, jobs=jobs, use_cache=not no_cache)
    _report(diags, count, fmt, strict)


def _options(config, select, ignore, kind):
    from dshctl.lint import RULES
    from dshctl.lint.config import parse_rule_list
    from dshctl.lint.pipeline import LintOptions, kind_named

    return LintOptions(config=config, select=parse_rule_list(select, "--select", RULES),
                       ignore=parse_rule_list(ignore, "--ignore", RULES) or frozenset(),
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
    from dshctl.lint.pipeline import kind_of, lint_text

    shown = stdin_filename or "<stdin>"
    kind = options.kind or (kind_of(Path(stdin_filename)) if stdin_filename else None)
    if kind is None:
        raise UsageError("cannot tell the kind of standard input",
                         hint="add --kind KIND (e.g. --kind cordis.patch) or --stdin-filename NAME")
    text = sys.stdin.buffer.read().decode("utf-8", errors="replace")
    return lint_text(text, shown, kind=kind, options=options)


def _report(diags, count: int, fmt: str, strict: bool) -> None:
    from dshctl.core.diagnostics import has_errors
    from dshctl.report import render

    render(diags, fmt, files=count)
    _summary(diags, count, fmt)
    failed = has_errors(diags) or (strict and any(d.severity == "warning" for d in diags))
    raise typer.Exit(EXIT_FINDINGS if failed else EXIT_OK)


def _summary(diags, count: int, fmt: str) -> None:
    """One line on stderr for humans; data formats keep stdout clean."""
    from dshctl.report import resolve_format

    if resolve_format(fmt) != "text":
        return
    errors = sum(d.severity == "error" for d in diags)
    warnings = sum(d.severity == "warning" for d in diags)
    sys.stderr.write(f"{count} file(s) checked: {errors} error(s), {warnings} warning(s)\n")


def _print_rules(fmt: str, where: Path, options) -> None:
    from dshctl.cli.common import console, print_json
    from dshctl.lint import all_rules
    from dshctl.lint.config import level_of
    from dshctl.lint.pipeline import policy_for

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
