"""Find the data dshctl ships: JSON Schemas and presets.

In an installed wheel they live in ``dshctl/_data/{schemas,presets}`` (pyproject force-includes them);
in an editable install or a checkout they are the repository's top-level ``schemas/`` and ``presets/``.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent  # .../dshctl


@lru_cache(maxsize=None)
def _data_dir(name: str) -> Path:
    packed = _PACKAGE / "_data" / name
    if packed.is_dir():
        return packed
    return _PACKAGE.parent / name  # editable install: <repo>/dshctl -> <repo>/<name>


def schemas_dir() -> Path:
    """The directory holding ``*.schema.json``."""
    return _data_dir("schemas")


def presets_dir() -> Path:
    """The directory holding the presets dshctl ships."""
    return _data_dir("presets")
