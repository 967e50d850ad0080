"""Hover: the findings at the cursor with their hints, the key's schema doc, how dsh reads a
``disabled`` value, the row's plugin and its config keys (plugin_config.py), and (in a profile) which layer set the row and each of its fields (the
``profile explain`` service, core/compose/explain.py)."""
from __future__ import annotations

from pathlib import Path

from dshctl.core.yaml import filekinds as fk
from dshctl.errors import DshctlError
from dshctl.lint.plan import kind_of
from dshctl.lsp import plugin_config, profiles
from dshctl.lsp.cursor import Cursor, config_path, cursor_at
from dshctl.lsp.flow_config import flow_key_at
from dshctl.lsp.knowledge import key_docs, read_disabled


def hover(path: Path, text: str, lines: list[str], line: int, column: int, diagnostics: list[dict],
          preferred_profile: str | None = None) -> str | None:
    """Markdown for the position, or None when there is nothing to say."""
    parts = [_finding(d) for d in diagnostics if _covers(d, line, column)]
    kind = kind_of(path)
    if kind in (fk.ENTRY_LIST, fk.PATCH_LIST, fk.PRESET):
        cur = cursor_at(lines, line, column)
        plugin = None if kind == fk.PRESET else plugin_config.hover_parts(path, text, lines, cur, preferred_profile)
        if config_path(lines, line, column) is not None or \
                (plugin is not None and flow_key_at(text, path, line, column) is not None):
            return _joined(parts + plugin)  # a key of the plugin's config: not one of the row's
        parts += _about_key(kind, cur, lines)
        if cur.row_id is not None and kind != fk.PRESET and (cur.key is None or cur.key == "id" or cur.on_key):
            parts += _layers(path, text, cur, preferred_profile)
        parts += plugin or []
    return _joined(parts)


def _joined(parts: list[str]) -> str | None:
    parts = [p for p in parts if p]
    return "\n\n---\n\n".join(parts) if parts else None


def _covers(diag: dict, line: int, column: int) -> bool:
    r = diag["range"]
    return r["start"]["line"] == line and r["start"]["character"] <= column <= max(
        r["end"]["character"], r["start"]["character"] + 1)


def _finding(diag: dict) -> str:
    hint = (diag.get("data") or {}).get("hint")
    text = f"**{diag['code']}**: {diag['message']}"
    return text + (f"\n\nhint: {hint}" if hint else "")


def _about_key(kind: str, cur: Cursor, lines: list[str]) -> list[str]:
    if cur.key is None:
        return []
    top_level = cur.row_line is not None and not lines[cur.row_line].startswith((" ", "\t"))
    docs = key_docs(kind, under_insert=cur.under_insert, top_level=top_level)
    out = []
    if cur.on_key and cur.key in docs:
        out.append(f"`{cur.key}`: {docs[cur.key]}")
    if cur.key == "disabled" and cur.in_value and cur.raw_value:
        out.append(read_disabled(cur.raw_value))
    return out


def _layers(path: Path, text: str, cur: Cursor, preferred: str | None) -> list[str]:
    from dshctl.core.compose.explain import MISSING, explain

    pv = profiles.view(path, text, preferred)
    if pv is None:
        return []
    field = [cur.key] if cur.key not in (None, "id") and cur.on_key else []
    target = ".".join([cur.row_id, *field])
    try:
        exp = explain(pv.comp, target)
    except DshctlError:
        return [f"row `{cur.row_id}` is not in the composition of profile `{pv.comp.profile}`"]
    subject = f"`{target}`" if field else f"row `{cur.row_id}`"
    lines = [f"{subject} in profile `{pv.comp.profile}`:"]
    for n, step in enumerate(exp.steps, start=1):
        where = f" ({step.loc.file}:{step.loc.line}:{step.loc.column})" if step.loc and step.loc.line else ""
        lines.append(f"{n}. `{step.layer}` {step.message or step.action}{where}")
    if not exp.steps:
        lines.append("no layer touched it")
    if not field and exp.in_tree:
        winners = _field_winners(exp.steps)
        if winners:
            lines.append("")
            lines.append("fields: " + ", ".join(f"`{k}` from `{layer}`" for k, layer in winners.items()))
        lines.append("")
        lines.append(f"state: {exp.disabled_by or 'enabled'}")
    elif not exp.in_tree:
        lines.append("")
        lines.append("final: the row is not in the composed tree")
    elif exp.final is not MISSING:
        lines.append("")
        lines.append(f"final: `{_short(exp.final)}`")
    return ["\n".join(lines)]


def _field_winners(steps) -> dict[str, str]:
    """Each field of the row and the last layer that set it (dsh assigns whole fields)."""
    winners: dict[str, str] = {}
    for step in steps:
        if step.action in ("set", "inserted") and isinstance(step.value, dict):
            for key in step.value:
                winners[key] = step.layer
    return winners


def _short(value) -> str:
    import json

    from dshctl.core.yaml.nodes import to_plain

    text = json.dumps(to_plain(value), ensure_ascii=False, default=str)
    return text if len(text) <= 200 else text[:199] + "…"
