"""dsh's patch algorithm, reproduced operation for operation (dsh-config.md §5).

One pass over a flattened patch list, in order:

* an id index is built once over the (cloned) base, recursively through ``group: true`` rows with a
  list ``config``; the last occurrence of an id wins;
* a patch with a JavaScript-truthy ``insert`` appends those rows (to the root, or to group ``id``) and
  indexes them at once, nested group children included;
* any other patch overrides the row with its ``id``: ``name`` is a guard (only when truthy), every other
  key except ``id``/``name``/``insert`` is assigned whole (dsh destructures ``{id, insert, name,
  ...overrides}``, so a falsy ``insert`` is dropped, never assigned);
* a patch that does not apply is skipped with one of dsh's warnings.

Inserted rows are placed by reference, exactly as dsh does; ``apply_patches`` therefore clones the patch
list first (keeping shared YAML-alias references shared, like ``structuredClone``). Besides the rows it
records what dshctl needs on top: the layer and location of each warning, every change made to a row
(``Touch``) for ``profile explain``, and the ``# ==`` provenance of each top-level row as dsh's
``--dump-config`` derives it (a layer "patched" a row when the row's JSON text changed across it).
"""
from __future__ import annotations

import gc
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from dshctl.core.yaml import jsvalue
from dshctl.core.compose.aliasing import StructuredClone, find_cycle
from dshctl.core.yaml.nodes import YList, YMap, js_truthy
from dshctl.errors import DshctlError, Loc

BASE_LABEL = "cordis.yml"


@dataclass
class Patch:
    """One patch mapping and the layer it came from (``layer_index`` separates equal labels)."""

    value: Any
    layer: str = ""
    layer_index: int = 0


@dataclass
class PatchWarning:
    """A skipped patch. ``message`` is dsh's text; ``code`` names the case for tooling."""

    layer: str
    message: str
    loc: Loc | None = None
    code: str = ""
    target: Any = None

    def to_dict(self) -> dict[str, Any]:
        loc = self.loc or Loc("")
        return {"layer": self.layer, "message": self.message, "code": self.code,
                "file": loc.file, "line": loc.line, "column": loc.column}

    def __str__(self) -> str:
        """One located line: where, dsh's message, what to do instead."""
        where = f"{self.loc}: " if self.loc is not None and self.loc.file else f"{self.layer}: "
        hint = PATCH_HINTS.get(self.code, "").replace("<id>", str(self.target) if self.target is not None else "<id>")
        return f"{where}{self.message}" + (f" (hint: {hint})" if hint else "")


# What to do instead, by warning code (dsh only says what it skipped).
PATCH_HINTS = {
    "name-mismatch": "a patch cannot change a row's plugin; disable the row (`- id: <id>` with "
                     "`disabled: true`) and insert a new one with the other name (docs/agents.md)",
    "not-found": "no row has this id in the layers below; check the id, or use `- insert:` to add a row",
    "id-required": "give the entry an `id:`, or use `- insert:` to add rows",
    "insert-not-found": "the group to insert into has another id; check it (dshctl profile show)",
    "insert-not-group": "only a `cordis:group` row takes inserted children; insert at the top level instead",
}


@dataclass
class Touch:
    """One change a patch made: a row inserted, a row overridden, or rows inserted into a group."""

    kind: str  # "insert" | "override" | "insert-into"
    row: Any
    row_id: Any
    layer: str
    layer_index: int
    loc: Loc | None
    assigned: dict[str, Any] = field(default_factory=dict)
    assigned_locs: dict[str, Loc | None] = field(default_factory=dict)
    parent_id: Any = None


@dataclass
class RowSource:
    """dsh's dump provenance of one top-level row."""

    origin: str
    patched_by: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        if not self.patched_by:
            return self.origin
        return f"{self.origin}, patched by {', '.join(self.patched_by)}"


