"""The YAML dialect: text -> value model with positions, and back (docs/dialect.md).

``nodes`` (YMap/YList/JsExpr), ``dialect`` (js-yaml JSON_SCHEMA semantics and limits), ``scalars``,
``jsonparse`` (JSON with positions), ``emit``/``scalar_style`` (text as js-yaml's dump writes it),
``jsyaml`` (js-yaml's loader ported) and ``verdict`` (its errors as dsh shows them), ``utf16``, ``yamlpos`` (spans of every node),
``roundtrip`` (text-preserving edits), ``filekinds``, ``jsvalue`` (the JavaScript rules of the values
js-yaml produces: Map keys, ===, String(n), JSON.stringify). May import ``dshctl.errors`` and the loose
``core`` modules (fsutil, diagnostics); never ``core.compose``, ``core.presets`` or anything above core.
"""
