"""Rules about `!!js` expressions (cordis-runtime.md §12.5; docs/jsexpr.md)."""
from __future__ import annotations

from typing import Iterator

from dshctl.core.yaml import filekinds as fk
from dshctl.core.jsexpr import JsSyntaxError, parse
from dshctl.core.jsexpr.ast import ctx_services
from dshctl.core.jsexpr.config import row_syntax_error
from dshctl.lint.registry import Finding, LintFile, rule
from dshctl.lint.rows import iter_js, iter_overrides, iter_rows, jp

ROW_FILES = (fk.ENTRY_LIST, fk.PATCH_LIST)
# Group and Include rows keep their config literal (their children are rows of their own).
_LITERAL_CONFIG = ("cordis:group", "cordis:include")


def _evaluated_expressions(lf: LintFile, *, overrides: bool = True):
    """(row, key, node, json path, dotted path) for every expression dsh would evaluate."""
    targets = list(iter_rows(lf.kind, lf.value))
    if overrides and lf.kind == fk.PATCH_LIST:  # in an entry list every row is already a target
        targets += list(iter_overrides(lf.value))
    for row, path in targets:
        for key in ("config", "disabled"):
            if key not in row:
                continue
            if key == "config" and (row.get("group") is True or row.get("name") in _LITERAL_CONFIG):
                continue
            for node, where in iter_js(row[key], path + [key]):
                dotted = ".".join(str(part) for part in where[len(path):])
                yield row, key, node, where, dotted


def _row_label(row) -> tuple[str, str]:
    rid, name = row.get("id"), row.get("name")
    return (rid if isinstance(rid, str) and rid else "<no id>",
            name if isinstance(name, str) and name else "<no name>")


@rule("js-unsupported", level="warning", kinds=ROW_FILES, example_file="cordis.yml",
      good="- id: web\n  name: '@deepseek-ai/dsh-host-webserver'\n"
           "  config:\n    port: !!js process.env.PORT ?? 3080\n",
      bad="- id: web\n  name: '@deepseek-ai/dsh-host-webserver'\n"
          "  config:\n    port: !!js Number(process.env.PORT)\n")
def js_unsupported(lf: LintFile) -> Iterator[Finding]:
    """dshctl never runs `!!js` as code: it parses each expression in a row's `config` or
    `disabled` against a small subset (literals, `process.env`, `process.cwd()`,
    `process.platform`, `dshHomePath(…)`, `ctx.get(…)`, `ctx.<svc>`, `? :`, `??`, `||`, `&&`,
    `===`, `!==`, `!`). An expression outside it fails its row when dshctl hosts the profile (dsh
    itself would still run it), hence a warning."""
    for row, _key, node, where, dotted in _evaluated_expressions(lf):
        try:
            parse(node.expr)
        except JsSyntaxError as err:
            full_id, name = _row_label(row)
            located = row_syntax_error(err, node, full_id=full_id, name=name, path=dotted)
            yield Finding(node.loc, located.message, hint=located.hint, json_path=jp(where))


@rule("js-ctx-inject", level="warning", kinds=ROW_FILES, example_file="cordis.yml",
      good="- id: web\n  name: '@deepseek-ai/dsh-web-app'\n  inject: [webStartup]\n"
           "  config:\n    open: !!js ctx.webStartup.openBrowser\n",
      bad="- id: web\n  name: '@deepseek-ai/dsh-web-app'\n"
          "  config:\n    open: !!js ctx.webStartup.openBrowser\n")
def js_ctx_inject(lf: LintFile) -> Iterator[Finding]:
    """`ctx.<svc>` in `!!js` reads an injected service, so `<svc>` must be in the row's `inject`;
    in `disabled` there is no fiber yet, so `ctx.<svc>` always fails there (use `ctx.get('svc')`).
    Patch overrides are not checked: the row's inject may come from another layer. A warning,
    like js-unsupported: the row fails when dshctl hosts it."""
    for row, key, node, where, dotted in _evaluated_expressions(lf, overrides=False):
        try:
            tree = parse(node.expr)
        except JsSyntaxError:
            continue  # js-unsupported reports it
        inject = row.get("inject") or []
        for service in sorted(ctx_services(tree)):
            if key == "disabled":
                reason = f"ctx.{service} is not available in 'disabled' (no fiber)"
                hint = f"use ctx.get('{service}') in disabled"
            elif service not in inject:
                reason = f"ctx.{service} is not available: '{service}' is not in the row's inject"
                hint = f"add {service} to the row's inject, or use ctx.get('{service}')"
            else:
                continue
            full_id, name = _row_label(row)
            message = f'!!js evaluation failed in row "{full_id}" ({name}) at {dotted}: {reason}'
            yield Finding(node.loc, message, hint=hint, json_path=jp(where))
