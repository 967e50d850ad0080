"""The Python SDK the model programs against, generated from the registered tool schemas (dsh's py-types).

One ``TypedDict`` per tool argument object and output object (and per nested object), one awaitable
method per tool on a ``Tools`` protocol, ``tools: Tools`` and ``ToolCallError``. Tools and fields whose
names are not safe Python identifiers (not ``str.isidentifier()``, not NFKC-stable, a keyword,
``__debug__``, or underscore-leading for tools) are not declared as attributes: a tool is listed as a
``tools["name"](...)`` comment, an object with such a field degrades to ``dict[str, Any]``. The text is
deterministic (tools sorted by name) and always parses as Python — a property test holds it to that.

Unlike dsh, whose generator runs on a JavaScript engine and must guess the interpreter's Unicode tables,
this one runs in the same interpreter as the worker, so ``isidentifier`` *is* the worker's rule. Where we
differ on purpose: a ``type`` list (``["string", "null"]``) renders as a union instead of ``Any``.
"""
from __future__ import annotations

import json
import keyword
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

RESERVED = frozenset(keyword.kwlist) | {"__debug__"}
TYPING_ORDER = ("Any", "Literal", "NotRequired", "Protocol", "TypedDict")
MAX_CLASS_NAME_BASE = 120
MAX_LIST_NESTING = 180          # CPython's tokenizer refuses more than 200 open brackets on a line
MAX_DEPTH = 400                 # any deeper schema is rendered as Any (recursion stays bounded)
_UNPRINTABLE = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x9f]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_SCALARS = {"string": "str", "number": "float", "integer": "int", "boolean": "bool"}

INSTRUCTIONS = """## Writing code for run_code

`run_code` has two required arguments: `code`, the body of an async Python function (top-level `await` \
and `return` both work), and `description`, a few words saying what the program does. When it runs, only \
two names below exist: `tools` and `ToolCallError`. The `TypedDict` classes are documentation of shapes, \
not objects you can use: pass plain `dict`/`list` values, e.g. `await tools.name({"field": 1})`.

- Call a tool as `await tools.name(args)`; names that are not plain identifiers (or start with `_`) use \
subscripts: `await tools["my-tool"](args)`. A call returns the tool's result value (the return type of \
its method below). Arguments must be lossless JSON.
- A failed call raises `ToolCallError`; its `toolName` names the tool and its message says what went \
wrong. Catch it with `try`/`except` to recover.
- Independent read-only calls may run together under `asyncio.gather`: calls a tool declares safe run \
concurrently, the others alone and in the order you made them. Use `await` to sequence dependent work.
- Your output is what you `print(...)` and the value you `return` (lossless JSON). Nothing else from the \
run reaches the conversation, so extract what you need.

The available tools:"""


@dataclass
class _State:
    classes: list[str] = field(default_factory=list)
    used: set[str] = field(default_factory=set)
    counters: dict[str, int] = field(default_factory=dict)
    typing: set[str] = field(default_factory=lambda: {"Protocol"})


def nfkc(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def is_bare_identifier(name: str) -> bool:
    """Emittable as-is: an identifier the interpreter accepts and keeps as written (it NFKC-folds)."""
    return name.isidentifier() and nfkc(name) == name


def _field_ok(name: str) -> bool:
    # A ``__token`` field would be name-mangled inside a class body and declare a different key.
    return is_bare_identifier(name) and name not in RESERVED and not (name.startswith("__") and not name.endswith("__"))


def _tool_ok(name: str) -> bool:
    return is_bare_identifier(name) and name not in RESERVED and not name.startswith("_")


def _continues(char: str) -> bool:
    return char != "_" and ("a" + char).isidentifier()


def camel_case(raw: str) -> str:
    """A class-name segment from any string: non-identifier characters and ``_`` split words."""
    parts, current = [], ""
    for char in raw:
        if _continues(char):
            current += char
        elif current:
            parts.append(current)
            current = ""
    if current:
        parts.append(current)
    joined = nfkc("".join(part[0].upper() + part[1:] for part in parts))
    if not joined[:1].isidentifier():
        joined = "Tool" + joined
    return nfkc(joined)


def _cap(base: str) -> str:
    return base[:MAX_CLASS_NAME_BASE]


def _allocate(base: str, state: _State) -> str:
    capped, name = _cap(base), _cap(base)
    if name in state.used:
        n = state.counters.get(capped, 2)
        while f"{capped}{n}" in state.used:
            n += 1
        name = f"{capped}{n}"
        state.counters[capped] = n + 1
    state.used.add(name)
    return name


def _escape_invisible(text: str) -> str:
    text = _UNPRINTABLE.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def describe(node: Any) -> str | None:
    """A node's description on one line with invisible characters escaped, or ``None``."""
    text = node.get("description") if isinstance(node, dict) else None
    if not isinstance(text, str):
        return None
    collapsed = _escape_invisible(re.sub(r"\s+", " ", text)).strip()
    return collapsed or None


def _docstring(text: str | None, indent: int) -> list[str]:
    if text is None:
        return []
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return [f'{"    " * indent}"""{escaped}"""']


def py_literal(value: Any) -> str:
    if value is True:
        return "True"
    if value is False:
        return "False"
    if isinstance(value, str):
        return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(value, ensure_ascii=False))
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value)


