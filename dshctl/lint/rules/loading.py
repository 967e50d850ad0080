"""Rules about reading the file at all: parse errors, empty files, JSON quirks."""
from __future__ import annotations

from typing import Iterator

from dshctl.core.yaml import filekinds as fk
from dshctl.errors import Loc
from dshctl.lint.registry import Finding, LintFile, rule

ALL = (fk.ENTRY_LIST, fk.PATCH_LIST, fk.PRESET, fk.PACKAGE_JSON, fk.SETTINGS)


@rule("parse", level="error", kinds=ALL, needs_value=False, example_file="cordis.patch.yml",
      good="- id: llm\n  disabled: true\n",
      bad="- id: llm\n  id: llm2\n")
def parse(lf: LintFile) -> Iterator[Finding]:
    """The file must parse in its dialect: YAML (js-yaml JSON_SCHEMA plus !!js, one document, no
    duplicate keys, no unknown tags) or strict JSON. dsh refuses such a file outright."""
    if lf.parse_error is not None:
        err = lf.parse_error
        yield Finding(err.loc or Loc(lf.path), err.message, hint=err.hint)


@rule("empty-file", level="error", kinds=(fk.ENTRY_LIST, fk.PATCH_LIST), needs_value=False,
      example_file="cordis.patch.yml",
      good="# switched off\n[]\n", bad="# nothing here yet\n")
def empty_file(lf: LintFile) -> Iterator[Finding]:
    """An empty or comments-only entry or patch file parses to nothing, which is not a list: dsh
    fails the boot (or the live reload) on it. Write `[]` for an empty layer."""
    if lf.document is not None and lf.document.empty:
        yield Finding(Loc(lf.path, 1, 1), "the file holds no YAML document, so it is not a list",
                      hint="write [] to make it an empty list")


def _notes(lf: LintFile, rule_id: str) -> Iterator[Finding]:
    for note in lf.document.notes if lf.document else ():
        if note.rule == rule_id:
            yield Finding(note.loc, note.message)


@rule("json-bom", level="error", kinds=(fk.PACKAGE_JSON,), example_file="package.json",
      good='{"name": "x", "dsh": {"bundle": {"patch": "./cordis.patch.yml"}}}\n',
      bad='\ufeff{"name": "x", "dsh": {"bundle": {"patch": "./cordis.patch.yml"}}}\n')
def json_bom(lf: LintFile) -> Iterator[Finding]:
    """A package.json must not start with a UTF-8 BOM: dsh reads manifests with JSON.parse, which
    rejects it. dshctl loads the file anyway (so the other rules still run) and reports the BOM."""
    for f in _notes(lf, "json-bom"):
        yield Finding(f.loc, f.message, hint="save the file as UTF-8 without a BOM")


@rule("json-duplicate-key", level="warning", kinds=(fk.PACKAGE_JSON,), example_file="package.json",
      good='{"name": "x", "dsh": {"profile": {"bundles": []}}}\n',
      bad='{"name": "x", "name": "y", "dsh": {"profile": {"bundles": []}}}\n')
def json_duplicate_key(lf: LintFile) -> Iterator[Finding]:
    """A key repeated in one JSON object: JSON.parse silently keeps the last value, which is rarely
    what the author meant."""
    for f in _notes(lf, "json-duplicate-key"):
        yield Finding(f.loc, f.message, hint="remove all but one of the keys")


@rule("not-a-manifest", level="info", kinds=(fk.PACKAGE_JSON,), example_file="package.json",
      good='{"name": "x", "dsh": {"bundle": {"patch": "./cordis.patch.yml"}}}\n',
      bad='{"name": "x", "dsh": {"components": {}}}\n')
def not_a_manifest(lf: LintFile) -> Iterator[Finding]:
    """A package.json whose `dsh` key declares none of `profile`, `bundle` or `client` is not a dsh
    manifest: dsh ignores it, so dshctl does not validate it."""
    dsh = lf.value.get("dsh") if isinstance(lf.value, dict) else None
    if isinstance(lf.value, dict) and not fk.manifest_kinds(lf.value) and dsh is not None:
        loc = lf.value.key_loc("dsh") if hasattr(lf.value, "key_loc") else Loc(lf.path, 1, 1)
        yield Finding(loc, "`dsh` declares no profile, bundle or client; not linted as a manifest",
                      hint="dsh reads only dsh.profile, dsh.bundle and dsh.client")
