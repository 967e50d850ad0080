"""Shared pieces for loader tests: recording plugins and a loader with them registered by name."""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from dshctl.core.yaml.dialect import load_yaml
from dshctl.loader import Loader


class Log(list):
    def of(self, kind: str) -> list:
        return [item[1:] for item in self if item[0] == kind]


class Recorder:
    """A plugin that logs apply/dispose with its config; ``{"fail": true}`` makes apply raise.

    ``provides`` names a service it provides (value: a dict with the config); ``inject`` its deps."""

    def __init__(self, name: str, log: Log, *, provides: str | None = None,
                 inject: list | None = None, on_update: bool = False):
        self.name = name
        self.log = log
        self.provides = provides
        self.inject = inject or []
        self.on_update = on_update
        self.fibers: list = []

    def apply(self, ctx, config):
        if isinstance(config, dict) and config.get("fail"):
            self.log.append(("fail", self.name, config))
            raise RuntimeError(f"{self.name} refuses {config}")
        self.log.append(("apply", self.name, config))
        self.fibers.append(ctx.fiber)
        if self.provides:
            ctx.provide(self.provides, {"by": self.name, "config": config})
        if self.on_update:
            def handle(fiber, new_config, no_save, next_):
                self.log.append(("in-place", self.name, new_config))
                return None
            ctx.on("internal/update", handle)
        ctx.effect(lambda: (lambda: self.log.append(("dispose", self.name, config))))


def make_loader(log: Log, *plugins: Recorder, **kwargs: Any) -> Loader:
    loader = Loader(home=Path("/tmp/dsh-home-for-tests"), **kwargs)
    for plugin in plugins:
        loader.resolver.builtins[plugin.name] = plugin
    return loader


def rows_of(text: str, path: str = "<test>.yml") -> list:
    return load_yaml(text, path).value


def run(coro, timeout: float = 20.0):
    """Run a test body; a hang fails with a traceback instead of waiting for a runtime timeout."""
    return asyncio.run(asyncio.wait_for(coro, timeout))


def states(loader: Loader) -> dict[str, str]:
    """full id -> state name, over the whole tree (groups and includes flattened)."""
    out: dict[str, str] = {}

    def walk(rows):
        for row in rows:
            out[row["full_id"]] = row["state"]
            walk(row["children"])
    walk(loader.tree_snapshot())
    return out


def live_fibers(loader: Loader) -> int:
    """Fibers alive in the registry, besides the root and the loader's own."""
    registry = loader.ctx.registry
    return sum(1 for rt in registry._runtimes.values() for f in rt.fibers
               if f.uid is not None and f is not loader._fiber)