def _scalar(node: dict, broad: str, state: _State) -> str:
    for key in ("const", "enum"):
        if key in node:
            values = [node["const"]] if key == "const" else node["enum"]
            if isinstance(values, list) and values and all(
                    isinstance(v, (str, int, float, bool)) and not (isinstance(v, float) and v != v) for v in values):
                state.typing.add("Literal")
                return f"Literal[{', '.join(py_literal(v) for v in values)}]"
    return broad


def render_type(node: Any, class_name: str, state: _State, list_depth: int = 0, depth: int = 0) -> str:
    """The Python type text for one JSON-Schema node, declaring ``TypedDict`` classes into ``state``."""
    if not isinstance(node, dict) or depth > MAX_DEPTH:
        state.typing.add("Any")
        return "Any"
    branches = node.get("oneOf", node.get("anyOf"))
    if isinstance(branches, list) and branches:
        return " | ".join(render_type(b, _cap(nfkc(f"{class_name}{i + 1}")), state, list_depth, depth + 1)
                          for i, b in enumerate(branches))
    kind = node.get("type")
    if isinstance(kind, list) and kind and all(isinstance(k, str) for k in kind):
        return " | ".join(render_type({**node, "type": k}, class_name, state, list_depth, depth + 1) for k in kind)
    if kind in _SCALARS:
        return _scalar(node, _SCALARS[kind], state)
    if kind == "null":
        return "None"
    if kind == "array":
        items = node.get("items")
        if not isinstance(items, dict) or list_depth >= MAX_LIST_NESTING:
            state.typing.add("Any")
            return "list[Any]" if not isinstance(items, dict) else "Any"
        return f"list[{render_type(items, class_name, state, list_depth + 1, depth + 1)}]"
    if kind == "object":
        return _render_object(node, class_name, state, depth)
    state.typing.add("Any")
    return "Any"


def _render_object(node: dict, class_name: str, state: _State, depth: int) -> str:
    properties = node.get("properties") or {}
    if not isinstance(properties, dict) or not class_name or not all(_field_ok(k) for k in properties) \
            or (not properties and node.get("additionalProperties") is not False):
        state.typing.add("Any")
        return "dict[str, Any]"
    name = _allocate(class_name, state)
    state.typing.add("TypedDict")
    required = set(node.get("required") or []) if isinstance(node.get("required"), list) else set()
    lines = [f"class {name}(TypedDict):"]
    for key, child in properties.items():
        # A field line is its own logical line: nesting restarts at 1 (room for ``NotRequired[``).
        annotation = render_type(child, _cap(nfkc(name + camel_case(key))), state, 1, depth + 1)
        text = describe(child)
        if text is not None:
            lines.append(f"    # {text}")
        if key in required:
            lines.append(f"    {key}: {annotation}")
        else:
            state.typing.add("NotRequired")
            lines.append(f"    {key}: NotRequired[{annotation}]")
    if node.get("additionalProperties") is not False:
        lines.append("    # Additional keys beyond those declared are allowed.")
    if len(lines) == 1:
        lines.append("    pass")
    state.classes.append("\n".join(lines))
    return name


def render_sdk(schemas: list[dict]) -> str:
    """The whole system-prompt section. ``schemas``: ``{name, description?, parameters?, output?}``
    (``output`` absent: the call resolves to the tool's text, ``str``)."""
    state = _State()
    members, statements = [], 0
    for schema in sorted(schemas, key=lambda s: s["name"]):
        tool = schema["name"]
        args = render_type(schema.get("parameters", {"type": "object"}), f"{camel_case(tool)}Args", state)
        output = schema.get("output")
        result = "str" if output is None else render_type(output, f"{camel_case(tool)}Output", state)
        if _tool_ok(tool):
            doc = _docstring(describe(schema), 2)
            members.append(f"    async def {tool}(self, args: {args}) -> {result}:{'' if doc else ' ...'}")
            members.extend(doc)
            statements += 1
        else:
            members.append(f"    # tools[{py_literal(tool)}](args: {args}) -> {result}")
            text = describe(schema)
            if text is not None:
                members.append(f"    #   {text}")
    body = members if statements else ["    pass", *members]
    imports = ", ".join(s for s in TYPING_ORDER if s in state.typing)
    classes = "".join(f"{c}\n\n" for c in state.classes)
    code = (f"from typing import {imports}\n\nclass ToolCallError(Exception):\n    toolName: str\n\n"
            f"{classes}class Tools(Protocol):\n" + "\n".join(body) + "\n\ntools: Tools")
    return f"{INSTRUCTIONS}\n\n```python\n{code}\n```"