@dataclass
class PatchResult:
    rows: list
    warnings: list[PatchWarning]
    touches: list[Touch]
    sources: list[RowSource]
    index: dict  # jsvalue.map_key(id) -> row object, as the pass left it


class PatchError(DshctlError):
    """dsh's patcher would throw (a TypeError in JavaScript); the composition cannot be built."""


def _loc(mapping: Any, key: str | None = None) -> Loc | None:
    if isinstance(mapping, YMap):
        return mapping.loc_of(key) if key else mapping.loc
    return None


def _normalize(patches: Iterable[Any]) -> list[Patch]:
    """Accept ``Patch`` objects, ``(label, mapping)`` pairs, ``(label, [mappings])`` layers or bare
    mappings. A layer tuple is always its own layer."""
    out: list[Patch] = []
    for number, item in enumerate(patches):
        if isinstance(item, Patch):
            out.append(item)
        elif isinstance(item, tuple) and isinstance(item[1], list):
            out.extend(Patch(value, item[0], -1 - number) for value in item[1])
        elif isinstance(item, tuple):
            out.append(Patch(item[1], item[0], 0))  # consecutive pairs with one label: one layer
        else:
            out.append(Patch(item, "", 0))
    return out


class _Pass:
    """State of one application; the methods mirror the branches of dsh's loop."""

    def __init__(self, data: list, shared: bool, track: bool, touches: bool):
        self.data = data
        self.index: dict[Any, Any] = {}
        self.top_of: dict[int, int] = {}
        self.warnings: list[PatchWarning] = []
        self.touches: list[Touch] = []
        self.track = track  # dump provenance (RowSource per top-level row)
        self.record = track and touches  # Touch records for explain
        self.full_compare = shared  # aliases: a change can surface in rows we did not touch
        self.sources = [RowSource(BASE_LABEL) for _ in data]
        self.layer_start = len(data)
        self.before: dict[int, str] = {}
        self.building: set[int] = set()  # group config lists being indexed (alias cycles)

    # -- the index ---------------------------------------------------------------------------
    def build(self, entries: Any, tops: Sequence[int | None] | int | None, where: Loc | None) -> None:
        """Index ``entries`` (and group children) like dsh's ``buildMap``."""
        for pos, entry in enumerate(entries):
            top = tops[pos] if isinstance(tops, list) else tops
            if entry is None:
                raise PatchError("cannot index a null row (dsh fails with \"Cannot read properties "
                                 "of null (reading 'id')\")", loc=where,
                                 hint="remove the empty '-' item from the row list")
            if not isinstance(entry, dict):
                continue  # strings, numbers, lists: `entry.id` is undefined in JavaScript
            row_id = entry.get("id")
            if js_truthy(row_id):
                self.index[jsvalue.map_key(row_id)] = entry
            if top is not None:
                self.top_of[id(entry)] = top
            config = entry.get("config")
            if js_truthy(entry.get("group")) and isinstance(config, list):
                if id(config) in self.building:
                    raise _cycle_error(where)
                self.building.add(id(config))
                try:
                    self.build(config, top, where)
                finally:
                    self.building.discard(id(config))

    # -- dump provenance -----------------------------------------------------------------------
    def start_layer(self) -> None:
        self.layer_start = len(self.data)
        self.before = {}
        if self.track and self.full_compare:
            self.before = {i: jsvalue.to_json(r) for i, r in enumerate(self.data)}

    def note_change(self, top: int | None) -> None:
        if self.track and top is not None and top < self.layer_start and top not in self.before:
            self.before[top] = jsvalue.to_json(self.data[top])

    def close_layer(self, label: str) -> None:
        if self.track:
            for top, text in self.before.items():
                if jsvalue.to_json(self.data[top]) != text:
                    self.sources[top].patched_by.append(label)
        for _ in range(self.layer_start, len(self.data)):  # rows this layer appended: their origin
            self.sources.append(RowSource(label))

    # -- one patch -----------------------------------------------------------------------------
    def warn(self, p: Patch, code: str, message: str, loc: Loc | None, target: Any = None) -> None:
        self.warnings.append(PatchWarning(p.layer, message, loc, code, target))

    def apply(self, p: Patch) -> None:
        patch = p.value
        if not isinstance(patch, dict):
            raise PatchError("a patch entry must be a mapping", loc=_loc(patch))
        row_id = patch.get("id")
        insert = patch.get("insert")
        if js_truthy(insert):
            self.insert(p, row_id, insert)
            return
        if not js_truthy(row_id):
            self.warn(p, "id-required", "patch: id is required for non-insert patches", _loc(patch))
            return
        target = self.index.get(jsvalue.map_key(row_id))
        if target is None:
            self.warn(p, "not-found", f"patch: entry {jsvalue.format_arg(row_id)} not found",
                      _loc(patch, "id"), row_id)
            return
        name = patch.get("name")
        if js_truthy(name) and not jsvalue.strict_equal(name, target.get("name")):
            expected = jsvalue.format_arg(target.get("name"), "name" in target)
            self.warn(p, "name-mismatch",
                      f"patch: name mismatch for {jsvalue.format_arg(row_id)} (expected {expected}, "
                      f"got {jsvalue.format_arg(name)}), skipping", _loc(patch, "name"), row_id)
            return
        self.override(p, target, row_id, patch)

    def override(self, p: Patch, target: dict, row_id: Any, patch: dict) -> None:
        self.note_change(self.top_of.get(id(target)))
        assigned: dict[str, Any] = {}
        new_index_key = False
        for key, value in patch.items():
            if key == "id" or key == "name" or key == "insert":  # dsh: `{id, insert, name, ...overrides}`
                continue
            if key == "__proto__" and key not in target:
                # JavaScript's `row.__proto__ = v` hits Object.prototype's setter, not an own key
                # (unless the row already has one): the row's JSON never shows it. An object value
                # also becomes the row's prototype in dsh; dshctl does not model that.
                continue
            new_index_key = new_index_key or key not in target
            target[key] = value
            assigned[key] = value
        if new_index_key and jsvalue.has_index_key(target):
            _reorder_like_javascript(target)
        if isinstance(target, YMap) and isinstance(patch, YMap):
            target.value_locs = dict(target.value_locs)  # shared with the parsed file until now
            for key in assigned:  # the row now reads these values from the patch file
                target.value_locs[key] = patch.value_locs.get(key)
        if self.record:
            self.touches.append(Touch("override", target, row_id, p.layer, p.layer_index,
                                      _loc(patch), assigned,
                                      {k: _loc(patch, k) for k in assigned}))

    def insert(self, p: Patch, row_id: Any, insert: Any) -> None:
        patch = p.value
        where = _loc(patch, "insert")
        if js_truthy(row_id):
            target = self.index.get(jsvalue.map_key(row_id))
            if target is None:
                self.warn(p, "insert-not-found",
                          f"patch insert: entry {jsvalue.format_arg(row_id)} not found",
                          _loc(patch, "id"), row_id)
                return
            if not js_truthy(target.get("group")):
                self.warn(p, "insert-not-group",
                          f"patch insert: entry {jsvalue.format_arg(row_id)} is not a group",
                          _loc(patch, "id"), row_id)
                return
            items = _iterate(insert, where)
            top = self.top_of.get(id(target))
            self.note_change(top)
            if not isinstance(target.get("config"), list):
                target["config"] = YList(loc=where)
            target["config"].extend(items)
            self.build(items, top, where)
            if self.record:
                self.touches.append(Touch("insert-into", target, row_id, p.layer, p.layer_index,
                                          _loc(patch)))
                self._record_inserts(p, items, patch, row_id)
            return
        items = _iterate(insert, where)
        start = len(self.data)
        self.data.extend(items)
        self.build(items, list(range(start, start + len(items))), where)
        if self.record:
            self._record_inserts(p, items, patch, None)

    def _record_inserts(self, p: Patch, items: list, patch: Any, parent_id: Any) -> None:
        seq = patch.get("insert")
        for pos, row in enumerate(items):
            if not isinstance(row, dict):
                continue
            loc = seq.loc_of(pos) if isinstance(seq, YList) else _loc(patch, "insert")
            self.touches.append(Touch("insert", row, row.get("id"), p.layer, p.layer_index, loc,
                                      dict(row), {k: _loc(row, k) for k in row}, parent_id))
            if js_truthy(row.get("group")) and isinstance(row.get("config"), list):
                self._record_inserts(p, row["config"], {"insert": row["config"]}, row.get("id"))


