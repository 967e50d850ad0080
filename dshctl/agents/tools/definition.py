"""What a tool is to the pipeline, whatever shape its plugin registered it in.

The ``@dshctl/tools`` registry stores definitions as given. A definition is a :class:`Tool` or a dict
with dsh's keys (``description``, ``parameters``, ``execute``, ``isConcurrencySafe``, ``timeoutMs``);
:func:`as_tool` reads either. ``execute(args, run)`` may be sync or async and returns a tool result
(``{"content": [...], "isError"?, "concludesTurn"?, "meta"?}``), a string (one text block) or any JSON
value (its JSON text).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

EMPTY_OBJECT_SCHEMA = {"type": "object", "properties": {}}


@dataclass
class Tool:
    name: str
    description: str
    execute: Callable[..., Any]
    parameters: dict = field(default_factory=lambda: dict(EMPTY_OBJECT_SCHEMA))
    is_concurrency_safe: Callable[[Any], bool] | None = None
    timeout_ms: float | None = None
    # What a call touches, as (path, "r" | "w") pairs: two calls of one parallel group never touch the
    # same path (or one inside the other) when either writes. None: nothing shared.
    resources: Callable[[Any], list] | None = None
    # Bad arguments are told in dsh's words (``invalid arguments: missing required property "x"``), for the
    # tools that carry dsh's names; dshctl's own keep the JSON-schema validator's text.
    dsh_arguments: bool = False
    # Which agents see the tool at all (dsh registers such tools in those agents' own scopes, e.g. the
    # Agent Teams tools for Team members only). None: every agent that sees the registry's layer.
    visible_to: Callable[[Any], bool] | None = None

    def __post_init__(self) -> None:
        from .schemas import DSH_PARAMETER_SCHEMAS   # a dsh schema: the tool is one of dsh's
        if any(self.parameters is schema for schema in DSH_PARAMETER_SCHEMAS):
            self.dsh_arguments = True

    def schema(self) -> dict:
        """The model-visible part: name, description, parameters (never the timeout or classifier).
        A plain-JSON copy made once: schemas that share sub-dicts still log as plain trees."""
        cached = self.__dict__.get("_schema")
        if cached is None:
            cached = self.__dict__["_schema"] = json.loads(json.dumps(
                {"name": self.name, "description": self.description, "parameters": self.parameters}))
        return cached

    def parallel_safe(self, args: Any) -> bool:
        """Only a literal ``True`` opts in; a missing classifier or one that raises means exclusive."""
        if self.is_concurrency_safe is None:
            return False
        try:
            return self.is_concurrency_safe(args) is True
        except Exception:  # noqa: BLE001 - a broken classifier must not break the step
            return False

    def touches(self, args: Any) -> list:
        if self.resources is None:
            return []
        try:
            return list(self.resources(args))
        except Exception:  # noqa: BLE001 - unknown footprint: treat as touching everything
            return [("", "w")]


def conflict(a: list, b: list) -> bool:
    """Two footprints collide when a path equals or contains the other and either side writes."""
    for path_a, mode_a in a:
        for path_b, mode_b in b:
            if "w" not in (mode_a, mode_b):
                continue
            if path_a == path_b or _inside(path_a, path_b) or _inside(path_b, path_a):
                return True
    return False


def _inside(child: str, parent: str) -> bool:
    return parent == "" or child.startswith(parent.rstrip("/") + "/")


@dataclass
class ToolRun:
    """What a tool body receives besides its arguments: who calls, and the cancellation signal."""
    call_id: str
    name: str
    agent: Any
    abort: Any                 # asyncio.Event, set when the call must stop
    turn: int
    step: int
    origin: str = "model"      # "model" (a step's call) or "code" (a Code Mode sub-call)


def as_tool(name: str, definition: Any) -> Tool:
    if isinstance(definition, Tool):
        return definition
    if isinstance(definition, dict) and callable(definition.get("execute")):
        return Tool(name=name, description=str(definition.get("description", "")),
                    execute=definition["execute"],
                    parameters=definition.get("parameters") or dict(EMPTY_OBJECT_SCHEMA),
                    is_concurrency_safe=definition.get("isConcurrencySafe"),
                    timeout_ms=definition.get("timeoutMs"), resources=definition.get("resources"))
    raise TypeError(f"tool {name!r} has no execute() (registered as {type(definition).__name__})")


def text_result(text: str, *, is_error: bool = False, **extra: Any) -> dict:
    out: dict = {"content": [{"type": "text", "text": text}]}
    if is_error:
        out["isError"] = True
    out.update(extra)
    return out


def error_result(message: str, code: str) -> dict:
    """An error the model sees as the call's result (``Error: …``) and the log keeps with its code."""
    return {"content": [{"type": "text", "text": f"Error: {message}"}], "isError": True,
            "error": {"message": message, "code": code}}


def normalize_result(value: Any) -> dict:
    """A tool's return value as a tool result dict (content blocks, flags kept)."""
    if isinstance(value, dict) and isinstance(value.get("content"), list):
        return value
    if isinstance(value, str):
        return text_result(value)
    try:
        return text_result(json.dumps(value, ensure_ascii=False))
    except (TypeError, ValueError):
        return text_result(str(value))
