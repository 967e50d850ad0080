"""Agent presets: discovery across roots, health, metadata, the scan cache, authoring and lint.

May import ``core.yaml``, ``core.compose`` (the profile's ``agent-presets`` row) and the loose ``core``
modules; never anything above core.
"""
from .cache import ScanCache
from .discovery import discover, load_preset, preset_at
from .lint import lint_presets
from .model import COMPOSITION_FILE, METADATA_FILE, Health, Metadata, Preset, Root, Roster, Skipped, is_preset_id
from .store import load_scan_cache, save_scan_cache
from .roots import assemble, make_root, resolve_roots, shipped_root, user_root

__all__ = ["COMPOSITION_FILE", "METADATA_FILE", "Health", "Metadata", "Preset", "Root", "Roster",
           "ScanCache", "Skipped", "assemble", "discover", "is_preset_id", "lint_presets", "load_preset",
           "load_scan_cache", "make_root", "save_scan_cache", "preset_at", "resolve_roots", "shipped_root", "user_root"]
