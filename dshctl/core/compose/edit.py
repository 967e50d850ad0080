"""Safe edits of a user patch layer (the profile's ``cordis.patch.yml``, or the home's).

Every edit is one transaction under the layer's lock (``<home>/.dshctl/locks/layer-<profile>.lock``):

1. read the layer (or start from dsh's template when it does not exist) and remember its hash;
2. change it through the round-trip writer (comments and layout kept); an existing patch for the
   row is updated instead of appending a second one;
3. recompose the whole profile with the edited text in place of the layer and refuse the edit if it
   introduces a boot failure (dsh's patcher throwing, a duplicate id anywhere in the tree, a row that
   fails the entry-list schema) - the file is then untouched;
4. write atomically, only if the file still has the hash read in step 1.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from dshctl.core import fsutil
from dshctl.core.compose import layers as L
from dshctl.core.compose.composition import Composition, compose_layers, compose_profile, iter_rows
from dshctl.core.yaml.nodes import JsExpr, js_truthy, to_plain
from dshctl.core.compose.profile import USER_LAYER_TEMPLATE, profile_dir
from dshctl.errors import DshctlError, Loc


@dataclass
class EditOutcome:
    path: Path
    created: bool
    summary: str
    note: str = ""
    rows: list | None = None  # the composition after the edit

    def shadowed(self, row_id: str, path: list[str], expected: Any, *, absent: bool = False) -> None:
        """Add a note when a later layer hides the edit (e.g. the home layer outranks the profile's)."""
        from dshctl.core.yaml import jsvalue

        row = next((r for r, _ in reversed(list(iter_rows(self.rows or []))) if r.get("id") == row_id), None)
        node: Any = row
        for key in path:
            node = node.get(key, _ABSENT) if isinstance(node, dict) else _ABSENT
        same = node is _ABSENT if absent else (
            node is not _ABSENT and jsvalue.to_json(to_plain(node)) == jsvalue.to_json(to_plain(expected)))
        if not same:
            extra = f"a later layer overrides {row_id}.{'.'.join(path)}, so the edit has no visible " \
                    "effect (see: dshctl profile explain)"
            self.note = f"{self.note}; {extra}" if self.note else extra


_ABSENT = object()


def layer_path(home: Path, profile: str, home_layer: bool) -> Path:
    return Path(home) / L.HOME_LAYER if home_layer else profile_dir(home, profile) / L.PROFILE_LAYER


def edit_layer(home: Path, profile: str, home_layer: bool,
               change: Callable[[Any, Composition], tuple[str, str]]) -> EditOutcome:
    """Run ``change(doc, composition)`` on the layer as one checked, locked, atomic transaction.

    ``change`` edits the ``EditableYaml`` and returns (summary, note).
    """
    from dshctl.core.yaml.roundtrip import EditableYaml

    path = layer_path(home, profile, home_layer)
    label = "patches" if home_layer else "overlay"
    lock = fsutil.home_lock_path(home, "layer-home.lock" if home_layer else f"layer-{profile}.lock")
    with fsutil.file_lock(lock, what=str(path)):
        created = not path.exists()
        if created:
            doc = EditableYaml.from_text(USER_LAYER_TEMPLATE, path)
            expect = None
        else:
            L.load_patch_file(path, label)  # dsh's shape errors before anything else
            doc = EditableYaml.read(path)
            expect = doc.sha256
        before = compose_profile(home, profile)
        summary, note = change(doc, before)
        after = _validate(home, profile, path, doc.dumps(), label, before)
        if created:
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.exists():
                raise DshctlError("the file appeared on disk while editing; not overwriting it",
                                  loc=Loc(str(path)), hint="run the command again")
            fsutil.atomic_write(path, doc.dumps())
        else:
            doc.write(expect_sha256=expect)
    return EditOutcome(path, created, summary, note, after)


def _validate(home: Path, profile: str, path: Path, text: str, label: str,
              before: Composition) -> list:
    patches = L.parse_patch_text(text, path, label)
    stack = L.bundle_layers(home, profile) + L.user_layers(home, profile)
    kind = L.HOME if label == "patches" else L.PROFILE
    stack = [layer for layer in stack if layer.path != path]
    new_layer = L.Layer(str(path), path, kind, patches)
    position = len([layer for layer in stack if layer.kind == L.BUNDLE or
                    (kind == L.HOME and layer.kind == L.PROFILE)])
    stack.insert(position, new_layer)
    result = compose_layers(stack)  # PatchError propagates: dsh would throw too
    old = set(boot_problems(before.rows))
    for problem, loc in boot_problems(result.rows).items():
        if problem not in old:
            raise DshctlError(f"refusing the edit: the profile would fail to boot: {problem}",
                              loc=loc or Loc(str(path)), hint=f"{path} was left unchanged")
    return result.rows


def boot_problems(rows: list) -> dict[str, Loc | None]:
    """Problems that stop a boot: duplicate ids in the tree (dshctl's rule, dsh-config.md §4) and
    rows failing the entry-list schema. Keyed by message so old and new problems can be compared."""
    from dshctl.core.schemas import validate

    problems: dict[str, Loc | None] = {}
    seen: set[str] = set()
    for row, _ in iter_rows(rows):
        row_id = row.get("id")
        if isinstance(row_id, str) and row_id:
            if row_id in seen:
                problems[f"duplicate loader entry id: {row_id}"] = getattr(row, "loc", None)
            seen.add(row_id)
    for diag in validate(rows, "entry-list", "<composition>"):
        if diag.severity == "error":
            problems[f"{diag.json_path}: {diag.message}"] = None
    return problems


# ---------------------------------------------------------------------------------------------
# the edits


def find_patch(doc: Any, row_id: str) -> int | None:
    """The index of the last override patch for ``row_id`` in the layer (the one that wins)."""
    found = None
    for i, patch in enumerate(doc.value or []):
        if isinstance(patch, dict) and patch.get("id") == row_id and not js_truthy(patch.get("insert")):
            found = i
    return found


def require_row(comp: Composition, row_id: str) -> dict:
    from dshctl.core.compose.dump import all_ids, suggest

    for row, _ in reversed(list(iter_rows(comp.rows))):
        if row.get("id") == row_id:
            return row
    close = suggest(row_id, all_ids(comp))
    raise DshctlError(f"no row {row_id!r} in the composition of profile {comp.profile!r}",
                      hint=f'did you mean "{close}"?' if close else "run 'dshctl profile dump' to see the ids")


def set_keys(doc: Any, row_id: str, values: dict[str, Any]) -> None:
    """Update the existing patch for ``row_id``, or append one."""
    index = find_patch(doc, row_id)
    if index is None:
        doc.append_item((), {"id": row_id, **values})
        return
    for key, value in values.items():
        doc.set_key((index,), key, value)


def set_disabled(home: Path, profile: str, row_id: str, disabled: bool, *,
                 home_layer: bool = False) -> EditOutcome:
    def change(doc, comp):
        require_row(comp, row_id)
        set_keys(doc, row_id, {"disabled": disabled})
        return f"{'disabled' if disabled else 'enabled'} {row_id}", ""
    outcome = edit_layer(home, profile, home_layer, change)
    outcome.shadowed(row_id, ["disabled"], disabled)
    return outcome


def set_field(home: Path, profile: str, row_id: str, path: list[str], value: Any, *,
              unset: bool = False, home_layer: bool = False) -> EditOutcome:
    """``set``/``unset`` ROW.config.a.b (whole ``config`` written) or ROW.<key> (that key)."""
    if not path or path[0] in ("id", "name", "insert"):
        raise DshctlError("give a field: ROW.config.a.b or ROW.<key> (not id, name or insert)",
                          hint="e.g. dshctl profile set http.config.port 9090")

    def change(doc, comp):
        row = require_row(comp, row_id)
        key = path[0]
        if key == "config" and len(path) == 1 and not unset:
            _check_whole_config(row, row_id, value)
        if key != "config" or len(path) == 1:
            if unset:
                raise DshctlError(f"cannot unset {key!r}: a patch can only assign values",
                                  hint=f"set it instead, e.g. dshctl profile set {row_id}.{key} null")
            set_keys(doc, row_id, {key: value})
            return f"set {row_id}.{key}", ""
        config = copy.deepcopy(to_plain(row.get("config"), js="keep"))
        config = _edited(config, path[1:], value, unset, row_id)
        set_keys(doc, row_id, {"config": config})
        note = (f"dsh replaces config whole, so the complete config of {row_id} "
                f"({len(config)} key(s)) was written into the patch")
        return f"{'unset' if unset else 'set'} {row_id}.{'.'.join(path)}", note
    outcome = edit_layer(home, profile, home_layer, change)
    outcome.shadowed(row_id, path, value, absent=unset)
    return outcome


def _check_whole_config(row: dict, row_id: str, value: Any) -> None:
    """A row's whole config is a mapping (a group's: its list of rows), or an expression. Anything
    else passes lint yet fails the row when the host plugs it, so refuse it here."""
    group = js_truthy(row.get("group"))
    if isinstance(value, (dict, JsExpr)) and not group or isinstance(value, list) and group or value is None:
        return
    want = "a list of rows (it is a group)" if group else "a mapping of the plugin's settings"
    raise DshctlError(f"{row_id}.config must be {want}, not {type(value).__name__} {value!r}",
                      hint=f"set one field instead, e.g. dshctl profile set {row_id}.config.port 9090, "
                           f"or the whole config as '{{key: value}}'")


def _edited(config: Any, keys: list[str], value: Any, unset: bool, row_id: str) -> dict:
    if config is None:
        config = {}
    if not isinstance(config, dict):
        raise DshctlError(f"the config of {row_id} is not a mapping; set the whole config instead",
                          hint=f"dshctl profile set {row_id}.config '{{...}}'")
    node = config
    for key in keys[:-1]:
        nxt = node.get(key)
        if not isinstance(nxt, dict):
            if unset:
                raise DshctlError(f"{row_id}.config.{'.'.join(keys)} is not set")
            nxt = node[key] = {}
        node = nxt
    if unset:
        if keys[-1] not in node:
            raise DshctlError(f"{row_id}.config.{'.'.join(keys)} is not set", hint="nothing to unset")
        del node[keys[-1]]
    else:
        node[keys[-1]] = value
    return config


def insert_rows(home: Path, profile: str, rows: list, *, into: str | None = None,
                home_layer: bool = False) -> EditOutcome:
    def change(doc, comp):
        if into is not None:
            group = require_row(comp, into)
            if not js_truthy(group.get("group")):
                raise DshctlError(f"row {into!r} is not a group (it has no 'group: true')",
                                  hint="insert at the top level, or into a row with group: true")
        patch = {"id": into, "insert": rows} if into else {"insert": rows}
        doc.append_item((), patch)
        where = f"into group {into}" if into else "at the top level"
        return f"inserted {len(rows)} row(s) {where}", ""
    return edit_layer(home, profile, home_layer, change)
