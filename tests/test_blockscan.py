"""The line-oriented reader (``core/yaml/blockscan.py``) against the event builder it stands in for.

Whenever ``blockscan.scan`` returns a tree, the event builder (libyaml's events, ``eventtree``) must
accept the same text and build the same tree: same types, values, key order and line:col of every
mapping, key, value and item. Whenever the event builder refuses a text, or would mark it for
js-yaml's check, ``scan`` must have declined it (so every error and its position still come from
there). Checked on generated documents in and near the subset, on the shared corpus and on the
benchmark's 20-bundle home.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_files import yaml_files
from dshctl.core.yaml import blockscan, dialect, eventtree
from dshctl.core.yaml.dialect import load_yaml
from dshctl.core.yaml.nodes import JsExpr, YList, YMap
from dshctl.core.yaml.verdict import suspect_text
from dshctl.errors import ParseError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))


def difference(fast, slow, where="$"):
    """None when the trees are equal down to every position, else where they part."""
    if type(fast) is not type(slow):
        return f"{where}: {type(fast).__name__} != {type(slow).__name__}"
    if isinstance(fast, YMap):
        if fast.loc != slow.loc or list(fast) != list(slow):
            return f"{where}: mapping {fast.loc} {list(fast)} != {slow.loc} {list(slow)}"
        for k in fast:
            if fast.key_locs[k] != slow.key_locs[k] or fast.value_locs[k] != slow.value_locs[k]:
                return f"{where}.{k}: positions differ"
            found = difference(fast[k], slow[k], f"{where}.{k}")
            if found:
                return found
        return None
    if isinstance(fast, YList):
        if fast.loc != slow.loc or len(fast) != len(slow) or fast.item_locs != slow.item_locs:
            return f"{where}: sequence {fast.loc} {fast.item_locs} != {slow.loc} {slow.item_locs}"
        for i, (a, b) in enumerate(zip(fast, slow)):
            found = difference(a, b, f"{where}[{i}]")
            if found:
                return found
        return None
    if isinstance(fast, JsExpr):
        return None if (fast.expr, fast.loc) == (slow.expr, slow.loc) else f"{where}: {fast!r} != {slow!r}"
    if isinstance(fast, float) and math.isnan(fast):
        return None if math.isnan(slow) else f"{where}: nan != {slow!r}"
    return None if fast == slow else f"{where}: {fast!r} != {slow!r}"


def full_path(text: str, js: bool):
    """What ``load_yaml`` reads without the fast reader: the event builder's tree, checked against
    js-yaml's value wherever the two may part (a block scalar, a suspect text), js-yaml's value
    (without positions) where they do."""
    slow = eventtree.read_events(text, "f.yml", js, [])
    if slow.suspect or suspect_text(text):
        slow = dialect._checked(slow, text, "f.yml", js)
    return slow


def check(text: str, js: bool = True) -> bool:
    """Assert the contract for one text; True when the fast reader took it."""
    fast = blockscan.scan(text, "f.yml", js)
    try:
        slow = full_path(text, js)
    except (ParseError, AssertionError):
        assert fast is None, f"the fast reader accepted a text the event builder refuses: {text!r}"
        return False
    if fast is None:
        return False
    assert not slow.empty and not slow.notes, text
    found = difference(fast, slow.value)
    assert found is None, f"{found}\n--- text:\n{text}"
    return True


# -- generated documents ---------------------------------------------------------------------------

_WORDS = ["a", "id", "name", "x y", "true", "False", "null", "~", "0", "-1", "010", "0x1F", "1e3",
          "1e400", ".inf", ".NaN", "3.50", "yes", "2026-12-01", "@scope/pkg", "http://h:80/p",
          "a#b", "a:b", "a, b", "[x]", "{y}", "a #c", "x: y", "-", "?", ":", "- x", "'q'", '"q"',
          "it's", "日本", "\U0001F600", "a\\b", "!x", "&a", "*a", "|", ">", "%", "`", "a  b", " ",
          "", "\xa0", "a\u2028b", "---", "...", "<<"]
_PLAIN_WORDS = ["a", "id", "b-1", "x y", "true", "null", "0", "3000", "127.0.0.1", "@scope/pkg", "日本"]
_word = st.one_of(st.sampled_from(_PLAIN_WORDS), st.sampled_from(_PLAIN_WORDS), st.sampled_from(_WORDS))
_key_word = st.one_of(st.sampled_from(["id", "name", "config", "port", "tags", "disabled"]),
                      st.sampled_from(["1", "null", "true", "a b", "k-1", "x.y", "@k", "日", "-k", "'k'",
                                       "\"k\"", "k:", "a#b", "1e400", ".nan"]))


def _scalar_text(word: str, style: str) -> str:
    if style == "single":
        return "'" + word.replace("'", "''") + "'"
    if style == "double":
        return '"' + word + '"'
    if style == "js":
        return "!!js " + word
    if style == "flow":
        return "[" + word + "]"
    return word


_scalar = st.builds(_scalar_text, _word,
                    st.sampled_from(["plain"] * 6 + ["single", "double", "js", "flow"]))
_flow_word = st.one_of(_word, st.builds(_scalar_text, _word, st.sampled_from(["single", "double"])))
_flow = st.lists(_flow_word, max_size=4).map(lambda ws: "[" + ", ".join(ws) + "]")
_flow_map = st.lists(st.tuples(_key_word, _flow_word), min_size=1, max_size=3).map(
    lambda kvs: "{" + ", ".join(f"{k}: {v}" for k, v in kvs) + "}")
_value = st.one_of(_scalar, _flow, _flow_map, st.sampled_from(["[]", "{}", "[ ]", "[a,b]", "[a ,  b]",
                                                     "!!js ''", "''", '""']))
_comment = st.sampled_from(["", "", "", "", "", " # c", "  #c", "#c", " #"])
_block_header = st.one_of(st.sampled_from(["|", "|-", ">", ">-", "!!js >-", "!!js |", "| # c"]),
                          st.sampled_from(["|+", "|2", ">1", "|#", "!!js", ">-  ", "|- x"]))
_good_block_line = st.sampled_from(["a", "b c", "x: y", "- z", "# h", "", "", "日本", "'q' #", "a  b "])
_bad_block_line = st.sampled_from(["a ", "  more", " ", "\"x\"", "k:", "[a]", "{b}", "&a", "*a", "!!js x", "|",
                                   "\\n", "---", "..."])


@st.composite
def _block_text(draw, indent: int) -> list[str]:
    """The lines of a block scalar's body below a header (some deeper than ``indent``, some not)."""
    depth = indent + draw(st.sampled_from([1, 2, 2, 2, 4, 4, 0]))
    lines = []
    for _ in range(draw(st.integers(0, 5)) if draw(st.integers(0, 15)) == 9 else draw(st.integers(1, 5))):
        rare = draw(st.integers(0, 15)) == 9  # (hypothesis favours the ends of a range)
        text = draw(_bad_block_line if rare else _good_block_line)
        pad = draw(st.sampled_from([depth + 1, max(depth - 1, 0)])) if draw(st.integers(0, 15)) == 9 else depth
        lines.append(" " * pad + text if text else "")
    return lines


