"""The host's plugin resolver: the loader's, with Node's lookup of bare names through every ancestor's
``node_modules`` (a bundle's rows name sibling bundles, and the profile's own ``node_modules`` sits
above the bundle directory that declared them)."""
from __future__ import annotations

from pathlib import Path

from dshctl.loader.resolve import PluginResolver


class HostResolver(PluginResolver):
    def __init__(self, *, home: Path, profile_dir: Path):
        super().__init__(home=home)
        self.profile_dir = Path(profile_dir)

    def _node_module_roots(self, base: Path) -> list[Path]:
        roots = [d / "node_modules" for d in (Path(base), *Path(base).parents)
                 if d.name != "node_modules"]
        roots.append(self.profile_dir / "node_modules")
        for extra in super()._node_module_roots(base):
            if extra not in roots:
                roots.append(extra)
        return roots
