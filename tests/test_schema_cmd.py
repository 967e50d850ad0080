"""`dshctl schema list | show | path`, end to end, and the schemas themselves."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from dshctl.cli.app import main
from dshctl.core import schemas
from dshctl.core.data import schemas_dir

NAMES = ["entry-list", "cordis.patch", "preset", "profile-manifest", "bundle-manifest", "settings"]


def run(capsys, *args) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def test_list_json(capsys):
    code, out, _ = run(capsys, "schema", "list", "--format", "json")
    rows = json.loads(out)
    assert code == 0 and [r["name"] for r in rows] == NAMES
    assert all(Path(r["path"]).is_file() and r["path"].endswith(".schema.json") for r in rows)
    assert "cordis" in rows[0]["aliases"] and "agent.cordis" in rows[0]["aliases"]


def test_list_text_is_plain_when_piped(capsys):
    code, out, _ = run(capsys, "schema", "list")
    assert code == 0 and "entry-list" in out and "\x1b[" not in out


@pytest.mark.parametrize("name,file", [("cordis.patch", "cordis.patch.schema.json"),
                                       ("cordis", "entry-list.schema.json"),
                                       ("agent.cordis", "entry-list.schema.json"),
                                       ("profile", "profile-manifest.schema.json")])
def test_show_and_path(capsys, name, file):
    code, out, _ = run(capsys, "schema", "show", name)
    assert code == 0 and json.loads(out) == json.loads((schemas_dir() / file).read_text())
    code, out, _ = run(capsys, "schema", "path", name)
    assert code == 0 and out == f"{schemas_dir() / file}\n"


def test_unknown_name_is_a_usage_error(capsys):
    code, _, err = run(capsys, "schema", "show", "nope")
    assert code == 2
    assert err.splitlines() == ["dshctl: error: unknown schema 'nope'",
                                "  hint: known schemas: entry-list, cordis.patch, preset, profile-manifest, "
                                "bundle-manifest, settings (run 'dshctl schema list')"]


@pytest.mark.parametrize("name", NAMES)
def test_schema_is_valid_2020_12_with_hover_text(name):
    schema = schemas.load_schema(name)
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert "$id" not in schema and schema["title"] and schema["description"]

    def walk(node, where):
        if isinstance(node, dict):
            props = node.get("properties", {})
            for key, sub in props.items():
                assert "description" in sub or "$ref" in sub, f"{name}: {where}.{key} has no description"
            for k, v in node.items():
                if k not in ("if", "not"):  # conditions, not documentation
                    walk(v, f"{where}.{k}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{where}[{i}]")
    walk(schema, "$")


def test_validation_points_at_the_offending_node():
    from dshctl.core.yaml.dialect import load_yaml

    doc = load_yaml("- insert:\n    - id: a\n      name: x\n      disabled: yes\n", "p.yml")
    (d,) = schemas.validate(doc.value, "cordis.patch", "p.yml")
    assert (d.line, d.column, d.json_path) == (4, 17, "$[0].insert[0].disabled")
    assert d.message == '"yes" matches none of the allowed forms: boolean or !!js expression'


def test_anyof_reports_the_branch_the_patch_aims_at():
    from dshctl.core.yaml.dialect import load_yaml

    doc = load_yaml("- id: web\n  isolate: {fs: 3}\n- name: only-a-name\n", "p.yml")
    diags = schemas.validate(doc.value, "cordis.patch", "p.yml")
    assert [(d.line, d.column, d.json_path, d.message) for d in diags] == [
        (2, 17, "$[0].isolate.fs", "3 matches none of the allowed forms: true or string"),
        (3, 3, "$[1]", "this mapping matches none of the allowed forms: insert patch or override patch"),
    ]
    assert diags[1].hint.startswith("Either an insert")


def test_js_where_a_string_belongs():
    from dshctl.core.yaml.dialect import load_yaml

    doc = load_yaml("- id: a\n  name: !!js x\n", "c.yml")
    (d,) = schemas.validate(doc.value, "entry-list", "c.yml")
    assert (d.line, d.column, d.message) == (2, 9, "a !!js expression is not allowed here (expected a string)")


def test_group_children_must_be_rows():
    from dshctl.core.yaml.dialect import load_yaml

    doc = load_yaml("- id: g\n  name: cordis:group\n  group: true\n  config: {a: 1}\n", "c.yml")
    (d,) = schemas.validate(doc.value, "entry-list", "c.yml")
    assert (d.line, d.json_path, d.message) == (4, "$[0].config", "expected a list, got a mapping")


def test_not_a_list():
    from dshctl.core.yaml.dialect import load_yaml

    (d,) = schemas.validate(load_yaml("~\n", "p.yml").value, "cordis.patch", "p.yml")
    assert (d.line, d.column, d.message) == (1, 1, "expected a list, got null")


def test_client_manifest_needs_client_export():
    from dshctl.core.yaml.dialect import load_json

    doc = load_json('{"name": "p", "dsh": {"client": {"platform": "web"}},\n "exports": {".": "./i.js"}}', "package.json")
    (d,) = schemas.validate(doc.value, "bundle-manifest", "package.json")
    assert (d.line, d.json_path, d.message) == (2, "$.exports", "missing required key './client'")


def _strings(node, key=None):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _strings(v, k)
    elif isinstance(node, list):
        for v in node:
            yield from _strings(v, key)
    elif isinstance(node, str):
        yield key, node


@pytest.mark.parametrize("file", sorted(p.name for p in schemas_dir().glob("*.schema.json")))
def test_shipped_schemas_reference_no_url(file):
    """No $id, every $ref a file beside it (or within it); the only URL is the $schema dialect id."""
    schema = json.loads((schemas_dir() / file).read_text())
    assert "$id" not in schema
    for key, value in _strings(schema):
        if key == "$ref":
            target = value.split("#")[0]
            assert target == "" or (schemas_dir() / target).is_file(), value
        elif key == "$schema":
            assert value == "https://json-schema.org/draft/2020-12/schema"
        else:
            assert "://" not in value, f"{file}: {key}: {value}"


def test_export_writes_a_self_contained_directory(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "schema", "export", "editor/schemas")
    assert code == 0
    dest = tmp_path / "editor" / "schemas"
    written = sorted((tmp_path / line).relative_to(dest).as_posix() for line in out.splitlines())
    assert written == sorted([*schemas.SCHEMAS.values(), "lint-report.schema.json", "vscode-settings.json",
                              "yaml-language-server.json",
                              *(f"yaml-language-server/{n}" for n in schemas.SCHEMAS.values())])
    for name in schemas.SCHEMAS.values():
        assert (dest / name).read_bytes() == (schemas_dir() / name).read_bytes()
        assert "x-dshctl-editor-only" not in (dest / name).read_text()  # validators get the strict ones
    # the copies validate on their own, resolving their relative $refs inside DIR only
    from referencing import Registry, Resource
    registry = Registry().with_resources(
        [(p.name, Resource.from_contents(json.loads(p.read_text()))) for p in dest.glob("*.schema.json")])
    validator = Draft202012Validator({"$ref": "cordis.patch.schema.json"}, registry=registry)
    assert not list(validator.iter_errors([{"insert": [{"id": "a", "name": "b"}]}]))
    assert list(validator.iter_errors([{"insert": [{"id": "a"}]}]))
    vscode = json.loads((dest / "vscode-settings.json").read_text())
    assert "./editor/schemas/yaml-language-server/entry-list.schema.json" in vscode["yaml.schemas"]
    assert vscode["yaml.customTags"] == ["tag:yaml.org,2002:js scalar"]
    assert vscode["json.schemas"] == [{"fileMatch": ["**/profiles/*/package.json"],
                                      "url": "./editor/schemas/yaml-language-server/profile-manifest.schema.json"}]


def test_the_shipped_schemas_are_strict_and_the_editor_copy_is_separate(tmp_path):
    """No shipped schema takes a string for `!!js` (dshctl lint, schema show/path and validators all
    read them); only the export's yaml-language-server/ copy does."""
    for name in schemas.SCHEMAS:
        assert "x-dshctl-editor-only" not in json.dumps(schemas.load_schema(name)), name
    strict = schemas.load_schema("entry-list")["$defs"]["jsExpr"]
    assert strict["type"] == "object" and strict["required"] == ["__jsExpr"] and "anyOf" not in strict
    from dshctl.core.schema_export import for_yaml_language_server

    loose = for_yaml_language_server(schemas.load_schema("entry-list"))["$defs"]["jsExpr"]
    assert [b.get("type") for b in loose["anyOf"]] == ["object", "string"]
    assert Draft202012Validator(loose).is_valid("process.env.X")
    assert not Draft202012Validator(strict).is_valid("process.env.X")
