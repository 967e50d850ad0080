"""The round-trip writer: unchanged files are byte-identical, edits touch only their spans."""
from __future__ import annotations

import os
import re
import stat

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corpus_files import ids, yaml_files
from dshctl.core import fsutil
from dshctl.core.yaml.dialect import load_yaml
from dshctl.core.yaml.nodes import JsExpr, to_plain
from dshctl.core.yaml.roundtrip import EditableYaml, flow
from dshctl.core.yaml.yamlpos import parse_spans
from dshctl.errors import DshctlError, ParseError

CORPUS_YAML = yaml_files()
CORPUS_LISTS = [p for p in CORPUS_YAML if load_yaml(p.read_text(encoding="utf-8"), p).value]
CORPUS_LISTS = [p for p in CORPUS_LISTS if isinstance(load_yaml(p.read_text(encoding="utf-8"), p).value, list)]


@pytest.mark.parametrize("path", CORPUS_YAML, ids=ids(CORPUS_YAML))
def test_corpus_unchanged_is_byte_identical(path):
    doc = EditableYaml.read(path)
    assert doc.dumps().encode("utf-8") == path.read_bytes()


@pytest.mark.parametrize("path", CORPUS_YAML, ids=ids(CORPUS_YAML))
def test_c_and_pure_parsers_give_the_same_spans(path):
    text = path.read_text(encoding="utf-8").removeprefix("\ufeff")
    assert parse_spans(text) == parse_spans(text, pure=True)


def _is_pure_insertion(before: str, after: str) -> bool:
    """``after`` is ``before`` with one contiguous piece of text inserted."""
    i = 0
    while i < len(before) and before[i] == after[i]:
        i += 1
    return after[len(after) - (len(before) - i):] == before[i:]


@pytest.mark.parametrize("path", CORPUS_LISTS, ids=ids(CORPUS_LISTS))
def test_corpus_edits_only_insert(path):
    doc = EditableYaml.read(path)
    before = doc.dumps()
    row = {"id": "zz-added", "name": "dsh-added", "config": {"port": JsExpr("env.PORT ?? 1"), "l": [1, 2]}}
    doc.append_item((), row)
    assert _is_pure_insertion(before, doc.dumps())
    assert doc.value[-1] == row and doc.value[:-1] == load_yaml(before, path).value
    first = next((i for i, v in enumerate(doc.value) if isinstance(v, dict) and v), None)
    if first is not None:
        mid = doc.dumps()
        doc.set_key((first,), "zz-flag", True)
        assert _is_pure_insertion(mid, doc.dumps())
        assert doc.value[first]["zz-flag"] is True


def test_bom_and_crlf_survive_edits(tmp_path):
    text = "\ufeff# c\r\n- id: a\r\n  name: b\r\n"
    doc = EditableYaml.from_text(text, tmp_path / "x.yml")
    assert doc.dumps() == text
    doc.set_key((0,), "disabled", True)
    assert doc.dumps() == "\ufeff# c\r\n- id: a\r\n  name: b\r\n  disabled: true\r\n"


def test_replace_value_keeps_everything_else():
    text = "# top\n- id: a   # keep me\n  config:\n    port: 1  # old\n  name: x\n\n# tail\n"
    doc = EditableYaml.from_text(text, "t.yml")
    doc.set_key((0,), "config", {"port": 2, "host": "h"})
    assert doc.dumps() == "# top\n- id: a   # keep me\n  config:\n    port: 2\n    host: h\n  name: x\n\n# tail\n"


def test_delete_first_key_on_dash_line_pulls_next_key_up():
    doc = EditableYaml.from_text("- id: a\n  name: b\n  disabled: true\n", "t.yml")
    doc.delete_key((0,), "id")
    assert doc.dumps() == "- name: b\n  disabled: true\n"
    doc.delete_key((0,), "disabled")
    assert doc.dumps() == "- name: b\n"
    doc.delete_key((0,), "name")
    assert doc.dumps() == "- {}\n"
    doc.delete_key((0,), "absent")  # a no-op
    assert doc.value == [{}]


def test_delete_first_key_keeps_comment_lines_below_it():
    doc = EditableYaml.from_text("- id: a\n  # about name\n  name: b\n", "t.yml")
    doc.delete_key((0,), "id")
    assert doc.value == [{"name": "b"}]
    assert "  # about name\n" in doc.dumps()


def test_append_to_empty_list_forms():
    top = EditableYaml.from_text("# Edit me\n[]\n", "p.yml")
    top.append_item((), {"id": "x", "disabled": True})
    assert top.dumps() == "# Edit me\n- id: x\n  disabled: true\n"
    nested = EditableYaml.from_text("- id: g\n  config: []\n", "p.yml")
    nested.append_item((0, "config"), {"id": "c", "name": "n"})
    assert nested.dumps() == "- id: g\n  config:\n    - id: c\n      name: 'n'\n"


def test_new_values_follow_the_files_sequence_indent():
    doc = EditableYaml.from_text("- id: a\n  inject:\n  - x\n", "t.yml")
    doc.set_key((0,), "isolate", {"l": ["p", "q"]})
    assert doc.dumps() == "- id: a\n  inject:\n  - x\n  isolate:\n    l:\n    - p\n    - q\n"
    doc.append_item((0, "inject"), "y")
    assert doc.dumps().startswith("- id: a\n  inject:\n  - x\n  - 'y'\n")