@st.composite
def _block(draw, indent: int, depth: int) -> list[str]:
    """Lines of a block mapping or sequence at ``indent``."""
    is_map = draw(st.booleans())
    count = draw(st.integers(1, 4))
    keys = draw(st.lists(_key_word, min_size=count, max_size=count, unique=True)) if is_map else []
    lines: list[str] = []
    for i in range(count):
        if draw(st.integers(0, 9)) == 0:  # a blank or comment line
            lines.append(" " * draw(st.integers(0, 6)) + draw(st.sampled_from(["", "# note", "#"])))
        pad = " " * indent
        nested = depth < 3 and draw(st.integers(0, 2)) == 0
        if is_map:
            head = pad + keys[i] + draw(st.sampled_from([":", ":", ":", " :"]))
            if not nested and draw(st.integers(0, 15)) == 9:
                lines.append(head + " " + draw(_block_header))
                lines += draw(_block_text(indent))
                continue
            if not nested:
                lines.append(head + " " * draw(st.sampled_from([1, 1, 1, 0, 2])) + draw(_value)
                             + draw(_comment))
                continue
            lines.append(head + draw(_comment))
            lines += draw(_block(indent + draw(st.sampled_from([0, 1, 2, 2, 2, 4])), depth + 1))
            continue
        dash = pad + "-" + " " * draw(st.sampled_from([1, 1, 1, 0, 2, 3]))
        if not nested and draw(st.integers(0, 15)) == 9:
            lines.append(dash + draw(_block_header))
            lines += draw(_block_text(indent))
            continue
        if not nested:
            lines.append(dash + draw(_value) + draw(_comment))
            continue
        child = draw(_block(len(dash), depth + 1))  # compact: the first child line after the dash
        first = next((n for n, line in enumerate(child) if line.strip(" ")[:1] not in ("", "#")), 0)
        lines += child[:first] + [dash + child[first].lstrip(" ")] + child[first + 1:]
    return lines


