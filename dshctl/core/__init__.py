"""The pure core: no printing, no network, no event loop.

Rooms: ``yaml/`` (the dialect and value model, emitter, spans, round-trip edits, file kinds),
``compose/`` (profiles, layers, patching, composition, dump, explain, diff, edits), ``presets/``,
``jsexpr/``; loose modules are what every room shares (diagnostics, schemas, data, fsutil, home).
May import only ``dshctl.errors`` and ``dshctl.terminal``; every other package may import it.
"""
