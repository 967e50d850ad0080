"""``preset.yml``: display text only, read with dsh's tolerance (dsh-config.md §7, metadata.ts).

A field of the wrong type is dropped on its own; an unreadable, unparsable or non-mapping file gives
empty metadata, silently, as in dsh. Each of those is kept as a problem so lint can warn (naming the
js-yaml error at file:line:col, or the value to quote), but nothing here fails.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from dshctl.errors import Loc, ParseError

from .health import decode
from .model import Metadata, MetadataProblem

KNOWN_FIELDS = ("name", "description", "order")


def parse_metadata(data: bytes, path: str | Path) -> Metadata:
    """Metadata from the bytes of ``preset.yml``, read as dsh reads it: ``yaml.load`` with js-yaml's
    default schema (``jsyaml.DEFAULT``), so ``2024-01-01`` is a date and ``<<`` merges. Positions for
    the problems come from the fast reader when it can read the file."""
    # the readers are imported on the first parse: a scan whose cache holds every file never needs them
    from dshctl.core.yaml.default_schema import load_default_yaml
    from dshctl.core.yaml.nodes import to_plain

    file = str(path)
    text = decode(data)
    try:
        # The same reading as `dshctl lint`'s (core/yaml/default_schema.py), so both say the same.
        positions = load_default_yaml(text, file).value
    except ParseError as err:
        return Metadata(problems=(MetadataProblem(
            f"preset.yml is not valid YAML ({err.js_message or err.message}); dsh ignores the whole file",
            err.loc or Loc(file),
            "fix the YAML there; until then dsh shows the preset under its id, with no description"),))
    except RecursionError:
        return Metadata(problems=(MetadataProblem("preset.yml nests too deeply; dsh ignores the whole file",
                                                  Loc(file)),))
    value = to_plain(positions)
    if not isinstance(value, dict):
        return Metadata(problems=(MetadataProblem("preset.yml is not a mapping; dsh ignores the whole file",
                                                  _loc(positions, None, file)),))
    problems: list[MetadataProblem] = []
    fields: dict[str, Any] = {}
    for key in ("name", "description"):
        if key in value:
            field = value[key]
            if isinstance(field, str) and field.strip():
                fields[key] = field.strip()
            else:
                problems.append(_dropped_text(key, field, positions, text, file))
    if "order" in value:
        order = value["order"]
        if isinstance(order, (int, float)) and not isinstance(order, bool) and math.isfinite(order):
            fields["order"] = order
        else:
            problems.append(MetadataProblem("preset.yml `order` must be a finite number; dsh drops it",
                                            _loc(positions, "order", file)))
    for key in value:
        if key not in KNOWN_FIELDS:
            problems.append(MetadataProblem(f"preset.yml has unknown key `{key}`; dsh ignores it "
                                            "(only name, description and order exist)",
                                            _key_loc(positions, key, file)))
    return Metadata(problems=tuple(problems), **fields)


def _dropped_text(key: str, field: Any, positions: Any, text: str, file: str) -> MetadataProblem:
    """Why a name or description is lost; a value that js-yaml typed gets a hint to quote it."""
    from dshctl.core.yaml import jsyaml

    loc = _loc(positions, key, file)
    kind = ("a date" if isinstance(field, jsyaml.JsDate) else "a boolean" if isinstance(field, bool)
            else "a number" if isinstance(field, (int, float)) else None)
    source = _plain_source(text, loc)
    if kind is None and field is None and source and source not in ("~",):
        kind = "null"
    if kind is None or not source:
        return MetadataProblem(f"preset.yml `{key}` must be a non-blank string; dsh drops it", loc)
    return MetadataProblem(
        f"preset.yml `{key}` reads as {kind} in dsh (js-yaml's default schema), not text; dsh drops it",
        loc, f"quote it to keep it: {key}: {json.dumps(source, ensure_ascii=False)}")


def _plain_source(text: str, loc: Loc) -> str | None:
    """The unquoted scalar that starts at ``loc`` (to the end of its line or a comment)."""
    if not loc.line:
        return None
    lines = text.splitlines()
    if loc.line > len(lines):
        return None
    rest = lines[loc.line - 1][loc.column - 1:]
    if rest[:1] in ("'", '"', "|", ">", "!", "&", "*", "[", "{", ""):
        return None
    return rest.split(" #", 1)[0].strip() or None


def unreadable_metadata(exc: OSError, path: Path) -> Metadata:
    reason = exc.strerror or str(exc)
    return Metadata(problems=(MetadataProblem(f"preset.yml cannot be read ({reason}); dsh ignores it",
                                              Loc(str(path))),))


def _loc(mapping: Any, key: str | None, file: str) -> Loc:
    if key is None:
        return getattr(mapping, "loc", None) or Loc(file, 1, 1)
    return (mapping.loc_of(key) if hasattr(mapping, "loc_of") and key in mapping else None) or Loc(file, 1, 1)


def _key_loc(mapping: Any, key: str, file: str) -> Loc:
    return (mapping.key_loc(key) if hasattr(mapping, "key_loc") and key in mapping else None) or Loc(file, 1, 1)


def sort_key(preset_id: str, metadata: Metadata) -> tuple:
    """Within one root: presets with ``order`` first, ascending; the rest by id."""
    if metadata.order is not None:
        return (0, metadata.order, preset_id)
    return (1, 0, preset_id)
