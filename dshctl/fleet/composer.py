"""The fleet host's composition: the published revision's layers, then this host's ``--patch`` files.

It stands in for host/composer.py's HostComposer (the same ``boot``/``compose``/``user_files``), so
every revision goes through the host's own transactional reload: same verdicts, rollback, last-good.
On a fleet host the user layers come from the revision (placed under this host's home and profile,
revision.py); what is this host's own (a port, a key) lives in its ``--patch`` files, which are read
on every pass and watched.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from dshctl.core.compose import layers as L
from dshctl.core.compose.composition import compose_layers, launcher_layer
from dshctl.core.compose.profile import profile_dir
from dshctl.errors import DshctlError, Loc
from dshctl.host.composer import Composed
from dshctl.host.lastgood import rows_digest

from . import revision as R


class FleetComposer:
    def __init__(self, home: Path, profile: str, patches: Sequence[Path] = ()):
        self.home = Path(home)
        self.profile = profile
        self.directory = profile_dir(self.home, profile)
        self.patches = [Path(os.path.abspath(p)) for p in patches]
        self.revision: dict | None = None     # the revision this host wants to run
        self.composed_revision: int | None = None
        self.bundles: list[str] = []
        self.booted = False
        self._parsed: tuple[int, list] | None = None   # (revision number, its layers on this host)

    @property
    def user_files(self) -> list[Path]:
        return list(self.patches)

    def boot(self) -> Composed:
        self.booted = True
        return self.compose()

    def compose(self) -> Composed:
        """The wanted revision's layers, this host's patches, the launcher layer (raises DshctlError)."""
        if self.revision is None:
            raise DshctlError("no fleet revision to run: etcd was unreachable and this host has none saved",
                              loc=Loc(str(self.directory)),
                              hint="start etcd (or fix --fleet URL) and publish with `dshctl fleet publish`")
        number = self.revision["revision"]
        if self._parsed is None or self._parsed[0] != number:
            self._parsed = (number, R.host_layers(self.revision["layers"], self.home, self.profile))
            self.bundles = [layer.label for layer in self._parsed[1] if layer.kind == L.BUNDLE]
        layers = list(self._parsed[1]) + L.patch_layers(self.patches)
        result = compose_layers(layers, track=False)
        launcher = launcher_layer(result.rows)
        if launcher.patches:
            result = compose_layers(layers + [launcher], track=False)
        self.composed_revision = number
        return Composed(result.rows, result.warnings, rows_digest(result.rows))
