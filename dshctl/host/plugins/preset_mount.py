"""Standing preset mounts for the agent-presets service, through the loader's preset tree.

Each preset is mounted once per process under a scope derived from the agent-presets row: a realm of
its own for ``toolScope``, which names the preset's layer of the tools registry (``preset:<id>``), so a
``@dshctl/tools`` row inside the preset adds that layer instead of a second registry. Sessions join the
standing mount; it goes away with the agent-presets row (it is a child fiber of that row).
"""
from __future__ import annotations

import asyncio


async def ensure_standing(service, preset) -> object:
    mount = service.standing.get(preset.id)
    if mount is not None and mount.fiber.uid is not None:
        return mount
    lock = service.__dict__.setdefault("_mount_lock", asyncio.Lock())
    async with lock:
        mount = service.standing.get(preset.id)
        if mount is not None and mount.fiber.uid is not None:
            return mount
        from dshctl.loader import mount_preset
        loader = service.ctx.get("loader")
        if loader is None:
            raise RuntimeError("agent-presets: no loader service to mount presets with")
        scope = service.ctx.isolate("toolScope")
        scope.provide("toolScope", f"preset:{preset.id}")
        mount = await mount_preset(loader, scope, preset.dir, host_base=loader.tree.base_dir,
                                   preset_id=preset.id)
        service.standing[preset.id] = mount
        return mount
