"""Resume a composition: apply the bundle layers once, then only the layers after them.

A running host recomposes on every save but re-reads only the user layers (dsh-config.md §10): the
bundle layers, always first, give the same pass state every time. :func:`snapshot` runs the one-pass
algorithm over them once and keeps that state; :func:`resume` continues it with the later layers.
The rows a later layer never looks up are handed out as they are (one twin per top-level row, made
once); a row a later patch looks up is first copied from the kept state (copy-on-write, per top-level
row), so the kept state is never changed and each resume starts from the same point.

The result must be exactly what ``compose_layers(prefix + tail)`` gives: rows (values, key order,
positions, aliasing), warnings (text, order), errors. Where that cannot be guaranteed cheaply, the
functions return None and the caller composes in one pass: YAML aliases or a ``!!js`` object reached
twice (sharing that per-row copies would break), a node of the tail that also appears in the prefix
(the same file given twice), a prefix that does not compose.
tests/core/test_compose_resume.py checks all of it against the one-pass composition.
"""
from __future__ import annotations

import operator
from dataclasses import dataclass, field
from itertools import compress
from typing import Any, Sequence

from dshctl.core.compose import layers as L
from dshctl.core.compose.aliasing import StructuredClone
from dshctl.core.compose.patching import Patch, PatchError, PatchWarning, _Pass, run_pass
from dshctl.core.gcpause import gc_paused
from dshctl.core.yaml.nodes import YList


@dataclass
class Snapshot:
    """The pass state after the prefix layers. ``private`` and ``index`` are never changed."""

    layers: list                 # the prefix layers: keeps their parsed nodes (``originals``) alive
    private: list                # top-level rows after the prefix; the source of every copy
    public: list                 # a twin of each top-level row, handed out while no patch touches it
    index: dict                  # map_key(id) -> entry in ``private`` (or a detached one), as left
    keys_of_top: list            # per top-level position: the index keys whose entry lives under it
    top_of: dict                 # id(indexed entry) -> its top-level position
    warnings: list
    originals: set               # ids of every parsed node the prefix cloned
    fresh: list                  # positions copied on every resume (see _hands_out)
    texts: dict = field(default_factory=dict)  # id(public row) -> (row, JSON text) for the digest


@dataclass
class Resumed:
    rows: list
    warnings: list[PatchWarning]
    public: frozenset            # positions whose row is the snapshot's public twin (unchanged)


def snapshot(layers: Sequence[L.Layer]) -> Snapshot | None:
    """The kept pass state of ``layers`` (the bundle layers), or None (then compose in one pass)."""
    with gc_paused():
        return _snapshot(list(layers))


def _snapshot(layers: list) -> Snapshot | None:
    plist, cloner = _cloned(layers, 0)
    if cloner is None:
        return None
    state = _Pass([], False, False, False)
    try:
        run_pass(state, plist)
    except PatchError:
        return None  # the one-pass composition raises it, every time
    data, index = state.data, dict(state.index)
    keys_of_top: list[list] = [[] for _ in data]
    top_of: dict[int, int] = {}
    for key, entry in index.items():
        top = state.top_of.get(id(entry))
        if top is None:
            return None  # every indexed entry is built under a top-level row; never seen otherwise
        keys_of_top[top].append(key)
        top_of[id(entry)] = top
    public = StructuredClone()(data)
    fresh = [pos for pos, row in enumerate(data) if not _hands_out(row)]
    return Snapshot(layers, data, public, index, keys_of_top, top_of, state.warnings,
                    set(cloner.memo), fresh)


def _cloned(layers: Sequence[L.Layer], first: int) -> tuple[list[Patch], StructuredClone | None]:
    """The layers' patches, cloned as the one pass clones them; no cloner when anything is shared."""
    plist = [Patch(p, layer.label, first + i) for i, layer in enumerate(layers) for p in layer.patches]
    cloner, originals = StructuredClone(), [p.value for p in plist]
    values = cloner(originals)
    del cloner.memo[id(originals)]  # a temporary list: its id may be reused once it is gone
    if cloner.shared or cloner.js_shared:
        return plist, None
    return [Patch(v, p.layer, p.layer_index) for v, p in zip(values, plist)], cloner


def _hands_out(row: Any) -> bool:
    """May this row be handed out to several trees in turn? Not if the loader writes into it: it
    gives a row without an id (at any depth of a group) a fresh random one."""
    if not isinstance(row, dict):
        return True
    row_id = row.get("id")
    if row_id is None or row_id == "":
        return False
    config = row.get("config")
    return not isinstance(config, list) or all(_hands_out(item) for item in config)


class _CopyOnWrite(dict):
    """The pass's index: an entry of the snapshot is replaced by a copy the moment it is looked up
    (the pass changes only rows it looked up, and group lists inside them)."""

    def __init__(self, snap: Snapshot, data: list):
        super().__init__(snap.index)
        self.snap = snap
        self.data = data

    def get(self, key, default=None):
        value = dict.get(self, key, default)
        top = self.snap.top_of.get(id(value))
        if top is not None and value is self.snap.index.get(key):
            self.thaw(top)
            value = dict.get(self, key, default)
        return value

    def thaw(self, top: int) -> None:
        """Copy top-level row ``top`` and every indexed entry under it with one clone, so the
        copies refer to each other as the originals do."""
        snap, cloner = self.snap, StructuredClone()
        self.data[top] = cloner(snap.private[top])
        for key in snap.keys_of_top[top]:
            value = dict.get(self, key)
            if value is snap.index.get(key):
                self[key] = cloner(value)


class _Resumed(_Pass):
    def __init__(self, snap: Snapshot, data: list):  # noqa: D107 - the state _snapshot left
        self.data = data
        self.index = _CopyOnWrite(snap, data)
        self.top_of, self.warnings, self.touches, self.sources = {}, [], [], []
        self.track = self.record = self.full_compare = False
        self.layer_start, self.before, self.building = len(data), {}, set()


def resume(snap: Snapshot, tail: Sequence[L.Layer]) -> Resumed | None:
    """``compose_layers(snap.layers + tail, track=False)``, or None (then compose in one pass).
    Raises the PatchError the one pass would raise."""
    with gc_paused():
        return _resume(snap, tail)


def _resume(snap: Snapshot, tail: Sequence[L.Layer]) -> Resumed | None:
    plist, cloner = _cloned(tail, len(snap.layers))
    if cloner is None or not snap.originals.isdisjoint(cloner.memo):
        return None
    _restore_public(snap)
    data = YList(snap.public)  # the one pass's rows are the clone of `[]`: a YList without positions
    state = _Resumed(snap, data)
    for top in snap.fresh:
        state.index.thaw(top)
    run_pass(state, plist)
    public = frozenset(compress(range(len(snap.public)), map(operator.is_, data, snap.public)))
    return Resumed(data, snap.warnings + state.warnings, public)


def _restore_public(snap: Snapshot) -> None:
    """A twin that something changed since it was handed out (a plugin writing into its config)
    is replaced by a new copy: the composition never sees the change, as with a fresh clone."""
    changed = list(compress(range(len(snap.public)), map(operator.ne, snap.public, snap.private)))
    for top in changed:
        snap.texts.pop(id(snap.public[top]), None)
        snap.public[top] = StructuredClone()(snap.private[top])
