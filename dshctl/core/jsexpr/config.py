"""``!!js`` inside a row: evaluate a whole config value, or lint it statically, with row-level errors."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from dshctl.core.jsexpr.errors import (DOC_HINT, JsEvalError, JsSyntaxError, eval_failed_message,
                                       unsupported_message)
from dshctl.core.jsexpr.evaluator import JsEnv, evaluate
from dshctl.core.jsexpr.parser import parse
from dshctl.core.jsexpr.values import UNDEFINED
from dshctl.core.yaml.nodes import JsExpr, YList, YMap


def row_syntax_error(err: JsSyntaxError, node: JsExpr, *, full_id: str, name: str,
                     path: str) -> JsSyntaxError:
    """``err`` restated with the §12.5 text, located at the expression's file position."""
    return JsSyntaxError(
        err.reason, err.column, loc=node.loc,
        message=unsupported_message(full_id, name, path, node.expr),
        hint=f"column {err.column} of the expression: {err.reason}; {DOC_HINT}")


def evaluate_expr(node: JsExpr, env: JsEnv, *, full_id: str, name: str, path: str) -> Any:
    """One expression node evaluated, with errors naming the row and ``path``."""
    try:
        tree = parse(node.expr)
    except JsSyntaxError as err:
        raise row_syntax_error(err, node, full_id=full_id, name=name, path=path) from None
    try:
        return evaluate(tree, env)
    except JsEvalError as err:
        raise JsEvalError(err.reason, loc=node.loc, path=path,
                          message=eval_failed_message(full_id, name, path, err.reason),
                          hint="the expression parsed but failed at run time") from None


def evaluate_config(value: Any, env: JsEnv, *, full_id: str, name: str,
                    base_path: str = "config") -> Any:
    """``value`` with every JsExpr replaced by its value (recursively).

    A result of ``undefined`` is absent: dropped from a mapping, ``None`` in a list (as JSON would
    write it), UNDEFINED at the top for the caller to decide. Containers without expressions are
    returned as they are (not copied); the first failure raises, naming ``base_path``.dotted.path.
    """
    if isinstance(value, JsExpr):
        return evaluate_expr(value, env, full_id=full_id, name=name, path=base_path)
    if isinstance(value, dict):
        return _evaluate_mapping(value, env, full_id, name, base_path)
    if isinstance(value, list):
        return _evaluate_list(value, env, full_id, name, base_path)
    return value


def _evaluate_mapping(value: dict, env: JsEnv, full_id: str, name: str, path: str) -> Any:
    out = YMap(loc=getattr(value, "loc", None))
    changed = False
    for key, item in value.items():
        result = evaluate_config(item, env, full_id=full_id, name=name, base_path=f"{path}.{key}")
        changed = changed or result is not item
        if result is UNDEFINED:
            continue
        out[key] = result
        if isinstance(value, YMap):
            out.key_locs[key] = value.key_locs.get(key)
            out.value_locs[key] = value.value_locs.get(key)
    return out if changed else value


def _evaluate_list(value: list, env: JsEnv, full_id: str, name: str, path: str) -> Any:
    out = YList(loc=getattr(value, "loc", None))
    changed = False
    for index, item in enumerate(value):
        result = evaluate_config(item, env, full_id=full_id, name=name,
                                 base_path=f"{path}.{index}")
        changed = changed or result is not item
        out.append(None if result is UNDEFINED else result)
    if isinstance(value, YList):
        out.item_locs = list(value.item_locs)
    return out if changed else value


def iter_expressions(value: Any, base_path: str) -> Iterator[tuple[str, JsExpr]]:
    """Every JsExpr in ``value`` with its dotted path, in document order."""
    if isinstance(value, JsExpr):
        yield base_path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from iter_expressions(item, f"{base_path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from iter_expressions(item, f"{base_path}.{index}")


def check_expressions(value: Any, *, full_id: str, name: str,
                      base_path: str) -> list[tuple[str, JsExpr, JsSyntaxError]]:
    """Static lint: every expression in ``value`` that the subset cannot parse, with a row-level
    JsSyntaxError (§12.5 text, the expression's location, the column in the hint)."""
    found = []
    for path, node in iter_expressions(value, base_path):
        try:
            parse(node.expr)
        except JsSyntaxError as err:
            found.append((path, node, row_syntax_error(err, node, full_id=full_id, name=name,
                                                        path=path)))
    return found
