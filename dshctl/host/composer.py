"""The host's composition: boot-time copies of layers 1, 4 and 5, fresh user layers on every reload.

As in dsh (dsh-config.md §10), a reload re-reads only the two user layers; bundle files, ``--patch``
files and the launcher overlay are the copies taken at boot. A change of bundle *membership* cannot be
applied that way, so :meth:`HostComposer.compose` refuses it and asks for a restart instead.

Since the bundle layers never change while the host runs, their part of the patch pass is run once at
boot and each reload resumes from it (core/compose/resume.py); the digest re-encodes only the rows
the reload changed. Where resuming is not exact (YAML aliases), the layers are composed in one pass.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from dshctl.core.compose import layers as L
from dshctl.core.compose import resume
from dshctl.core.compose.composition import compose_layers, launcher_layer
from dshctl.core.compose.profile import manifest_bundles, profile_dir, read_manifest
from dshctl.errors import DshctlError, Loc

from .lastgood import row_text, rows_digest, texts_digest


class RestartRequired(DshctlError):
    """The edit changes something a live reload never re-reads."""


@dataclass
class Composed:
    rows: list
    warnings: list
    digest: str = ""   # lastgood.rows_digest(rows)


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
        self._snapshot: resume.Snapshot | None = None   # the bundle layers' pass, kept from boot
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
        self._snapshot = resume.snapshot(self._bundle_layers)
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
        tail = L.user_layers(self.home, self.profile, reload=reload) + self._patch_layers
        if self._launcher is None:  # layer 5 is computed once, from the first composition
            self._launcher = launcher_layer(self._compose_tail(tail)[0])
        if self._launcher.patches:
            tail.append(self._launcher)
        rows, warnings, digest = self._compose_tail(tail)
        return Composed(rows, warnings, digest)

    def _compose_tail(self, tail: list) -> tuple[list, list, str]:
        """The bundle layers then ``tail``, resumed from the boot-time pass when that is exact."""
        snap = self._snapshot
        resumed = resume.resume(snap, tail) if snap is not None else None
        if resumed is None:  # no provenance: the host never explains
            result = compose_layers(self._bundle_layers + tail, track=False)
            return result.rows, result.warnings, rows_digest(result.rows)
        texts = []
        for pos, row in enumerate(resumed.rows):
            if pos in resumed.public:  # the boot-time twin, unchanged: its text is known
                cached = snap.texts.get(id(row))
                if cached is None:
                    cached = snap.texts[id(row)] = (row, row_text(row))
                texts.append(cached[1])
            else:
                texts.append(row_text(row))
        return resumed.rows, resumed.warnings, texts_digest(texts)

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
