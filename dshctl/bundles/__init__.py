"""Services: git sources, the content-addressed store, install/lock, npm ranges (docs/bundles.md).

May import ``dshctl.core`` and ``dshctl.errors``. Imported by ``dshctl.cli``; never by ``core``,
the runtime, the loader or the host.
"""
