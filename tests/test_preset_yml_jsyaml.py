"""`preset.yml` as js-yaml's default schema reads it, in `dshctl lint` and `dshctl preset lint` alike.

dsh reads preset.yml with `yaml.load(raw)`: merge keys merge, a merge of anything but a mapping is
js-yaml's `cannot merge mappings; …` error, a second document is `expected a single document …` (no
position in js-yaml; dshctl's location is where that document starts). Each text below and each
generated one is loaded by js-yaml 4.2.0 in Node (the `dump_oracle` fixture) and by both lint paths.
"""
from __future__ import annotations

import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dshctl.core.presets.metadata import KNOWN_FIELDS, parse_metadata
from dshctl.lint.pipeline import lint_text
from test_jsyaml_errors import js_verdicts

PATH = "presets/reviewer/preset.yml"
JS_POSITION = re.compile(r" \((\d+):(\d+)\)$")

TEXTS = [
    "d: &d\n  name: Rev\nname: Reviewer\n<<: *d\ndescription: Reads code\n",
    "base: &b {description: From the base, order: 2}\n<<: *b\nname: Mine\n",
    "a: &a {name: A}\nb: &b {order: 1}\n<<: [*a, *b]\n",
    "name: Reviewer\ndescription: x\ns: &s hi\n\n\n\n<<: *s\n",
    "l: &l [1, 2]\n<<: *l\n",
    "m: &m {name: M}\nl: &l [*m, 3]\n<<: *l\n",
    "<<: {name: Inline, description: merged}\norder: 3\n",
    "<<: 7\n",
    "name: A\n---\nname: B\n",
    "# header\nname: A\n...\n# more\nname: B\n",
    "---\nname: A\n---\n",
    "name: 2024-01-01\ndescription: ok\n",
    "name: Plain\ndescription: plain text\norder: 1\n",
    "name: Tagged\nextra: !!set {a, b}\n",
    "name: !!binary aGVsbG8=\ndescription: bytes\n",
    "name: 42\n",
]


def _second_document_line(text: str) -> int:
    """Where the second document starts: its `---`, or its first content after a `...`."""
    lines = text.splitlines()
    first = 1 if lines and lines[0].startswith("---") else 0
    for number, line in enumerate(lines[first:], start=first + 1):
        if line.startswith("---"):
            return number
        if line.startswith("..."):
            return next(n for n, rest in enumerate(lines[number:], start=number + 1)
                        if rest.strip() and not rest.lstrip().startswith("#"))
    raise AssertionError(f"no second document in {text!r}")


def _lint_parse_errors(text):
    return [d for d in lint_text(text, PATH) if d.rule == "parse"]


def _check(text: str, verdict) -> None:
    diags = lint_text(text, PATH)
    parse = [d for d in diags if d.rule == "parse"]
    metadata = parse_metadata(text.encode(), Path(PATH))
    kind, what = verdict
    if kind == "error":
        # dshctl lint: js-yaml's reason at js-yaml's position (its message is reason + " (line:col)")
        assert len(parse) == 1, (text, diags)
        position = JS_POSITION.search(what)
        reason = what[:position.start()] if position else what
        assert parse[0].message == reason, text
        if position:
            assert (parse[0].line, parse[0].column) == (int(position[1]), int(position[2])), text
        else:  # a second document: js-yaml has no position, dshctl names the line where it starts
            assert reason == "expected a single document in the stream, but found more"
            assert parse[0].line == _second_document_line(text), text
        # dshctl preset lint: js-yaml's whole message, as `preset list` has always said it
        [problem] = metadata.problems
        assert problem.message == f"preset.yml is not valid YAML ({what}); dsh ignores the whole file"
        assert (problem.loc.line, problem.loc.column) == (parse[0].line, parse[0].column)
        return
    assert parse == [], (text, parse)
    if not isinstance(what, dict):
        return
    unknown = sorted(m[1] for d in diags if d.rule == "schema" and (m := re.match(r"unknown key '(.*)'$", d.message)))
    assert unknown == sorted(k for k in what if k not in KNOWN_FIELDS), text
    name = what.get("name")
    if isinstance(name, str) and name.strip() and not re.fullmatch(r"\d{4}-\d\d-\d\dT.*Z", name):
        assert metadata.name == name.strip(), text
    elif "name" in what:  # not text to dsh (a date, a Uint8Array, a number, …): dropped
        assert metadata.name is None, text


def test_handwritten_preset_files_read_as_js_yaml_reads_them(dump_oracle):
    verdicts = js_verdicts(dump_oracle, TEXTS, schema="default")
    for text, verdict in zip(TEXTS, verdicts, strict=True):
        _check(text, verdict)
    errors = [v[1] for v in verdicts if v[0] == "error"]
    assert sum(e.startswith("cannot merge mappings; the provided source object is unacceptable (") for e in errors) >= 3
    assert errors.count("expected a single document in the stream, but found more") == 3
    # The merge is real: no '<<' is left for the schema rule to call unknown.
    assert all("'<<'" not in d.message for t in TEXTS for d in lint_text(t, PATH))


def test_the_scalar_merge_is_reported_where_js_yaml_reports_it(dump_oracle):
    text = TEXTS[3]
    [(kind, message)] = js_verdicts(dump_oracle, [text], schema="default")
    assert kind == "error" and message.startswith("cannot merge mappings; the provided source object is unacceptable")
    [finding] = _lint_parse_errors(text)
    assert f"({finding.line}:{finding.column})" in message


_keys = st.sampled_from(["name", "description", "order", "x", "<<", "a", "b"])
_values = st.sampled_from(["Rev", "' spaced '", "1", "2024-01-01", "*m", "*s", "*l", "[*m]", "[*m, *s]",
                           "{name: N}", "~", "[]"])
_lines = st.lists(st.tuples(_keys, _values).map(lambda kv: f"{kv[0]}: {kv[1]}"), max_size=5)
_anchors = "m: &m {name: Anchored, x: 1}\ns: &s scalar\nl: &l [1]\n"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batch=st.lists(st.tuples(_lines, st.sampled_from(["", "---\n", "...\n"]), _lines), min_size=10, max_size=10))
def test_generated_preset_files_read_as_js_yaml_reads_them(dump_oracle, batch):
    texts = [_anchors + "\n".join(head) + "\n" + sep + "\n".join(tail) + "\n" for head, sep, tail in batch]
    for text, verdict in zip(texts, js_verdicts(dump_oracle, texts, schema="default"), strict=True):
        _check(text, verdict)