@st.composite
def documents(draw) -> str:
    lines = draw(_block(0, 0))
    text = "\n".join(lines) + draw(st.sampled_from(["\n", "", "\n\n", "\n# end\n"]))
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 2]))):  # near the subset: a stray character
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(list(":-#'\" \n[]{}&*!|>\t\r,?%"))) + text[at:]
    return text


@settings(max_examples=600, deadline=None)
@given(documents(), st.booleans())
def test_generated_documents_read_alike(text, js):
    check(text, js)


@st.composite
def block_documents(draw) -> str:
    """Rows with block scalars, mostly in the subset: ``- id: ...`` rows with a block scalar as a
    value (perhaps under ``config:``), or block scalars as sequence items."""
    good = st.sampled_from(["|", "|-", ">", ">-", "!!js >-", "!!js |", "|-  # c"])
    lines: list[str] = []
    items = draw(st.booleans())
    for i in range(draw(st.integers(1, 4))):
        if items:
            lines.append("- " + draw(_block_header if draw(st.integers(0, 9)) == 7 else good))
            lines += draw(_block_text(0))
            continue
        lines.append(f"- id: r{i}")
        base = 2
        if draw(st.booleans()):
            lines.append("  config:")
            base = 4
        lines.append(" " * base + "text: " + draw(_block_header if draw(st.integers(0, 9)) == 7 else good))
        lines += draw(_block_text(base))
        if draw(st.booleans()):
            lines.append(" " * base + "after: 1")
    return "\n".join(lines) + draw(st.sampled_from(["\n", "\n", "", "\n\n"]))


@settings(max_examples=500, deadline=None)
@given(block_documents(), st.booleans())
def test_generated_block_scalars_read_alike(text, js):
    check(text, js)


def test_the_block_scalar_generator_reaches_the_fast_path():
    taken = []

    @settings(max_examples=200, deadline=None, derandomize=True)
    @given(block_documents())
    def run(text):
        taken.append(check(text))

    run()
    assert sum(taken) >= 40, f"only {sum(taken)} of {len(taken)} generated texts took the fast path"


_quoted_word = st.builds(_scalar_text, st.sampled_from(_PLAIN_WORDS + ["a, b", "]", "}", "x: y", "#", "it's", ""]),
                         st.sampled_from(["single", "double"]))
_flow_item = st.one_of(st.sampled_from(_PLAIN_WORDS), _quoted_word, _quoted_word)


