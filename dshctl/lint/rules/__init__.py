"""The built-in lint rules, one module per family; importing this package registers them.

May import ``dshctl.lint.registry``, ``dshctl.lint.rows`` and ``core``; the registry never imports
this package (``dshctl.lint`` does, so the owner of the rules feeds the registry).
"""
from dshctl.lint.rules import jsexpr, loading, presets, rows, schema  # noqa: F401
from dshctl.lint.rules import comments  # noqa: F401,E402 - last: it documents the post-pass
