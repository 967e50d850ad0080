"""``preset.yml``: display text only, read with dsh's tolerance (dsh-config.md §7).

A field of the wrong type is dropped on its own; an unreadable, unparsable or non-mapping file gives
empty metadata. Each of those is kept as a problem so lint can warn, but nothing here fails.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from dshctl.errors import Loc, ParseError

from .health import decode
from .model import Metadata, MetadataProblem

KNOWN_FIELDS = ("name", "description", "order")


def parse_metadata(data: bytes, path: Path) -> Metadata:
    """Metadata from the bytes of ``preset.yml`` (js-yaml default schema; see docs/presets.md)."""
    file = str(path)
    try:
        from dshctl.core.yaml.dialect import load_yaml  # first parse only (see health.py)

        doc = load_yaml(decode(data), path, js=False)
    except ParseError as err:
        return Metadata(problems=(MetadataProblem(f"preset.yml is not valid YAML ({err.message}); "
                                                  "dsh ignores the whole file", err.loc or Loc(file)),))
    value = doc.value
    if not isinstance(value, dict):
        loc = getattr(value, "loc", None) or Loc(file, 1, 1)
        return Metadata(problems=(MetadataProblem("preset.yml is not a mapping; dsh ignores the whole file",
                                                  loc),))
    problems: list[MetadataProblem] = []
    fields: dict[str, Any] = {}
    for key in ("name", "description"):
        if key in value:
            text = value[key]
            if isinstance(text, str) and text.strip():
                fields[key] = text.strip()
            else:
                problems.append(MetadataProblem(f"preset.yml `{key}` must be a non-blank string; dsh drops it",
                                                _loc(value, key, file)))
    if "order" in value:
        order = value["order"]
        if isinstance(order, (int, float)) and not isinstance(order, bool) and math.isfinite(order):
            fields["order"] = order
        else:
            problems.append(MetadataProblem("preset.yml `order` must be a finite number; dsh drops it",
                                            _loc(value, "order", file)))
    for key in value:
        if key not in KNOWN_FIELDS:
            problems.append(MetadataProblem(f"preset.yml has unknown key `{key}`; dsh ignores it "
                                            "(only name, description and order exist)",
                                            _key_loc(value, key, file)))
    return Metadata(problems=tuple(problems), **fields)


def unreadable_metadata(exc: OSError, path: Path) -> Metadata:
    reason = exc.strerror or str(exc)
    return Metadata(problems=(MetadataProblem(f"preset.yml cannot be read ({reason}); dsh ignores it",
                                              Loc(str(path))),))


def _loc(mapping: Any, key: str, file: str) -> Loc:
    return (mapping.loc_of(key) if hasattr(mapping, "loc_of") else None) or Loc(file, 1, 1)


def _key_loc(mapping: Any, key: str, file: str) -> Loc:
    return (mapping.key_loc(key) if hasattr(mapping, "key_loc") else None) or Loc(file, 1, 1)


def sort_key(preset_id: str, metadata: Metadata) -> tuple:
    """Within one root: presets with ``order`` first, ascending; the rest by id."""
    if metadata.order is not None:
        return (0, metadata.order, preset_id)
    return (1, 0, preset_id)
