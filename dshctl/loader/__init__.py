"""The loader: entry lists mounted as trees of fibers, reconciled by id, transactionally.

See the ``## Loader API`` section of docs/runtime.md. May import the runtime, ``core`` and
``dshctl.errors``; imported by the host and the CLI, never by the runtime or core.
"""
from .entry import Entry
from .errors import ConfigFileError, LoaderError, LoaderUpdateError, PluginUnavailable
from .include import INCLUDE_NAME, Include
from .loader import Loader
from .preset_tree import PresetMount, mount_preset
from .report import RowOutcome, UpdateReport
from .resolve import SHIPPED_PLUGINS, PluginResolver
from .tree import Tree

__all__ = [
    "ConfigFileError", "Entry", "INCLUDE_NAME", "Include", "Loader", "LoaderError",
    "LoaderUpdateError", "PluginResolver", "PluginUnavailable", "PresetMount", "RowOutcome",
    "SHIPPED_PLUGINS", "Tree", "UpdateReport", "mount_preset",
]
