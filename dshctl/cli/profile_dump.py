"""The body of `dshctl profile dump` without typer: the typer command (cli/profile_cmd.py) and the
fast path (cli/fastpath.py) both call ``run``. Its time is the dump's budget (docs/performance.md,
issue 13), so everything heavy is imported when it is needed."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

from dshctl.errors import EXIT_OK


def run(state, *, patch: Optional[list[Path]], default_only: bool, fmt: str, strict: bool,
        bundle_root: Optional[list[Path]]) -> int:
    """Print the composed rows (yaml as dsh's --dump-config, or json); warnings go to stderr."""
    import gc

    # Nothing here makes reference cycles worth collecting, and the collector's passes over the
    # growing tree cost ~10 % of the dump: paused until the output is written. When it resumes,
    # what is alive then (the parse cache of compose/layers.py holds the trees) is frozen: else the
    # first full collection, at the latest the one at interpreter exit, scans it all (~200 ms here).
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _run(state, patch, default_only, fmt, strict, bundle_root)
    finally:
        if enabled:
            gc.freeze()
            gc.enable()


def _run(state, patch, default_only: bool, fmt: str, strict: bool, bundle_root) -> int:
    from dshctl.cli.shared import check_format
    from dshctl.core.compose import dumpcache

    check_format(fmt, ("yaml", "json"))
    if default_only and patch:
        from dshctl.errors import UsageError

        # dsh refuses the same pair (`--dump-default-config … takes no --patch`) rather than drop a
        # file the user named.
        raise UsageError("--default-only prints the bundle layers and takes no --patch",
                         hint="drop --patch, or drop --default-only to apply it")
    key = None  # no key under --no-cache: making one stats every source file of dshctl
    if dumpcache.cache_dir() is not None:
        key = dumpcache.make_key(state.home, state.profile, patch or (), default_only, bundle_root or (), fmt)
    output = dumpcache.lookup(key) if key is not None else None
    if output is None:
        from dshctl.core.compose.composition import compose_profile

        comp = compose_profile(state.home, state.profile, patches=patch or (), default_only=default_only,
                               bundle_roots=bundle_root or (), touches=False)  # no explain records
        output = _render(comp, fmt)
        if key is not None:
            dumpcache.store(key, comp, output, bundle_root or ())
    if fmt == "yaml":
        for line in output["warning_lines"]:
            sys.stderr.write(line + "\n")
    if strict and (output["warnings"] or output["unsupported_js"]):
        if fmt == "json":
            sys.stdout.write(output["text"])
        if output["warnings"]:
            raise_strict(output["warnings"])
        _raise_unsupported_js(output["unsupported_js"])
    sys.stdout.write(output["text"])
    return EXIT_OK


def raise_strict(records: list[dict]) -> None:
    """The first patch warning as the error of a ``--strict`` run."""
    from dshctl.errors import DshctlError, Loc

    first = records[0]
    loc = Loc(first["file"], first["line"], first["column"]) if first["file"] else None
    raise DshctlError(f"[{first['layer']}] {first['message']} ({len(records)} patch warning(s), --strict)",
                      loc=loc, hint="fix the patch or its target; without --strict these are warnings")


def _raise_unsupported_js(records: list[dict]) -> None:
    from dshctl.errors import DshctlError, Loc

    first = records[0]
    more = f" (and {len(records) - 1} more unsupported !!js expression(s))" if len(records) > 1 else ""
    raise DshctlError(first["message"] + more, loc=Loc(first["file"], first["line"], first["column"]),
                      hint=first["hint"] + "; without --strict this is a warning")


def _render(comp, fmt: str) -> dict:
    from dshctl.core.compose import dump as render
    from dshctl.core.compose.dump_js import unsupported_expressions

    js = unsupported_expressions(comp)
    if fmt == "json":
        from dshctl.core.yaml.jsvalue import json_dumps
        text = json_dumps({**render.render_json(comp), "unsupportedJs": js}, indent=2) + "\n"
    else:
        text = render.render_yaml(comp)
    lines = [line if line.startswith("  ") else f"warning: {line}" for line in render.warning_lines(comp)]
    for record in js:
        lines.append(f"warning: {record['file']}:{record['line']}:{record['column']}: {record['message']}")
        lines.append(f"  hint: {record['hint']}")
    return {"text": text, "warnings": render.warning_records(comp), "warning_lines": lines,
            "unsupported_js": js}
