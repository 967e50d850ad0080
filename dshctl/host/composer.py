"""The host's composition: boot-time copies of layers 1, 4 and 5, fresh user layers on every reload.

As in dsh (dsh-config.md §10), a reload re-reads only the two user layers; bundle files, ``--patch``
files and the launcher overlay are the copies taken at boot. A change of bundle *membership* cannot be
applied that way, so :meth:`HostComposer.compose` refuses it and asks for a restart instead.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from dshctl.core.compose import layers as L
from dshctl.core.compose.composition import compose_layers, launcher_layer
from dshctl.core.compose.profile import manifest_bundles, profile_dir, read_manifest
from dshctl.errors import DshctlError, Loc


class RestartRequired(DshctlError):
    """The edit changes something a live reload never re-reads."""


@dataclass
class Composed:
    rows: list
    warnings: list


class HostComposer:
    def __init__(self, home: Path, profile: str, patches: Sequence[Path] = ()):
        self.home = Path(home)
        self.profile = profile
        self.directory = profile_dir(self.home, profile)
        self.manifest_path = self.directory / "package.json"
        self.patches = list(patches)
        self.bundles: list[str] = []
        self._bundle_layers: list[L.Layer] = []
        self._patch_layers: list[L.Layer] = []
        self._launcher: L.Layer | None = None
        self.booted = False

    @property
    def user_files(self) -> list[Path]:
        """The two files a live reload re-reads (and the watcher watches)."""
        return [self.directory / L.PROFILE_LAYER, self.home / L.HOME_LAYER]

    def boot(self) -> Composed:
        """Read every layer, keep the boot-time copies, and compose (raises DshctlError)."""
        self._bundle_layers = L.bundle_layers(self.home, self.profile)
        self._patch_layers = L.patch_layers(self.patches)
        self.bundles = [layer.label for layer in self._bundle_layers]
        self._launcher = None
        self.booted = True
        return self._compose(reload=False)

    def compose(self) -> Composed:
        """Fresh user layers over the boot-time copies. Raises DshctlError or RestartRequired.

        A host that booted from its last-good record (the layers did not compose) has no boot-time
        copies yet, so it reads everything until that works once."""
        if not self.booted:
            return self.boot()
        self.check_membership()
        return self._compose(reload=True)

    def _compose(self, *, reload: bool) -> Composed:
        # dsh labels the profile layer `overlay` at boot and `patches` on a live reload (§6)
        user = L.user_layers(self.home, self.profile, reload=reload)
        base = self._bundle_layers + user + self._patch_layers
        if self._launcher is None:  # layer 5 is computed once, from the first composition
            self._launcher = launcher_layer(compose_layers(base, track=False).rows)
        layers = base + [self._launcher] if self._launcher.patches else base
        result = compose_layers(layers, track=False)  # no provenance: the host never explains
        return Composed(result.rows, result.warnings)

    def check_membership(self) -> None:
        try:
            now = manifest_bundles(read_manifest(self.manifest_path), self.manifest_path)
        except DshctlError:
            return  # the manifest is not re-read for a reload; a broken one matters at the next boot
        if now != self.bundles:
            added = [b for b in now if b not in self.bundles]
            removed = [b for b in self.bundles if b not in now]
            change = ", ".join([f"+{b}" for b in added] + [f"-{b}" for b in removed]) or "order changed"
            raise RestartRequired(f"bundle membership changed ({change}); a live reload never re-reads "
                                  "bundles", loc=Loc(str(self.manifest_path)),
                                  hint="restart the host (stop it, then `dshctl host run`) to apply it")
