"""``@dshctl/tools``: the tools registry with dsh's layered visibility (architecture-notes.md).

Scopes form a chain global -> preset -> session. The view of a scope is computed on demand:

1. start from the global layer and walk the ancestors down to the parent, the nearest one overriding
   same-named tools (this is the *inherited* part);
2. drop inherited tools that a restriction rule anywhere on the chain forbids (``deny`` patterns, or an
   ``allow`` list that does not name them);
3. the scope's own registrations override everything inherited, even a name a restriction forbids.

``run_code`` is reserved (the Code Mode transport). Registering a tool or creating a scope is an effect of
the caller's context, so a plugin's tools and a preset's scope vanish when it unloads.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

name = "@dshctl/tools"
schema = {
    "type": "object",
    "default": {},
    "properties": {
        "allow": {"type": "array", "items": {"type": "string"}},
        "deny": {"type": "array", "items": {"type": "string"}, "default": []},
    },
}

GLOBAL = "global"
RESERVED = frozenset({"run_code"})
# The one plugin allowed to register a reserved name (by module name: the host reaches agents by string).
TRANSPORT_OWNER = "dshctl.agents.codemode.plugin"


class ToolError(ValueError):
    pass


@dataclass
class Scope:
    id: str
    parent: "Scope | None" = None
    own: dict = field(default_factory=dict)       # name -> definition
    deny: tuple = ()                              # fnmatch patterns removed from the inherited view
    allow: tuple | None = None                    # when set, only these patterns are inherited

    def chain(self) -> list["Scope"]:
        """Outermost (global) first, this scope last."""
        out, node = [], self
        while node is not None:
            out.append(node)
            node = node.parent
        return out[::-1]

    def permits(self, tool: str) -> bool:
        if any(fnmatchcase(tool, p) for p in self.deny):
            return False
        return self.allow is None or any(fnmatchcase(tool, p) for p in self.allow)


def visible(scope: Scope) -> dict[str, Any]:
    """The tools ``scope`` sees, by the three rules in the module docstring."""
    chain = scope.chain()
    inherited: dict[str, Any] = {}
    for ancestor in chain[:-1]:
        inherited.update(ancestor.own)
    inherited = {n: d for n, d in inherited.items() if all(s.permits(n) for s in chain)}
    inherited.update(scope.own)
    return inherited


def check_definition(tool: str, definition: Any) -> None:
    if not isinstance(tool, str) or not tool:
        raise ToolError("a tool name must be a non-empty string")
    if tool in RESERVED:
        raise ToolError(f"tool name {tool!r} is reserved")
    output = definition.get("output_schema") if isinstance(definition, dict) else None
    if output is not None:
        from jsonschema import Draft202012Validator
        from jsonschema.exceptions import SchemaError
        try:
            Draft202012Validator.check_schema(output)
        except SchemaError as exc:
            raise ToolError(f"tool {tool!r}: unsupported output schema: {exc.message}") from None


class ToolRegistry:
    """The ``tools`` service."""

    def __init__(self) -> None:
        self.scopes: dict[str, Scope] = {GLOBAL: Scope(GLOBAL)}

    def scope(self, ctx, scope_id: str, parent: str = GLOBAL, *, deny=(), allow=None):
        """Create scope ``scope_id`` under ``parent`` as an effect of ``ctx``; returns the handle."""
        def create():
            if scope_id in self.scopes:
                raise ToolError(f"tool scope {scope_id!r} already exists")
            if parent not in self.scopes:
                raise ToolError(f"unknown parent tool scope {parent!r}")
            self.scopes[scope_id] = Scope(scope_id, self.scopes[parent], {}, tuple(deny),
                                          None if allow is None else tuple(allow))
            return lambda: self.scopes.pop(scope_id, None)
        return ctx.effect(create, f"tools.scope({scope_id})")

    def register(self, ctx, tool: str, definition: Any, scope: str = GLOBAL):
        """Register ``tool`` in ``scope`` as an effect of ``ctx``; a second registration there fails."""
        check_definition(tool, definition)
        return self._add(ctx, tool, definition, scope)

    def _add(self, ctx, tool: str, definition: Any, scope: str):
        def add():
            target = self.scopes.get(scope)
            if target is None:
                raise ToolError(f"unknown tool scope {scope!r}")
            if tool in target.own:
                raise ToolError(f"tool {tool!r} is already registered in scope {scope!r}")
            target.own[tool] = definition
            return lambda: target.own.pop(tool, None)
        return ctx.effect(add, f"tools.register({tool})")

    def register_transport(self, ctx, tool: str, definition: Any, scope: str = GLOBAL):
        """Register a reserved name (``run_code``); only ``@dshctl/code-mode`` may, from its own context."""
        import sys
        plugin = getattr(getattr(ctx, "fiber", None), "plugin", None)
        if tool not in RESERVED or plugin is None or plugin is not sys.modules.get(TRANSPORT_OWNER):
            raise ToolError(f"tool name {tool!r} is reserved for the Code Mode transport")
        return self._add(ctx, tool, definition, scope)

    def view(self, scope: str = GLOBAL) -> dict[str, Any]:
        if scope not in self.scopes:
            raise ToolError(f"unknown tool scope {scope!r}")
        return visible(self.scopes[scope])


def apply(ctx, config):
    """In the host composition: provide the registry. Inside a preset mount (agent-presets provides
    ``toolScope`` there): add the preset's layer, with its restriction rules, to the running registry."""
    registry, marker = ctx.get("tools"), ctx.get("toolScope")
    if isinstance(registry, ToolRegistry) and marker is not None:
        registry.scope(ctx, marker, GLOBAL, deny=config["deny"], allow=config.get("allow"))
        return
    registry = ToolRegistry()
    registry.scopes[GLOBAL].deny = tuple(config["deny"])
    if config.get("allow") is not None:
        registry.scopes[GLOBAL].allow = tuple(config["allow"])
    ctx.provide("tools", registry)
