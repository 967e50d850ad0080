"""Every real dsh file in the shared corpus loads, round-trips byte-identically and passes lint;
a file that does not is a real defect, pinned here with the exact diagnostic."""
from __future__ import annotations

import pytest

from corpus_files import CORPUS, ids, index, path_of
from dshctl.core.yaml import filekinds
from dshctl.core.yaml.dialect import load_file
from dshctl.core.yaml.roundtrip import EditableYaml
from dshctl.lint import lint_paths

ROWS = index()
FILES = [path_of(r) for r in ROWS]

# relative path -> the diagnostics lint must report: (rule, severity, line, column, message)
DEFECTS = {
    # dsh reads manifests with JSON.parse, which rejects a BOM (dsh-config.md §12.1).
    "ihuajiu__dsh-code-security/gate/package.json": [
        ("json-bom", "error", 1, 1, "the file starts with a UTF-8 BOM, which dsh's JSON.parse rejects")],
    # preset.yml has no id or trust fields (dsh-config.md §7); dsh ignores them.
    "XMoon__dsh-pi-tui/test/fixtures/presets/fixture/preset.yml": [
        ("schema", "warning", 1, 1, "unknown key 'id'"),
        ("schema", "warning", 4, 1, "unknown key 'trust'")],
    # Unofficial dsh keys only (dsh-config.md §8): not a manifest, noted.
    "ihuajiu__dsh-code-security/package.json": [
        ("not-a-manifest", "info", 24, 3, "`dsh` declares no profile, bundle or client; not linted as a manifest")],
}


def test_index_lists_every_file():
    on_disk = {p for p in CORPUS.rglob("*") if p.is_file() and p.name != "INDEX.tsv"}
    assert on_disk == set(FILES)


@pytest.mark.parametrize("path", FILES, ids=ids(FILES))
def test_loads(path):
    doc = load_file(path, js=path.name != "preset.yml")
    assert not doc.empty


YAML_FILES = [p for p in FILES if p.suffix in (".yml", ".yaml")]


@pytest.mark.parametrize("path", YAML_FILES, ids=ids(YAML_FILES))
def test_round_trips_byte_identically(path):
    assert EditableYaml.read(path).dumps().encode("utf-8") == path.read_bytes()


LINTED = [p for p in FILES if filekinds.kind_of(p)]
# The foundation's rules; rules added by later issues are tested by their own suites.
FOUNDATION_RULES = {"parse", "schema", "json-bom", "json-duplicate-key", "id-colon", "id-missing",
                    "duplicate-id", "js-position", "empty-file", "not-a-manifest", "file-kind"}


@pytest.mark.parametrize("path", LINTED, ids=ids(LINTED))
def test_lints_clean_or_is_a_known_defect(path):
    diags, count = lint_paths([path])
    got = [(d.rule, d.severity, d.line, d.column, d.message) for d in diags if d.rule in FOUNDATION_RULES]
    assert count == 1
    assert got == DEFECTS.get(str(path.relative_to(CORPUS)), [])


def test_every_schema_kind_is_exercised():
    from dshctl.lint.pipeline import load

    seen = set()
    for path in LINTED:
        seen.update(load(str(path), None, filekinds.kind_of(path)).schemas)
    assert seen == {"entry-list", "cordis.patch", "preset", "profile-manifest", "bundle-manifest"}


def test_defects_are_real_files():
    for rel in DEFECTS:
        assert (CORPUS / rel).is_file()