def _reorder_like_javascript(mapping: dict) -> None:
    """Move array-index keys first, in place (the object keeps its identity and positions)."""
    ordered = [(k, mapping[k]) for k in jsvalue.js_key_order(list(mapping))]
    mapping.clear()
    mapping.update(ordered)


def _iterate(insert: Any, where: Loc | None) -> list:
    """``...insert`` in JavaScript: arrays spread their items, strings their characters."""
    if isinstance(insert, list):
        return list(insert)
    if isinstance(insert, str):
        return list(insert)
    raise PatchError("insert must be a list of rows (dsh fails with \"is not iterable\")", loc=where,
                     hint="write the rows to insert as a YAML list under 'insert:'")


def apply_patches(base: Sequence[Any], patches: Iterable[Any], *, clone: bool = True,
                  track: bool = True, touches: bool = True) -> PatchResult:
    """Apply ``patches`` (``Patch`` objects, ``(label, mapping)`` pairs or bare mappings) to ``base``.

    Neither input is modified when ``clone`` is true (the default): the base and the patch list are
    each cloned once, as dsh does, so inserted rows in the result never alias the caller's data.
    ``track=False`` skips all provenance (``sources`` then name only the origin layer of each row);
    ``touches=False`` keeps the dump provenance but records no ``Touch`` (``explain`` needs them).
    """
    collecting = gc.isenabled()
    gc.disable()  # the pass allocates many small objects and frees none: skip useless GC scans
    try:
        return _apply(base, patches, clone, track, touches)
    finally:
        if collecting:
            gc.enable()