@st.composite
def flow_documents(draw) -> str:
    """Rows whose values are one-line flow sequences and mappings with quoted items."""
    lines: list[str] = []
    for i in range(draw(st.integers(1, 3))):
        lines.append(f"- id: r{i}")
        for j in range(draw(st.integers(1, 3))):
            items = draw(st.lists(_flow_item, max_size=4))
            if items and draw(st.integers(0, 7)) == 3:  # near the subset, or outside it
                items[-1] = draw(st.sampled_from(_WORDS))
            if draw(st.booleans()):
                keys = draw(st.lists(_key_word, min_size=len(items), max_size=len(items)))
                text = "{" + draw(st.sampled_from([", ", ",", " ,  "])).join(
                    f"{k}:{'' if draw(st.integers(0, 7)) == 3 else ' '}{v}" for k, v in zip(keys, items)) + "}"
            else:
                text = "[" + draw(st.sampled_from([", ", ",", " , "])).join(items) + "]"
            lines.append(f"  {'-' if draw(st.integers(0, 7)) == 3 else ''}k{j}: {text}{draw(_comment)}")
    return "\n".join(lines) + "\n"


@settings(max_examples=500, deadline=None)
@given(flow_documents(), st.booleans())
def test_generated_flow_collections_read_alike(text, js):
    check(text, js)


def test_the_flow_generator_reaches_the_fast_path():
    taken = []

    @settings(max_examples=200, deadline=None, derandomize=True)
    @given(flow_documents())
    def run(text):
        taken.append(check(text) and ("{" in text or "'" in text or '"' in text))

    run()
    assert sum(taken) >= 40, f"only {sum(taken)} of {len(taken)} generated texts took the fast path"


def test_the_generator_reaches_the_fast_path():
    """The property above is worth little if the fast reader declined every generated text."""
    taken = []

    @settings(max_examples=200, deadline=None, derandomize=True)
    @given(documents())
    def run(text):
        taken.append(check(text))

    run()
    assert sum(taken) >= 40, f"only {sum(taken)} of {len(taken)} generated texts took the fast path"


@pytest.mark.parametrize("text", [
    "a:\nb: 1\n", "a:   \n  - x\nb: !!js  x\n", "a:\n- x\n- [p, q]\nc: {}\n",
    "- a:\n- b\n- c: !!js \"q\"\n  d: []\n", "k: # c\nz: 1\n", "- - a\n  - b\n-   x: 1\n    y: 2\n",
    "- 'a b': 'x''y' # c\n  \"q\": \"z\"\n  k : v\n  1: 2\n  null: [a,  b c ,d]\n",
    "a: b, c [d] {e}\n", "[]\n", "# only\n[]  # empty\n", "- a:\n  - x\n  - y\n- b\n",
    "a:\n  b:\n    c:\nd: 1\n", "x: 1.0\n1.0: a\n.nan: b\n", "key: [a, b]   # tags\n",
    "a: |\n  x\n", "a: >-\n  x\n", "a: |  # c\n   x\n\n    y: 1\n   - z\n\n\nb: 2\n",
    "- >\n a\n b\n\n\n c\n- |-\n  # not a comment\n", "k: !!js >-\n  a ??\n  b\n",
    "- k: !!js |\n    x\n  j: 1\n", "a:\n- |\n\n\n  x\n", "{a: 1}\n", "a: {b: 1}\n",
    "args: ['-y', \"@scope/x\", 3, 'it''s']  # c\n", "e: {node: '>=20', 'q k': x y, 1: null}\n",
    "- ['a,b', \"]\"]\n", "k: [ 'a' ,b ]\n",
])
def test_known_shapes_take_the_fast_path(text):
    assert check(text), f"declined: {text!r}"


