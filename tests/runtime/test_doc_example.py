"""The plugin example in docs/runtime.md runs as written."""
from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "runtime.md"


def test_runtime_doc_example_runs():
    text = DOC.read_text(encoding="utf-8")
    blocks = re.findall(r"<!-- test: runtime-example -->\n```python\n(.*?)```", text, re.S)
    assert len(blocks) == 2, "docs/runtime.md should hold the plugin and its usage as two tested blocks"
    plugin_lines = blocks[0].strip().splitlines()
    assert len(plugin_lines) <= 25
    namespace: dict = {"__name__": "runtime_doc_example"}
    exec(compile("\n".join(blocks), str(DOC), "exec"), namespace)  # the asserts live in the example
    assert namespace["greeter"].name == "greeter"
