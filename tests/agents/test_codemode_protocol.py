"""The host side of the fd-3 protocol: strict parsing, rebuilt frames, dsh's lossless-number rules."""
import json

from hypothesis import given, settings, strategies as st

from dshctl.agents.codemode import protocol as p


def frame(text: str):
    return p.rebuild_frame(p.parse_frame(text.encode()))


def test_truncation_marker_is_dsh_text():
    assert p.log_truncation_marker(65536) == "[dsh-code-runtime-python] log capture truncated at 65536 bytes"


def test_frames_are_rebuilt_without_forged_fields():
    assert frame('{"type":"boot-ack","extra":1}') == {"type": "boot-ack"}
    assert frame('{"type":"log","text":"hi","truncated":1}') == {"type": "log", "text": "hi"}
    assert frame('{"type":"log","text":"hi","truncated":true}') == {"type": "log", "text": "hi", "truncated": True}
    assert frame('{"type":"call","id":3,"global":"tools","name":"x","args":{"a":1},"evil":2}') == \
        {"type": "call", "id": 3, "global": "tools", "name": "x", "args": {"a": 1}}
    assert frame('{"type":"done","value":null,"x":1}') == {"type": "done", "value": None}
    assert frame('{"type":"done","error":{"kind":"exception","message":"m","stack":"s"}}') == \
        {"type": "done", "error": {"kind": "exception", "message": "m"}}


def test_junk_is_dropped_not_raised():
    for text in ['null', '42', '"s"', '[]', '{}', '{"type":"nope"}', '{"type":"log"}', '{"type":"log","text":5}',
                 '{"type":"call","id":"1","global":"tools","name":"x","args":1}',
                 '{"type":"call","id":1,"global":"tools","name":"x"}',
                 '{"type":"call","id":1.5,"global":"tools","name":"x","args":1}',
                 '{"type":"call","id":true,"global":"tools","name":"x","args":1}',
                 '{"type":"call","id":-1,"global":"tools","name":"x","args":1}',
                 '{"type":"call","id":1,"global":7,"name":"x","args":1}',
                 '{"type":"done","error":{"kind":"timeout","message":"x"}}',
                 '{"type":"done","error":"boom"}', '{"type":"done","error":{"kind":"exception"}}',
                 'not json', '{"type":"boot-ack"', '\xff', '{"a":NaN}', '{"a":Infinity}']:
        assert frame(text) is None, text


def test_call_args_must_be_lossless():
    base = '{"type":"call","id":1,"global":"tools","name":"x","args":%s}'
    for bad in ["1e400", "-1e400", "-0", "-0.0", '[1, {"a": -0.0}]', "9007199254740993",
                "-9007199254740993", "9" * 400]:
        assert frame(base % bad) is None, bad
    for good in ["0", "1.5", "9007199254740992", "18446744073709551616", '"9007199254740993"', "null"]:
        assert frame(base % good) is not None, good


def test_deep_values_are_refused_not_crashing():
    deep = "[" * 100000 + "]" * 100000
    assert frame('{"type":"call","id":1,"global":"t","name":"x","args":%s}' % deep) is None
    assert p.lossless_violation(json.loads("[" * 300 + "]" * 300)) is not None


def test_done_value_budget_and_losslessness():
    for value in [None, True, 0, -1.5, 'a"b\\', [], {}, [1, "x", None], {"a": [1, 2], "b": {"c": "d"}}, "é"]:
        exact = len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())
        assert p.check_done_value(value, exact) is None, value
        assert p.check_done_value(value, exact - 1) == "over-budget", value
    assert p.check_done_value(float("inf"), 100) == "non-lossless"
    assert p.check_done_value(["x" * 1000, float("nan")], 100) == "over-budget"   # over budget wins
    assert p.check_done_value([float("nan"), "x" * 1000], 100) == "over-budget"
    assert p.check_done_value(2 ** 60 + 1, 100) == "non-lossless"
    assert p.check_done_value(2 ** 60, 100) is None


def test_beyond_safe_integral_doubles_cross_exactly():
    line = p.encode_frame({"type": "reply", "id": 0, "ok": True, "value": [float(2 ** 60), 2 ** 60]})
    assert json.loads(line)["value"] == [float(2 ** 60), 2 ** 60]
    assert int(json.loads(line)["value"][0]) == 1152921504606846976


json_values = st.recursive(st.none() | st.booleans() | st.integers(-2 ** 53, 2 ** 53) | st.text()
                           | st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not (f == 0 and str(f)[0] == "-")),
                           lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
                           max_leaves=20)


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_lossless_values_round_trip_through_a_call_frame(value):
    if p.lossless_violation(value) is not None:     # lone surrogates in generated text
        return
    line = p.encode_frame({"type": "call", "id": 7, "global": "tools", "name": "n", "args": value})
    rebuilt = p.rebuild_frame(p.parse_frame(line.rstrip(b"\n")))
    assert rebuilt == {"type": "call", "id": 7, "global": "tools", "name": "n", "args": value}
    size = len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())
    assert p.check_done_value(value, size) is None and p.check_done_value(value, size - 1) == "over-budget"