def test_flow_collections_are_rerendered_whole():
    doc = EditableYaml.from_text("- {id: a, name: b}  # row\n", "t.yml")
    doc.set_key((0,), "config", {"u": "http://x:80/", "list": ["a,b"]})
    assert doc.dumps() == "- {id: a, name: b, config: {u: http://x:80/, list: ['a,b']}}  # row\n"
    assert doc.value[0]["config"]["list"] == ["a,b"]


def test_editing_a_missing_path_is_a_clear_error():
    doc = EditableYaml.from_text("- id: a\n", "t.yml")
    with pytest.raises(DshctlError, match=r"no mapping at \$\[3\]"):
        doc.set_key((3,), "x", 1)
    with pytest.raises(DshctlError, match="no list at"):
        doc.append_item((0,), 1)


def test_read_reports_bad_yaml_with_location(tmp_path):
    p = tmp_path / "cordis.patch.yml"
    p.write_text("- id: a\n  id: b\n")
    with pytest.raises(ParseError) as err:
        EditableYaml.read(p)
    assert str(err.value.loc) == f"{p}:2:3"


def test_write_is_atomic_keeps_mode_and_checks_hash(tmp_path):
    p = tmp_path / "cordis.patch.yml"
    p.write_text("[]\n")
    os.chmod(p, 0o640)
    doc = EditableYaml.read(p)
    first_hash = doc.sha256
    doc.append_item((), {"id": "x", "disabled": True})
    doc.write(expect_sha256=first_hash)
    assert p.read_text() == "- id: x\n  disabled: true\n"
    assert stat.S_IMODE(p.stat().st_mode) == 0o640
    assert doc.sha256 == fsutil.content_hash(p.read_bytes())
    p.write_text("[]  # changed by someone else\n")
    doc.set_key((0,), "disabled", False)
    with pytest.raises(DshctlError, match="changed on disk"):
        doc.write(expect_sha256=fsutil.content_hash(b"- id: x\n  disabled: true\n"))
    assert p.read_text() == "[]  # changed by someone else\n"


def test_write_failure_leaves_the_old_file_and_no_temp(tmp_path, monkeypatch):
    p = tmp_path / "cordis.patch.yml"
    p.write_text("[]\n")
    doc = EditableYaml.read(p)
    doc.append_item((), {"id": "x"})

    def broken_fsync(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fsutil.os, "fsync", broken_fsync)
    with pytest.raises(OSError):
        doc.write()
    assert p.read_text() == "[]\n"
    assert os.listdir(tmp_path) == ["cordis.patch.yml"]


# -- property: random edit sequences -----------------------------------------------------------

_words = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=0x2FF, blacklist_characters="\x7f"),
                 min_size=1, max_size=12)
_keys = st.sampled_from(["id", "name", "config", "disabled", "inject", "x-note", "port", "a b"])
_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), _words,
                     _words.map(JsExpr), st.text(alphabet="ab\n :#", min_size=1, max_size=8))
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(_keys, inner, max_size=3)), max_leaves=8)

BASE = """# header comment
- id: first
  # comment before name
  name: dsh-one
  config:
    port: 1
    list:
      - a
# between rows
- id: second
  name: dsh-two
  config: {x: 1}
  inject: []
- {id: third, name: dsh-three}
# trailer
"""
COMMENT_LINES = [ln for ln in BASE.splitlines() if ln.lstrip().startswith("#")]

_edit = st.one_of(
    st.tuples(st.just("set"), st.integers(0, 2), _keys, _values),
    st.tuples(st.just("delete"), st.integers(0, 2), _keys, st.none()),
    st.tuples(st.just("append"), st.integers(0, 2), st.none(), _values),
)


def _apply(model: list, doc: EditableYaml, edit) -> bool:
    """Apply ``edit`` to the file and the model; True when it emptied a mapping (which is then
    re-rendered whole as ``{}``, taking comments between its keys with it)."""
    op, row, key, value = edit
    if op == "set":
        doc.set_key((row,), key, value)
        model[row][key] = value
    elif op == "delete":
        doc.delete_key((row,), key)
        had = model[row].pop(key, _MISSING) is not _MISSING
        return had and not model[row]
    else:
        doc.append_item((), value)
        model.append(value)
    return False


_MISSING = object()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_edit, max_size=8))
def test_random_edits_read_back_and_keep_comments(edits):
    doc = EditableYaml.from_text(BASE, "t.yml")
    model = to_plain(doc.value, js="keep")
    emptied = set()
    for edit in edits:
        if _apply(model, doc, edit):
            emptied.add(edit[1])
    text = doc.dumps()
    assert to_plain(load_yaml(text, "t.yml").value, js="keep") == model
    assert parse_spans(text) == parse_spans(text, pure=True)
    for line in COMMENT_LINES:
        if line.strip() == "# comment before name" and 0 in emptied:
            continue  # it sat between the keys of a mapping that was emptied
        assert line in text.splitlines(), line


def test_flow_renderer_reads_back():
    value = {"a": ["x, y", "[z]", None, True, 1.5, JsExpr("a ? {b} : c")], "k: v": {}}
    assert load_yaml(flow(value) + "\n", "f.yml").value == value
    assert re.fullmatch(r"\{.*\}", flow(value))


def test_an_edit_that_would_break_an_alias_is_refused_and_undone():
    text = "- id: a\n  config: &shared {port: 1}\n- id: b\n  config: *shared\n"
    doc = EditableYaml.from_text(text, "t.yml")
    with pytest.raises(DshctlError, match="cannot be made without changing other parts"):
        doc.set_key((0,), "config", {"port": 2})
    assert doc.dumps() == text and doc.value[1]["config"] == {"port": 1}
    doc.set_key((1,), "disabled", True)  # the document is still usable
    assert doc.value[1]["disabled"] is True
