"""Go to definition (a patch entry's ``id`` -> the row it patches, in the layer that inserted it) and
code actions (a disable comment for a finding; removing a disable comment that disables nothing)."""
from __future__ import annotations

import re
from pathlib import Path

from dshctl.core.yaml import filekinds as fk
from dshctl.lint.plan import kind_of
from dshctl.lsp import profiles
from dshctl.lsp.cursor import cursor_at

_DIRECTIVE = re.compile(r"\s*#\s*dshctl:\s*disable-(?:line|next-line|file)\s*=\s*[A-Za-z0-9_,\s-]+$")


def definition(path: Path, text: str, lines: list[str], line: int, column: int,
               preferred_profile: str | None = None) -> dict | None:
    """The Location of the row a patch's ``id`` targets (or of the preset settings.yaml names), or None."""
    if kind_of(path) == fk.SETTINGS:
        return _preset_definition(path, lines, line, column, preferred_profile)
    if kind_of(path) != fk.PATCH_LIST:
        return None
    cur = cursor_at(lines, line, column)
    if cur.key != "id" or not cur.in_value or cur.under_insert or not cur.value:
        return None
    pv = profiles.view(path, text, preferred_profile)
    if pv is None:
        return None
    below = len(pv.comp.layers) if pv.layer_index is None else pv.layer_index
    found = None
    for touch in pv.comp.provenance.touches:
        if touch.kind == "insert" and touch.row_id == cur.value and touch.layer_index < below and touch.loc:
            found = touch.loc  # the last insert below wins, as the index does
    if found is None or not found.line:
        return None
    target = Path(found.file)
    start = {"line": found.line - 1, "character": max(found.column - 1, 0)}
    return {"uri": target.resolve().as_uri(), "range": {"start": start, "end": start}}


def _preset_definition(path: Path, lines: list[str], line: int, column: int, preferred: str | None) -> dict | None:
    from dshctl.lsp.cursor import parent_key

    cur = cursor_at(lines, line, column)
    if cur.key != "default" or not cur.in_value or parent_key(lines, line) != "agent-presets":
        return None
    found = next((p for p in profiles.presets_for(path, preferred) if p.id == cur.value), None)
    if found is None:
        return None
    start = {"line": 0, "character": 0}
    return {"uri": found.file.resolve().as_uri(), "range": {"start": start, "end": start}}


def code_actions(uri: str, lines: list[str], diagnostics: list[dict], yaml: bool) -> list[dict]:
    """Quick fixes for the findings the client sends (YAML only: JSON has no comments)."""
    if not yaml:
        return []
    actions = []
    for diag in diagnostics:
        if diag.get("source") != "dshctl":
            continue
        rule, line = diag.get("code"), diag["range"]["start"]["line"]
        if rule == "unused-disable":
            edit = _remove_directive(lines, line)
            if edit:
                actions.append(_action("Remove the unused disable comment", uri, edit, diag))
            continue
        actions.append(_action(f"Disable {rule} for this line", uri, _disable_line(lines, line, rule), diag))
        actions.append(_action(f"Disable {rule} for this file", uri,
                               {"range": _at(0, 0), "newText": f"# dshctl: disable-file={rule}\n"}, diag))
    return actions


def _action(title: str, uri: str, edit: dict, diag: dict) -> dict:
    return {"title": title, "kind": "quickfix", "diagnostics": [diag],
            "edit": {"changes": {uri: [edit]}}}


def _at(line: int, character: int) -> dict:
    return {"start": {"line": line, "character": character}, "end": {"line": line, "character": character}}


def _disable_line(lines: list[str], line: int, rule: str) -> dict:
    from dshctl.core.yaml.utf16 import utf16_len

    text = lines[line] if line < len(lines) else ""
    m = re.search(r"(?:^|(?<=\s))#\s*dshctl:\s*disable-line\s*=\s*[A-Za-z0-9_,\s-]*[A-Za-z0-9_-]", text)
    if m:  # extend the directive already there
        end = utf16_len(text[:m.end()])
        return {"range": _at(line, end), "newText": f",{rule}"}
    if re.search(r"(?:^|\s)#", text):  # another comment ends the line: say it on the line above
        indent = text[:len(text) - len(text.lstrip())]
        return {"range": _at(line, 0), "newText": f"{indent}# dshctl: disable-next-line={rule}\n"}
    return {"range": _at(line, utf16_len(text)), "newText": f"  # dshctl: disable-line={rule}"}


def _remove_directive(lines: list[str], line: int) -> dict | None:
    from dshctl.core.yaml.utf16 import utf16_len

    text = lines[line] if line < len(lines) else ""
    m = _DIRECTIVE.search(text)
    if not m:
        return None
    if not text[:m.start()].strip():  # the comment is the whole line: remove the line
        return {"range": {"start": {"line": line, "character": 0}, "end": {"line": line + 1, "character": 0}},
                "newText": ""}
    start = utf16_len(text[:m.start()])
    return {"range": {"start": {"line": line, "character": start},
                      "end": {"line": line, "character": utf16_len(text)}}, "newText": ""}
