"""Rules about plugin rows and their ids (dshctl rules, dsh-config.md §3-§4)."""
from __future__ import annotations

from typing import Iterator

from dshctl.core.yaml import filekinds as fk
from dshctl.lint.registry import Finding, LintFile, rule
from dshctl.lint.rows import iter_js, iter_overrides, iter_rows, jp

ROW_FILES = (fk.ENTRY_LIST, fk.PATCH_LIST)
_JS_OK = ("config", "disabled")


def _rows_and_overrides(lf: LintFile) -> list:
    """The rows a file defines, and in a patch list its overrides (in an entry list every row is
    already one of the rows)."""
    overrides = iter_overrides(lf.value) if lf.kind == fk.PATCH_LIST else ()
    return list(iter_rows(lf.kind, lf.value)) + list(overrides)


def _loc(mapping, key):
    return mapping.value_locs.get(key) if hasattr(mapping, "value_locs") else None


@rule("id-colon", level="error", kinds=ROW_FILES, example_file="cordis.yml",
      good="- id: llm-main\n  name: '@deepseek-ai/dsh-llm'\n",
      bad="- id: llm:main\n  name: '@deepseek-ai/dsh-llm'\n")
def id_colon(lf: LintFile) -> Iterator[Finding]:
    """An id must not contain `:`. Full ids are `<include id>:<local id>` and resolution splits on
    `:`, so such a row cannot be addressed. dsh does not check this."""
    targets = _rows_and_overrides(lf)
    for mapping, path in targets:
        rid = mapping.get("id")
        if isinstance(rid, str) and ":" in rid:
            yield Finding(_loc(mapping, "id"), f"id {rid!r} contains ':'", json_path=jp(path + ["id"]),
                          hint="use '-' instead; ':' separates the parts of a full id")


@rule("id-missing", level="warning", kinds=ROW_FILES, example_file="cordis.patch.yml",
      good="- insert:\n    - id: hello\n      name: dsh-hello-plugin\n",
      bad="- insert:\n    - name: dsh-hello-plugin\n")
def id_missing(lf: LintFile) -> Iterator[Finding]:
    """Every row should have an id. dsh gives an id-less row a random id on every read, so each
    reload restarts it and no patch can target it."""
    for row, path in iter_rows(lf.kind, lf.value):
        if row.get("id") in (None, ""):
            yield Finding(getattr(row, "loc", None), "row has no id; it gets a new random id on every read",
                          json_path=jp(path), hint="add a stable kebab-case id, e.g. id: my-plugin")


@rule("duplicate-id", level="error", kinds=ROW_FILES, example_file="cordis.yml",
      good="- id: a\n  name: x\n- id: g\n  name: cordis:group\n  group: true\n  config:\n    - id: b\n      name: y\n",
      bad="- id: a\n  name: x\n- id: g\n  name: cordis:group\n  group: true\n  config:\n    - id: a\n      name: y\n")
def duplicate_id(lf: LintFile) -> Iterator[Finding]:
    """An id must be unique within its tree, across every nesting level and group of the file (for a
    patch file: across all rows it inserts). dsh fails with `duplicate loader entry id` inside one
    list and silently merges duplicates across groups, so one of the rows never starts."""
    seen: dict[str, object] = {}
    for row, path in iter_rows(lf.kind, lf.value):
        rid = row.get("id")
        if not isinstance(rid, str) or not rid:
            continue
        if rid in seen:
            first = seen[rid]
            yield Finding(_loc(row, "id"), f"duplicate loader entry id: {rid}", json_path=jp(path + ["id"]),
                          hint=f"the id is already used at line {first.line}; ids must be unique in the tree"
                          if first else "ids must be unique in the tree")
        else:
            seen[rid] = _loc(row, "id")


@rule("js-position", level="error", kinds=ROW_FILES, example_file="cordis.patch.yml",
      good="- id: web\n  config:\n    port: !!js process.env.PORT ?? 3080\n",
      bad="- id: !!js process.env.ID\n  disabled: true\n")
def js_position(lf: LintFile) -> Iterator[Finding]:
    """`!!js` is evaluated only in a row's `config` and `disabled`; anywhere else (`id`, `name`,
    `inject`, …) dsh would use the expression object itself, so it is an error."""
    targets = _rows_and_overrides(lf)
    if lf.kind == fk.PATCH_LIST and isinstance(lf.value, list):
        targets += [(p, [i]) for i, p in enumerate(lf.value) if isinstance(p, dict) and "insert" in p]
    for mapping, path in targets:
        for key, value in mapping.items():
            if key in _JS_OK or key == "insert":
                continue
            for node, where in iter_js(value, path + [key]):
                yield Finding(node.loc, f"!!js is not allowed in {key!r}; only in a row's config or disabled",
                              json_path=jp(where), hint="write a literal value here")
    if isinstance(lf.value, list):  # a bare !!js item in the list itself
        for node, where in iter_js([v if not isinstance(v, (dict, list)) else None for v in lf.value], []):
            yield Finding(node.loc, "!!js cannot be a list entry", json_path=jp(where))