@pytest.mark.parametrize("text", [
    "a: &x 1\nb: *x\n", "a: |+\n  x\n", "a: |2\n  x\n", "a: |\n  x", "a: >\n  x\n   y\n",
    "a: |\n  \n  x\n", "a: |\nb: 1\n", "a: |x\n  y\n", "a: !!js |\n", "a: 'x\n  y'\n", "a: x\n  y\n",
    "a: \"\\t\"\n", "a: {b: {c: 1}}\n", "a: [b, ]\n", "a: {b: 1, b: 2}\n", "a: {b:1}\n",
    "a: [\"\\t\"]\n", "a: ['x' : y]\n", "a: [a, 'b' c]\n", "a: {b: 1} x\n", "a: {b: }\n", "%YAML 1.2\n---\na: 1\n", "---\na: 1\n", "a: 1\n---\n",
    "a:\tb\n", "a: 1\r\n", "\ufeffa: 1\n", "a: 1\na: 2\n", "- \n- a\n", ": a\n", "a\n", "",
    "  a: 1\n", "a: 1\n b: 2\n", "a: !!str 1\n", "a: !!js\n", "? a\n: b\n", "a: [b, [c]]\n",
    "a: [b,\n  c]\n", "a: x: y\n", "a: - b\n",
])
def test_everything_else_goes_to_the_event_builder(text):
    assert blockscan.scan(text, "f.yml", True) is None


def test_the_js_tag_is_left_to_the_event_builder_where_it_is_unknown():
    assert blockscan.scan("a: !!js x\n", "f.yml", False) is None
    assert check("a: !!js x\n", True)


def test_what_the_fast_reader_takes_is_never_suspect_for_a_real_reason():
    """load_yaml skips suspect_text for the fast reader's texts: every reason it names is outside
    the subset, so only content (a comment or prompt ending in `!`, `&`) can still trip it."""
    for text in ["a: 1\n\tb: 2\n", "a: 1\r\n", "%YAML 1.2\n---\na: 1\n", "  a: 1\n", "# c\n  a: 1\n",
                 "a: 1\n---x: 2\n", "a: !!js\n  x\n", "a: &x\n  b: 1\n", "a: !x\n", "a:\n  b: !!js\n",
                 "- !!js\n", "a: |\n  x\n%b\n", "a: |\n  x\n---x\n", "a: |\n\t x\n"]:
        assert suspect_text(text), text
        assert blockscan.scan(text, "f.yml", True) is None, text
    for text in ["a: 1 # done!\n", "a: |\n  stop!\n  &\n", "a: 'x!'\n", "- x: 'b &'\n"]:
        assert suspect_text(text) and check(text), text


def test_errors_are_the_event_builders():
    with pytest.raises(ParseError, match="duplicated mapping key") as err:
        load_yaml("a: 1\nb: 2\na: 3\n", "dup.yml")
    assert (err.value.loc.line, err.value.loc.column) == (3, 1)


# -- real files --------------------------------------------------------------------------------------

def test_corpus_files_read_alike():
    taken = total = 0
    for path in yaml_files():
        text = path.read_text(encoding="utf-8")
        if text.startswith("\ufeff"):
            text = text[1:]
        js = path.name != "preset.yml"
        total += 1
        taken += check(text, js)
    assert taken >= total * 0.6, f"the fast path took only {taken} of {total} corpus files"


def test_the_benchmark_home_is_read_entirely_by_the_fast_path(tmp_path):
    from bench_compose import build_home

    home = build_home(tmp_path, 4, 200)
    files = sorted(home.rglob("*.yml"))
    assert len(files) == 5
    for path in files:
        assert check(path.read_text(encoding="utf-8")), path


def test_long_keys_are_left_to_the_event_builder():
    """libyaml refuses a simple key past 1024 characters; the remembered keys must not let one in
    (here each key is first seen where the general path reads it, then where the loop does)."""
    for key in ["a" * 1000, "a" * 1023, "a" * 1025, "a" * 1100, "b" * 990 + " " * 40,
                "'" + "''" * 600 + "'"]:
        for text in [f"{key}: 1\n", f"- {key}: 1\n", f"x:\n  {key}: 1\n", f"x:\n  {key}:\n"]:
            check(text)


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("?-,]}[{ a\n\t\u2028\x1c:")), max_size=30))
def test_the_flow_query_test_finds_what_its_regex_finds(text):
    from dshctl.core.yaml.blocktokens import FLOW_QUERY_OR_DASH, flow_query_or_dash

    assert flow_query_or_dash(text) == (FLOW_QUERY_OR_DASH.search(text) is not None)
