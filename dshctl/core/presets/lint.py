"""``lint_presets``: everything wrong with a set of presets, as diagnostics.

Covers: unreadable roots, entries dsh skips that look like presets, dsh's health reasons, metadata
that dsh would drop, duplicate preset ids (the shadowed copy), the entry-list schema, duplicate row
ids, relative plugin files that do not exist, and ``!!js`` outside the subset the Python host evaluates.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable

from dshctl.core.diagnostics import Diagnostic
from dshctl.errors import Loc

from .health import BROKEN_HINT, MAX_COMPOSITION_BYTES, parse_composition
from .model import Preset, Roster, display_name, is_preset_id

# Extensions a relative plugin specifier may omit (Node's resolution plus Python plugins for our host).
PLUGIN_EXTENSIONS = ("", ".js", ".mjs", ".cjs", ".ts", ".py")
INDEX_FILES = ("index.js", "index.mjs", "index.cjs", "package.json", "__init__.py")


def lint_presets(roster: Roster, presets: Iterable[Preset] | None = None) -> list[Diagnostic]:
    """Lint ``presets`` (default: every copy in the roster, plus the roster's own findings)."""
    diags: list[Diagnostic] = []
    if presets is None:
        presets = roster.all_copies()
        diags.extend(_roster_findings(roster))
    for preset in presets:
        diags.extend(lint_preset(preset))
    return sorted(set(diags), key=Diagnostic.sort_key)


def _roster_findings(roster: Roster) -> Iterable[Diagnostic]:
    for err in roster.root_errors:
        yield Diagnostic.from_error(err, "preset-root")
    for skipped in roster.skipped:
        if skipped.notable:
            yield Diagnostic.at(Loc(display_name(str(skipped.path))), "preset-skipped", "warning",
                                f"'{skipped.name}' is skipped by dsh: {skipped.reason}",
                                hint=skipped.hint or "rename or remove it; a preset is "
                                                     "<root>/<id>/agent.cordis.yml")


def lint_preset(preset: Preset) -> list[Diagnostic]:
    file = str(preset.file)
    diags = [Diagnostic.at(p.loc, "preset-metadata", "warning", p.message,
                           hint=p.hint or "see docs/presets.md for the preset.yml fields")
             for p in preset.metadata.problems]
    if not is_preset_id(preset.id):
        diags.append(Diagnostic.at(Loc(str(preset.dir)), "preset-skipped", "warning",
                                   f"{preset.id!r} is not a preset id, so dsh skips this directory",
                                   hint="use lowercase letters, digits and '-', starting with a letter or digit"))
    if preset.shadowed_by is not None:
        diags.append(Diagnostic.at(Loc(file), "preset-shadowed", "warning",
                                   f'preset "{preset.id}" is shadowed by {preset.shadowed_by.file}; '
                                   "dsh uses the copy in the earlier root",
                                   hint="rename this directory, or remove one of the copies"))
    if not preset.health.ok:
        diags.append(Diagnostic.at(preset.health.loc, "preset-health", "error", preset.health.broken,
                                   hint=preset.health.detail or BROKEN_HINT, file=file))
        return diags
    return diags + _lint_composition(preset)


def _lint_composition(preset: Preset) -> list[Diagnostic]:
    file = preset.file
    try:
        if file.stat().st_size > MAX_COMPOSITION_BYTES:
            return []
        data = file.read_bytes()
    except OSError:
        return []  # changed since the scan; health reported what it saw
    diags: list[Diagnostic] = []
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        diags.append(Diagnostic.at(Loc(str(file), line, col), "preset-encoding", "warning",
                                   "not valid UTF-8; dsh reads it with U+FFFD in place of the bad bytes",
                                   hint="save the file as UTF-8"))
    doc, health = parse_composition(data, file)
    if doc is None or not health.ok:
        return diags
    from dshctl.core.schemas import validate

    diags.extend(validate(doc.value, "entry-list", str(file)))
    diags.extend(_lint_rows(doc.value, preset.dir, {}))
    return diags


def _lint_rows(rows: list, base: Path, ids: dict[str, Loc | None]) -> Iterable[Diagnostic]:
    for index, row in enumerate(rows):
        row_loc = rows.loc_of(index) if hasattr(rows, "loc_of") else None
        row_id, name = row.get("id"), row["name"]
        if isinstance(row_id, str) and row_id:
            if row_id in ids:
                yield Diagnostic.at(row.loc_of("id"), "preset-duplicate-row-id", "error",
                                    f"duplicate loader entry id: {row_id}",
                                    hint=f"ids must be unique in the whole tree; first used at {ids[row_id]}")
            else:
                ids[row_id] = row.loc_of("id")
        label = row_id if isinstance(row_id, str) and row_id else f"<row {index + 1}>"
        yield from _missing_plugin_file(name, base, row.loc_of("name") or row_loc)
        yield from _js_findings(row, label, name)
        if row.get("group") is True and isinstance(row.get("config"), list):
            yield from _lint_rows(row["config"], base, ids)


def _missing_plugin_file(name: str, base: Path, loc: Loc | None) -> Iterable[Diagnostic]:
    if not name.startswith(("./", "../")):
        return
    target = os.path.normpath(base / name)
    if any(os.path.isfile(target + ext) for ext in PLUGIN_EXTENSIONS):
        return
    if os.path.isdir(target) and any(os.path.isfile(os.path.join(target, f)) for f in INDEX_FILES):
        return
    yield Diagnostic.at(loc, "preset-plugin-missing", "error",
                        f"plugin file {name} does not exist (looked for {target})",
                        hint="relative plugin names resolve from the preset directory; "
                             "add the file or fix the path")


def _js_findings(row: dict, label: str, name: str) -> Iterable[Diagnostic]:
    try:
        from dshctl.core.jsexpr import check_expressions
    except ImportError:  # pragma: no cover - the subset parser ships with dshctl
        return
    positions: list[tuple[str, Any]] = [("disabled", row.get("disabled"))]
    if row.get("group") is not True:
        positions.append(("config", row.get("config")))
    for path, value in positions:
        for _, _, err in check_expressions(value, full_id=label, name=name, base_path=path):
            yield Diagnostic.from_error(err, "preset-js")
