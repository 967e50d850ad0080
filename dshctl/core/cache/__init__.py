"""dshctl's persistent caches: sealed entries on disk (``disk.py``, under ``$XDG_CACHE_HOME/dshctl``,
size-bounded, atomic, never trusted when unreadable) and the lint result cache built on it
(``lint.py``), which imports no parser so a fully cached run never loads one.

May import the loose ``core`` modules only (data, diagnostics, fsutil); imported by ``core.presets``
(the roster cache), ``dshctl.lint`` and the CLI (``--no-cache``).
"""
