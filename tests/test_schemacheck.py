"""The compiled schema checks (core/schemacheck) give jsonschema's verdict, and `validate` with them
gives exactly jsonschema's diagnostics: on generated instances (schema-guided, then mutated, so both
valid and invalid ones), and on every corpus file against every shipped schema."""
from __future__ import annotations

import random

import pytest
from hypothesis import given, settings, strategies as st

from dshctl.core import schemas
from dshctl.core.schemacheck import Unsupported, compile_schemas, equal
from dshctl.core.yaml.nodes import JsExpr, YList, YMap, to_plain
from dshctl.lint.pipeline import load
from dshctl.lint.plan import kind_of

from corpus_files import CORPUS

NAMES = sorted(schemas.SCHEMAS)
RESOURCES = schemas.lint_resources()
WILD_SCALARS = [None, True, False, 0, 1, -1, 1.0, 2.5, float("nan"), "", " ", "x", "a:b", "cordis:group",
                "@scope/pkg", "light", "zh", "queue", "\t", "\u00e9", JsExpr("x"), JsExpr("")]
STRINGS = ["x", "row-1", "@scope/pkg", "./local", "cordis:group", "a b", " ", "", "id:colon", "light",
           "dark", "system", "zh", "en", "queue", "steer", "ctx"]
KEYS = ["id", "name", "config", "disabled", "group", "inject", "isolate", "intercept", "insert", "dsh",
        "profile", "bundle", "client", "bundles", "patch", "order", "description", "__jsExpr", "extra"]


def jsonschema_verdict(value, name: str) -> bool:
    return schemas._validator(name).is_valid(to_plain(value))


def fast_verdict(value, name: str) -> bool:
    return schemas._fast_checks()[name](value)


class Instances:
    """Values shaped by a schema (required keys, property types, branches), each node replaced by a
    wild value now and then, so that about half of them break the schema somewhere."""

    def __init__(self, rnd: random.Random, mutate: float = 0.06) -> None:
        self.rnd, self.mutate = rnd, mutate

    def wild(self, depth: int = 0):
        r = self.rnd.random()
        if depth > 3 or r < 0.6:
            return self.rnd.choice(WILD_SCALARS)
        if r < 0.75:
            return self.seq(self.wild(depth + 1) for _ in range(self.rnd.randrange(3)))
        if r < 0.85:
            return self.obj({"__jsExpr": self.rnd.choice(["x", "", 1, JsExpr("y")])})
        return self.obj({self.rnd.choice(KEYS): self.wild(depth + 1) for _ in range(self.rnd.randrange(3))})

    def seq(self, items):
        items = list(items)
        return YList(items) if self.rnd.random() < 0.5 else items

    def obj(self, mapping: dict):
        return YMap(mapping) if self.rnd.random() < 0.5 else dict(mapping)

    def of(self, schema, resource: str, depth: int = 0):
        rnd = self.rnd
        if depth > 7 or rnd.random() < self.mutate or not isinstance(schema, dict):
            return self.wild(depth)
        if "$ref" in schema and rnd.random() < 0.8:
            target, _, pointer = schema["$ref"].partition("#")
            target = target or resource
            node = RESOURCES[target]
            for step in pointer.split("/")[1:]:
                node = node[step]
            return self.of(node, target, depth + 1)
        if "if" in schema and rnd.random() < 0.5:  # aim at the then branch (a group row's child rows)
            then = schema.get("then", {})
            schema = {**schema, "properties": {**schema.get("properties", {}), **then.get("properties", {})},
                      "required": schema.get("required", []) + schema["if"].get("required", [])}
            schema["properties"]["group"] = {"const": True}
        for branches in ("anyOf", "oneOf"):
            if branches in schema:
                branch = rnd.choice(schema[branches])
                rest = {k: v for k, v in schema.items() if k != branches}
                merged = {**rest, **branch} if isinstance(branch, dict) else rest
                return self.of(merged, resource, depth + 1)
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return rnd.choice(schema["enum"])
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = rnd.choice(kind)
        if kind is None:
            kind = "object" if "properties" in schema else "array" if "items" in schema else None
        if kind == "object":
            return self.obj(self.fields(schema, resource, depth))
        if kind == "array":
            item = schema.get("items", {})
            return self.seq(self.of(item, resource, depth + 1) for _ in range(rnd.randrange(4)))
        if kind == "string":
            return rnd.choice(STRINGS)
        if kind == "number":
            return rnd.choice([0, 3, 2.5, -1.5])
        if kind == "integer":
            return rnd.choice([0, 3, 2.0])
        if kind == "boolean":
            return rnd.random() < 0.5
        if kind == "null":
            return None
        return self.wild(depth)

    def fields(self, schema: dict, resource: str, depth: int) -> dict:
        rnd = self.rnd
        props = schema.get("properties", {})
        keys = list(schema.get("required", []))
        keys += [k for k in props if k not in keys and rnd.random() < 0.5]
        out = {k: self.of(props.get(k, {}), resource, depth + 1) for k in keys}
        extra = schema.get("additionalProperties", True)
        if isinstance(extra, dict) and rnd.random() < 0.5:
            out[rnd.choice(["extra", "shell", "agent-presets", "web"])] = self.of(extra, resource, depth + 1)
        return out


