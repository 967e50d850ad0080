"""The preset tree: an agent preset mounted for a session scope (cordis-runtime.md §7, dsh-config.md §7).

An Include that never writes its file, is plugged directly under the scope's context (so its rows
are not loader entries), resolves bare names from the host composition's base, and after settling is
audited: a row that stays inactive, or a service published into the root realm, rejects the mount
and everything it mounted is disposed.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dshctl.errors import Loc
from dshctl.runtime import ROOT_REALM, Fiber, State

from .errors import LoaderError, cause_text
from .include import Include
from .transaction import settle

if TYPE_CHECKING:  # pragma: no cover
    from dshctl.runtime import Context

    from .entry import Entry
    from .loader import Loader

COMPOSITION = "agent.cordis.yml"


@dataclass
class PresetMount:
    preset_id: str
    fiber: Fiber
    include: Include

    async def dispose(self) -> None:
        await self.fiber.dispose()


class _PresetPlugin:
    name = "agent-preset"

    def __init__(self, loader: "Loader", file: Path, preset_id: str, host_base: Path):
        self.loader, self.file, self.preset_id, self.host_base = loader, file, preset_id, host_base
        self.include: Include | None = None

    async def apply(self, ctx: "Context", config: Any):
        include = Include(self.loader, ctx, self.file, prefix=f"{self.preset_id}:",
                          module_base=self.host_base, writable=False)
        self.include = include
        await include.refresh()
        return include.close


async def mount_preset(loader: "Loader", scope: "Context", preset_dir: Path, *, host_base: Path,
                       preset_id: str | None = None) -> PresetMount:
    """Mount ``preset_dir/agent.cordis.yml`` under ``scope`` (a session context: one with an
    isolated realm); raises (having disposed it) when the mount fails the audit."""
    preset_dir = Path(preset_dir).resolve()
    preset_id = preset_id or preset_dir.name
    if not scope._realms:  # no realm of its own: what the preset provides would be process-wide
        raise LoaderError(f'agent-presets: refusing to mount preset "{preset_id}" into an unscoped '
                          "context; its registrations would apply to every agent in the process",
                          hint="mount under a session context (one made with ctx.isolate(...))")
    file = preset_dir / COMPOSITION
    plugin = _PresetPlugin(loader, file, preset_id, Path(host_base).resolve())
    fiber = scope.plugin(plugin)
    detail = None
    try:
        await fiber
    except Exception as err:  # noqa: BLE001 - reported as the mount failure
        detail = cause_text(err)
    if detail is None and plugin.include is not None:
        tree = plugin.include.tree
        await settle([e.fiber for e in tree.order() if e.fiber is not None])
        detail = audit(tree.order(), fiber)
    if detail is not None:
        await fiber.dispose()
        raise LoaderError(f'agent-presets: preset "{preset_id}" failed to mount: {detail} ({file})',
                          loc=Loc(str(file)), hint="fix the preset's rows; nothing of it stays mounted")
    assert plugin.include is not None
    return PresetMount(preset_id, fiber, plugin.include)


def audit(entries: list["Entry"], mount: Fiber) -> str | None:
    inactive = [e for e in entries if not e.disabled and not e.skipped
                and (e.fiber is None or e.fiber.state is not State.ACTIVE)]
    if inactive:
        lines = [f"{e.full_id} ({e.name}): {_why(e)}" for e in inactive]
        return f"{len(inactive)} row(s) did not activate:\n" + "\n".join(lines)
    leaked = sorted({name for f in _descendants(mount) for name, realm in f._provided
                     if realm == ROOT_REALM})
    if leaked:
        return (f"row(s) published process-global service(s) [{', '.join(leaked)}]; a preset service "
                "must sit behind an `isolate` realm or move to the host composition")
    return None


def _why(entry: "Entry") -> str:
    fiber = entry.fiber
    if fiber is None:
        return "no fiber"
    if fiber.error is not None:
        return f"failed: {cause_text(fiber.error)}"
    services = fiber.registry.services
    missing = [n for n in fiber.inject
               if (b := services.lookup(n, fiber.ctx._realm(n))) is None or not b.usable()]
    return "waiting for " + ", ".join(missing)


def _descendants(root: Fiber) -> list[Fiber]:
    found = []
    for runtime in list(root.registry._runtimes.values()):
        for fiber in runtime.fibers:
            parent = fiber.parent
            while parent is not None and parent is not root:
                parent = parent.parent
            if parent is root:
                found.append(fiber)
    return found
