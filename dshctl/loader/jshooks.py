"""``!!js`` in the Python host (cordis-runtime.md §9, §12.5): never run as code, evaluated by the
subset in ``dshctl.core.jsexpr``. ``disabled`` at every mount decision (no fiber, so no injects);
``config`` lazily inside the row's fiber, through the runtime's ``internal/config`` pipeline."""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

from dshctl.core.jsexpr import UNDEFINED, JsEnv, evaluate_config, evaluate_expr, iter_expressions
from dshctl.core.yaml.nodes import JsExpr, js_truthy

if TYPE_CHECKING:  # pragma: no cover
    from dshctl.runtime import Fiber


class InjectedServices(Mapping):
    """``ctx.<svc>`` for an expression: only names in the fiber's effective inject, read lazily."""

    def __init__(self, fiber: "Fiber"):
        self._fiber = fiber

    def __getitem__(self, name: str) -> Any:
        if name not in self._fiber.inject:
            raise KeyError(name)
        return self._fiber.ctx[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._fiber.inject)

    def __len__(self) -> int:
        return len(self._fiber.inject)


def evaluate_disabled(row: dict, *, home: Path, get_service: Callable[[str], Any],
                      full_id: str) -> bool:
    """The row's own ``disabled`` flag, evaluated now (raises the §12.5 errors)."""
    value = row.get("disabled")
    if isinstance(value, JsExpr):
        env = JsEnv.current(home, get_service=get_service, injected=None)
        value = evaluate_expr(value, env, full_id=full_id, name=str(row.get("name")), path="disabled")
    return js_truthy(value)


def has_expressions(value: Any) -> bool:
    return next(iter_expressions(value, ""), None) is not None


def evaluate_row_config(fiber: "Fiber", config: Any, *, home: Path, full_id: str, name: str) -> Any:
    """The config with every ``!!js`` replaced, evaluated in ``fiber``; ``None`` when nothing to do."""
    if not has_expressions(config):
        return None
    env = JsEnv.current(home, get_service=fiber.ctx.get, injected=InjectedServices(fiber))
    result = evaluate_config(config, env, full_id=full_id, name=name)
    # a config that is `undefined` is absent: the plugin sees an empty config, as `{}` in JS
    return {} if result is UNDEFINED else result