def test_every_shipped_schema_compiles():
    assert None not in schemas._fast_checks().values()


@settings(max_examples=400)
@given(st.randoms(use_true_random=False), st.sampled_from(NAMES), st.sampled_from([0.0, 0.03, 0.1]))
def test_fast_verdict_and_diagnostics_equal_jsonschema(rnd, name, mutate):
    value = Instances(rnd, mutate).of({"$ref": schemas.SCHEMAS[name]}, schemas.SCHEMAS[name])
    assert fast_verdict(value, name) == jsonschema_verdict(value, name)
    assert schemas.validate(value, name, "f.yml") == schemas.jsonschema_diagnostics(value, name, "f.yml")


@pytest.mark.parametrize("name", NAMES)
def test_generated_instances_are_both_valid_and_invalid(name):
    """The generator really exercises both verdicts of every schema (a seeded sweep)."""
    rnd = random.Random(13)
    verdicts = []
    for _ in range(300):
        value = Instances(rnd).of({"$ref": schemas.SCHEMAS[name]}, schemas.SCHEMAS[name])
        verdict = jsonschema_verdict(value, name)
        assert fast_verdict(value, name) == verdict, value
        verdicts.append(verdict)
    assert 0.15 < sum(verdicts) / len(verdicts) < 0.85


def _corpus_values():
    for path in sorted(p for p in CORPUS.rglob("*") if p.is_file()):
        kind = kind_of(path)
        if kind is None:
            continue
        lf = load(str(path), None, kind)
        if lf.loaded:
            yield path, lf.value


CORPUS_VALUES = list(_corpus_values())


def test_the_corpus_is_there():
    assert len(CORPUS_VALUES) > 100


@pytest.mark.parametrize("name", NAMES)
def test_every_corpus_file_gets_jsonschemas_verdict_under_every_schema(name):
    valid = 0
    for path, value in CORPUS_VALUES:
        verdict = jsonschema_verdict(value, name)
        assert fast_verdict(value, name) == verdict, path
        assert schemas.validate(value, name, str(path)) == schemas.jsonschema_diagnostics(value, name, str(path))
        valid += verdict
    assert 0 < valid < len(CORPUS_VALUES)  # each schema accepts some corpus files and rejects others


def test_json_equality_is_jsonschemas():
    from jsonschema._utils import equal as reference

    values = [True, False, 1, 0, 1.0, 0.0, None, "1", "", [], [1], [True], {}, {"a": 1}, {"a": True},
              {"__jsExpr": "x"}, [[1]], [[True]]]
    for a in values:
        for b in values:
            assert equal(a, b) == reference(a, b), (a, b)
    assert equal(JsExpr("x"), {"__jsExpr": "x"})


def test_a_keyword_it_does_not_know_is_unsupported_not_ignored():
    with pytest.raises(Unsupported):
        compile_schemas({"s.json": {"type": "array", "uniqueItems": True}})
    with pytest.raises(Unsupported):
        compile_schemas({"s.json": {"$ref": "https://example.com/other.json"}})


def test_recursive_references_terminate_and_check_every_level():
    check = compile_schemas(RESOURCES)[schemas.SCHEMAS["entry-list"]]
    child = {"id": "c", "name": "x"}
    tree = [{"name": "cordis:group", "group": True, "config": [{"name": "g", "group": True,
                                                              "config": [child]}]}]
    assert check(tree)
    child["disabled"] = "yes"  # three levels down
    assert not check(tree) and not jsonschema_verdict(tree, "entry-list")
