"""check-jsonschema (PyPI, the validator CI pipelines run) with `dshctl schema export`'s schemas flags
every broken file dshctl's own schema check flags. The export once carried an editor-only string
branch for `!!js`, and then let through every file with a string where dsh wants a boolean or
``!!js`` (`disabled: "yes"`); the branch now lives only in the separate `yaml-language-server/` copy,
and this test shows both: the strict export catches all, the editor copy would not.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent
DSHCTL = BIN / "dshctl"

STRINGS = ['"yes"', '"no"', '"true"', '"false"', "'1'", '""', "off-please", '"!!js process.env.X"']
ROW = "- id: web\n  name: '@demo/web'\n"


def broken_files() -> dict[str, tuple[str, str, bool]]:
    """name -> (schema, text, whether the string-for-!!js branch accepts it). More than forty."""
    files: dict[str, tuple[str, str, bool]] = {}
    for n, s in enumerate(STRINGS):
        files[f"row-disabled-{n}.cordis.yml"] = ("entry-list", f"{ROW}  disabled: {s}\n", True)
        files[f"patch-disabled-{n}.cordis.patch.yml"] = ("cordis.patch", f"- id: web\n  disabled: {s}\n", True)
        files[f"insert-disabled-{n}.cordis.patch.yml"] = (
            "cordis.patch", f"- insert:\n    - id: new\n      name: x\n      disabled: {s}\n", True)
        files[f"group-child-disabled-{n}.cordis.yml"] = (
            "entry-list", f"- id: g\n  name: cordis:group\n  group: true\n  config:\n"
                          f"    - id: c\n      name: x\n      disabled: {s}\n", True)
    others = {
        "group-string.cordis.yml": ("entry-list", f"{ROW}  group: 'yes'\n"),
        "name-number.cordis.yml": ("entry-list", "- id: web\n  name: 3\n"),
        "id-number.cordis.yml": ("entry-list", "- id: 5\n  name: x\n"),
        "inject-number.cordis.yml": ("entry-list", f"{ROW}  inject: 3\n"),
        "isolate-false.cordis.yml": ("entry-list", f"{ROW}  isolate: {{fs: false}}\n"),
        "group-config-map.cordis.yml": ("entry-list", "- id: g\n  name: cordis:group\n  group: true\n  config: {a: 1}\n"),
        "insert-number.cordis.patch.yml": ("cordis.patch", "- insert: 3\n"),
        "insert-nameless.cordis.patch.yml": ("cordis.patch", "- insert:\n    - id: nameless\n"),
        "patch-group-string.cordis.patch.yml": ("cordis.patch", "- id: web\n  group: 'no'\n"),
        "preset-order.preset.yml": ("preset", "name: P\norder: first\n"),
        "preset-name.preset.yml": ("preset", "name: 3\n"),
    }
    for name, (schema, text) in others.items():
        files[name] = (schema, text, False)
    return files


FILES = broken_files()


def path_of(root: Path, name: str) -> Path:
    """Each file in its own directory (presets must be named preset.yml)."""
    return root / name / ("preset.yml" if name.endswith(".preset.yml") else name)


def dshctl_flags(paths: list[Path], kind: str) -> set[str]:
    proc = subprocess.run([str(DSHCTL), "--no-cache", "lint", "-f", "json", "--select", "schema", "--kind", kind,
                           *map(str, paths)], capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    return {str(Path(f["file"]).resolve()) for f in json.loads(proc.stdout)["findings"]}


def check_jsonschema_flags(schema: Path, paths: list[Path]) -> set[str]:
    proc = subprocess.run([str(BIN / "check-jsonschema"), "-o", "JSON", "--schemafile", str(schema),
                           *map(str, paths)], capture_output=True, text=True, timeout=120)
    report = json.loads(proc.stdout)
    assert report["parse_errors"] == []  # flagged for the schema, not because the YAML did not load
    return {str(Path(e["filename"]).resolve()) for e in report["errors"]}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("broken")
    for name, (_, text, _) in FILES.items():
        path_of(root, name).parent.mkdir(parents=True)
        path_of(root, name).write_text(text)
    exported = root / "exported"
    proc = subprocess.run([str(DSHCTL), "schema", "export", str(exported)], capture_output=True, text=True,
                          timeout=60, cwd=root)
    assert proc.returncode == 0, proc.stderr
    return root, exported


def test_the_corpus_is_big_enough():
    assert len(FILES) >= 40


@pytest.mark.parametrize("schema", ["entry-list", "cordis.patch", "preset"])
def test_check_jsonschema_with_the_export_flags_what_dshctl_flags(corpus, schema):
    root, exported = corpus
    names = [n for n, (s, _, _) in FILES.items() if s == schema]
    paths = [path_of(root, n) for n in names]
    every = {str(p.resolve()) for p in paths}
    assert dshctl_flags(paths, schema) == every  # each file really is broken for dshctl
    assert check_jsonschema_flags(exported / f"{schema}.schema.json", paths) == every
    # the yaml-language-server copy lets the strings through: why validators must never get it
    loose = check_jsonschema_flags(exported / "yaml-language-server" / f"{schema}.schema.json", paths)
    assert loose == {str(path_of(root, n).resolve()) for n in names if not FILES[n][2]}