def _apply(base: Sequence[Any], patches: Iterable[Any], clone: bool, track: bool,
           touches: bool) -> PatchResult:
    cloner = StructuredClone()
    data = cloner(list(base))
    plist = _normalize(patches)
    if clone:
        pc = StructuredClone()
        values = pc([p.value for p in plist])
        plist = [Patch(v, p.layer, p.layer_index) for v, p in zip(values, plist)]
        shared = cloner.shared or pc.shared
    else:
        shared = True
    state = _Pass(data, shared, track, touches)
    state.build(data, list(range(len(data))), getattr(base, "loc", None))
    run_pass(state, plist)
    if shared:
        node = find_cycle(data)
        if node is not None:
            raise _cycle_error(getattr(node, "loc", None) or getattr(base, "loc", None))
    return PatchResult(data, state.warnings, state.touches, state.sources, state.index)


def run_pass(state: _Pass, plist: Sequence[Patch]) -> None:
    """Apply ``plist`` in order, opening and closing a layer wherever the layer changes."""
    current: tuple[int, str] | None = None
    for p in plist:
        if current is None or current[0] != p.layer_index or current[1] != p.layer:
            if current is not None:
                state.close_layer(current[1])
            current = (p.layer_index, p.layer)
            state.start_layer()
        state.apply(p)
    if current is not None:
        state.close_layer(current[1])


def _cycle_error(where: Loc | None) -> PatchError:
    return PatchError("the rows form a cycle: a YAML alias made a row part of its own config (dsh "
                      "fails with \"Maximum call stack size exceeded\")", loc=where,
                      hint="write the shared value out instead of using a YAML alias (&anchor / *alias)")
