"""Completion: what JSON Schema cannot know. Row ids a patch can target (the ids the layers below the
document compose), plugin names installed for the profile, ``disabled`` values as dsh reads them,
the keys of a row or patch entry with their docs, and inside ``config:`` the keys and values of the
row's plugin's schema (plugin_config.py)."""
from __future__ import annotations

import re
from pathlib import Path

from dshctl.core.yaml import filekinds as fk
from dshctl.lint.plan import kind_of
from dshctl.lsp import plugin_config, profiles
from dshctl.lsp.cursor import cursor_at
from dshctl.lsp.knowledge import key_docs

# LSP CompletionItemKind
VALUE, KEYWORD, MODULE, PROPERTY, REFERENCE = 12, 14, 9, 10, 18
DISABLED_VALUES = (("true", "turns the row off (a group stays mounted; its children unmount)"),
                   ("false", "mounts the row (turns back on a row a lower layer disabled)"),
                   ("!!js ", "an expression dsh evaluates when the row mounts; truthy disables"))


def complete(path: Path, text: str, lines: list[str], line: int, column: int,
             preferred_profile: str | None = None) -> list[dict]:
    kind = kind_of(path)
    if kind == fk.SETTINGS:
        return _preset_ids(path, lines, line, column, preferred_profile)
    if kind not in (fk.ENTRY_LIST, fk.PATCH_LIST, fk.PRESET):
        return []
    if kind != fk.PRESET:
        in_config = plugin_config.complete(path, text, lines, line, column, preferred_profile)
        if in_config is not None:
            return in_config
    cur = cursor_at(lines, line, column)
    if cur.key is not None and cur.in_value:
        return _values(path, text, kind, cur, preferred_profile)
    prefix = lines[line][:column] if line < len(lines) else ""
    if re.fullmatch(r"\s*(?:-\s+)?[A-Za-z_]*", prefix):
        top_level = cur.row_line is not None and not lines[cur.row_line].startswith((" ", "\t"))
        if kind == fk.PRESET:
            top_level = True
        docs = key_docs(kind, under_insert=cur.under_insert, top_level=top_level)
        return [{"label": k, "kind": PROPERTY, "detail": "key", "documentation": d, "insertText": f"{k}: "}
                for k, d in docs.items()]
    return []


def _values(path: Path, text: str, kind: str, cur, preferred: str | None) -> list[dict]:
    if cur.key == "disabled":
        return [{"label": v, "kind": KEYWORD, "detail": "disabled", "documentation": d} for v, d in DISABLED_VALUES]
    if cur.key == "id" and kind == fk.PATCH_LIST:
        pv = profiles.view(path, text, preferred)
        if pv is None:
            return []
        return [{"label": i, "kind": REFERENCE, "detail": f"row of profile {pv.comp.profile}"}
                for i in profiles.ids_below(pv)]
    if cur.key == "name" and kind != fk.PRESET:
        pv = profiles.view(path, text, preferred)
        return [{"label": n, "kind": MODULE, "detail": "plugin"} for n in profiles.plugin_names(path, pv)]
    return []


def _preset_ids(path: Path, lines: list[str], line: int, column: int, preferred: str | None) -> list[dict]:
    """``agent-presets: {default: …}`` in a home's settings.yaml: the preset ids of the home."""
    from dshctl.lsp.cursor import parent_key

    cur = cursor_at(lines, line, column)
    if cur.key != "default" or not cur.in_value or parent_key(lines, line) != "agent-presets":
        return []
    return [{"label": p.id, "kind": REFERENCE, "detail": f"preset in {p.dir_str}",
             "documentation": p.metadata.description or p.metadata.name or ""}
            for p in profiles.presets_for(path, preferred)]
