"""The JSON Schema rule: each file against the schema of its kind."""
from __future__ import annotations

from typing import Iterator

from dshctl.core.yaml import filekinds as fk
from dshctl.lint.registry import Finding, LintFile, rule


@rule("schema", level="error", kinds=(fk.ENTRY_LIST, fk.PATCH_LIST, fk.PRESET, fk.PACKAGE_JSON, fk.SETTINGS),
      example_file="cordis.patch.yml",
      good="- insert:\n    - id: hello\n      name: dsh-hello-plugin\n",
      bad="- insert:\n    - id: hello\n      disabled: yes\n")
def schema(lf: LintFile) -> Iterator[Finding]:
    """The file must match the JSON Schema of its kind (`dshctl schema list`): rows need a `name`,
    patches are inserts or overrides, `disabled` is a boolean or !!js, and so on. Schemas for
    preset.yml report warnings, because dsh drops bad preset fields one by one."""
    from dshctl.core.schemas import validate  # jsonschema is slow to import

    for name in lf.schemas:
        for d in validate(lf.value, name, lf.path):
            yield Finding(d.loc, d.message, hint=d.hint, json_path=d.json_path, severity=d.severity)
