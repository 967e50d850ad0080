"""Compose a profile: its layers flattened into one patch list, applied in one pass over ``[]``.

This is the public entry point the presets, host and lint code build on (see docs/compose.md).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from dshctl.core.gcpause import gc_paused
from dshctl.core.compose import layers as L
from dshctl.core.yaml.nodes import YList, YMap, js_truthy
from dshctl.core.compose.patching import Patch, PatchResult, RowSource, apply_patches

AGENT_PRESETS_ROW = "agent-presets"
TELEMETRY_ROW = "session-telemetry-otel"


@dataclass
class Provenance:
    """What ``explain`` and the dump need besides the rows: every change and each row's origin."""

    touches: list
    sources: list[RowSource]
    index: dict


@dataclass
class Composition:
    rows: list
    warnings: list
    layers: list
    provenance: Provenance
    home: Path = field(default_factory=Path)
    profile: str = ""


def flatten(layers: Sequence[L.Layer]) -> list[Patch]:
    """All layers' patches as one list, each tagged with its layer."""
    return [Patch(p, layer.label, i) for i, layer in enumerate(layers) for p in layer.patches]


def compose_layers(layers: Sequence[L.Layer], *, track: bool = True,
                   touches: bool = True) -> PatchResult:
    return apply_patches([], flatten(layers), track=track, touches=touches)


def compose_profile(home: Path, profile: str, *, patches: Sequence[Path] = (),
                    default_only: bool = False, launcher_overlays: bool = False,
                    bundle_roots: Sequence[Path] = (), touches: bool = True) -> Composition:
    """The composed rows of ``profile`` as dsh boots (``launcher_overlays``) or dumps them.

    ``default_only`` keeps the bundle layers only (dsh's ``--dump-default-config``); the user layers
    and ``--patch`` files are then not even read. ``touches=False`` skips the per-change records that
    only ``explain`` reads (``provenance.touches`` is then empty; the dump's row sources are kept).
    """
    with gc_paused():
        return _compose(Path(home), profile, patches, default_only, launcher_overlays, bundle_roots,
                        touches)


def _compose(home: Path, profile: str, patches: Sequence[Path], default_only: bool,
             launcher_overlays: bool, bundle_roots: Sequence[Path], touches: bool) -> Composition:
    layers = L.bundle_layers(home, profile, bundle_roots=bundle_roots)
    if not default_only:
        layers += L.user_layers(home, profile)
        layers += L.patch_layers(patches)
    result = compose_layers(layers, touches=touches)
    if launcher_overlays:
        overlay = launcher_layer(result.rows)
        if overlay.patches:
            layers.append(overlay)
            result = compose_layers(layers, touches=touches)
    return Composition(result.rows, result.warnings, layers,
                       Provenance(result.touches, result.sources, result.index), home, profile)


def launcher_layer(rows: list) -> L.Layer:
    """Layer 5, computed from the composition of layers 1-4 (dsh-config.md §6)."""
    from dshctl.core.data import presets_dir

    top = {row.get("id"): row for row in rows if isinstance(row, dict) and isinstance(row.get("id"), str)}
    patches: list[Any] = []
    presets = top.get(AGENT_PRESETS_ROW)
    if presets is not None:
        config = YMap(presets["config"]) if isinstance(presets.get("config"), dict) else YMap()
        config["roots"] = YList([YMap({"path": str(presets_dir()), "trust": "system"})])
        patches.append(YMap({"id": AGENT_PRESETS_ROW, "config": config}))
    if os.environ.get("DSH_TELEMETRY_DISABLED", "") != "" and TELEMETRY_ROW in top:
        patches.append(YMap({"id": TELEMETRY_ROW, "disabled": True}))
    return L.Layer("launcher", None, L.LAUNCHER, patches)


def iter_rows(rows: list, parents: tuple = ()):
    """Every row of a composed tree with its chain of group ancestors (outermost first)."""
    for row in rows:
        if not isinstance(row, dict):
            continue
        yield row, parents
        config = row.get("config")
        if js_truthy(row.get("group")) and isinstance(config, list):
            yield from iter_rows(config, parents + (row,))
