"""The ``!!js`` subset (cordis-runtime.md §12.5; docs/jsexpr.md).

dshctl never runs ``!!js`` as code. Each expression is parsed against a small grammar (``parse``) and
the tree is evaluated with JavaScript semantics against an explicit ``JsEnv`` (``evaluate``).
Pure: no printing, no I/O beyond what the caller puts into the environment. May import ``core.yaml``
(for ``JsExpr`` nodes) and ``dshctl.errors``; never ``core.compose`` or anything above core.
"""
from dshctl.core.jsexpr.ast import Expr
from dshctl.core.jsexpr.config import (check_expressions, evaluate_config, evaluate_expr,
                                       iter_expressions)
from dshctl.core.jsexpr.errors import (JsEvalError, JsSyntaxError, eval_failed_message,
                                       unsupported_message)
from dshctl.core.jsexpr.evaluator import JsEnv, evaluate, node_platform, read_property
from dshctl.core.jsexpr.parser import parse
from dshctl.core.jsexpr.values import UNDEFINED, strict_equals, truthy

__all__ = [
    "Expr", "JsEnv", "JsEvalError", "JsSyntaxError", "UNDEFINED", "check_expressions",
    "eval_failed_message", "evaluate", "evaluate_config", "evaluate_expr", "iter_expressions",
    "node_platform", "parse", "read_property", "strict_equals", "truthy", "unsupported_message",
]
