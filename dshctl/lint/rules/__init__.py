"""The built-in lint rules; importing this package registers them."""
from dshctl.lint.rules import jsexpr, loading, presets, rows, schema  # noqa: F401
