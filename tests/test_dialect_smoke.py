from dshctl.core.dialect import load_yaml
from dshctl.core.nodes import JsExpr


def test_json_schema_scalars_and_js():
    doc = load_yaml("- {a: yes, b: 0o17, c: !!js x ?? 1}\n", "t.yml")
    assert doc.value == [{"a": "yes", "b": 15, "c": JsExpr("x ?? 1")}]
