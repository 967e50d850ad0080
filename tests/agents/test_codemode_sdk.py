"""The Python SDK generated from tool schemas: TypedDicts per argument/output object, unsafe names through
the subscript path, and a property: whatever the schemas, the declaration block parses as Python."""
import ast
import re

from hypothesis import given, settings, strategies as st

from dshctl.agents.codemode.sdk import camel_case, is_bare_identifier, render_sdk

SCHEMAS = [
    {"name": "read_file", "description": 'Read a file.\nReturns "text".',
     "parameters": {"type": "object", "required": ["path"], "additionalProperties": False, "properties": {
         "path": {"type": "string", "description": "Relative path"},
         "mode": {"type": "string", "enum": ["text", "bytes"]},
         "range": {"type": "object", "properties": {"start": {"type": "integer"}}}}},
     "output": {"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}}},
    {"name": "my-tool", "description": "Exotic name", "parameters": {"type": "object", "properties": {"class": {"type": "string"}}}},
    {"name": "class", "parameters": {"type": "object", "properties": {}}},
    {"name": "_private", "parameters": {"type": "object", "properties": {"x": {"type": ["string", "null"]}}}},
]


def code_of(sdk: str) -> str:
    return re.search(r"```python\n(.*)\n```", sdk, re.S).group(1)


def test_the_declaration_block_for_a_known_tool_set():
    code = code_of(render_sdk(SCHEMAS))
    assert code == '''from typing import Any, Literal, NotRequired, Protocol, TypedDict

class ToolCallError(Exception):
    toolName: str

class PrivateArgs(TypedDict):
    x: NotRequired[str | None]
    # Additional keys beyond those declared are allowed.

class ReadFileArgsRange(TypedDict):
    start: NotRequired[int]
    # Additional keys beyond those declared are allowed.

class ReadFileArgs(TypedDict):
    # Relative path
    path: str
    mode: NotRequired[Literal["text", "bytes"]]
    range: NotRequired[ReadFileArgsRange]

class ReadFileOutput(TypedDict):
    text: str
    # Additional keys beyond those declared are allowed.

class Tools(Protocol):
    # tools["_private"](args: PrivateArgs) -> str
    # tools["class"](args: dict[str, Any]) -> str
    # tools["my-tool"](args: dict[str, Any]) -> str
    #   Exotic name
    async def read_file(self, args: ReadFileArgs) -> ReadFileOutput:
        """Read a file. Returns \\"text\\"."""

tools: Tools'''
    ast.parse(code)


def test_the_prompt_names_both_required_arguments():
    sdk = render_sdk([])
    assert "`code`" in sdk and "`description`" in sdk and "await tools.name(args)" in sdk
    assert "class Tools(Protocol):\n    pass" in code_of(sdk)


def test_identifier_rules():
    assert is_bare_identifier("路径") and not is_bare_identifier("ﬁeld") and not is_bare_identifier("a-b")
    assert camel_case("read_file") == "ReadFile" and camel_case("9lives") == "Tool9lives"
    assert camel_case("my-tool.v2") == "MyToolV2"


names = st.text(min_size=1, max_size=12)
scalars = st.sampled_from([{"type": t} for t in ("string", "number", "integer", "boolean", "null")]) | \
    st.builds(lambda v: {"type": "string", "enum": v}, st.lists(st.text(max_size=8), min_size=1, max_size=3)) | \
    st.builds(lambda v: {"type": "integer", "const": v}, st.integers(-2 ** 60, 2 ** 60))
schemas = st.recursive(
    scalars | st.just({}) | st.just({"type": "weird"}),
    lambda inner: st.builds(lambda items: {"type": "array", "items": items}, inner)
    | st.builds(lambda props, closed, desc: {"type": "object", "properties": props, "required": list(props)[:1],
                                             "additionalProperties": not closed, "description": desc},
                st.dictionaries(names, inner, max_size=4), st.booleans(), st.text(max_size=20))
    | st.builds(lambda branches: {"oneOf": branches}, st.lists(inner, min_size=1, max_size=3)),
    max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.builds(lambda n, d, p, o: {"name": n, "description": d, "parameters": p, "output": o},
                          names, st.text(max_size=30), schemas, schemas),
                max_size=5, unique_by=lambda s: s["name"]))
def test_the_sdk_always_parses_as_python(tools):
    ast.parse(code_of(render_sdk(tools)))


def test_deep_list_nesting_stays_parseable():
    node = {"type": "string"}
    for _ in range(400):
        node = {"type": "array", "items": node}
    ast.parse(code_of(render_sdk([{"name": "deep", "parameters": {"type": "object", "properties": {"x": node}}}])))
