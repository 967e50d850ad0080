"""Where dshctl meets pnpm on one profile: which dependencies ``package.json`` holds and what pins
them (dshctl's lock, or ``pnpm-lock.yaml`` when dsh's plugin command changed it), and the registry
bundles of one run. See docs/bundles.md, "Beside dsh"."""
from __future__ import annotations

from pathlib import Path

from dshctl.bundles import lock as lockmod
from dshctl.bundles import manifest as mf
from dshctl.bundles import pnpm_lock
from dshctl.bundles.registry_spec import RegistrySpec, TarballSpec, looks_like_tarball
from dshctl.bundles.specs import GitSpec, parse_spec
from dshctl.errors import DshctlError, Loc


# dsh's profile template (packages/boot/app-boot/src/profile.ts): the hoisted linker and no
# automatic peers, which is how dsh's pnpm installs plugins.
PNPM_WORKSPACE_TEMPLATE = "packages:\n  - .\n\nnodeLinker: hoisted\nautoInstallPeers: false\n"


def pnpm_lock_text(prof, manifest: dict, new_lock: dict, home: Path) -> str | None:
    """``pnpm-lock.yaml`` as pnpm would write it for the new state; None when it is unchanged."""
    text = pnpm_lock.render(pnpm_lock.build(new_lock, mf.dependencies_of(manifest), prof.pnpm,
                                            registry_lookup(prof.dir, home)))
    if prof.pnpm_lock_path.exists() and prof.pnpm_lock_path.read_text("utf-8") == text:
        return None
    return text


def registry_lookup(profile_dir: Path, home: Path):
    config = []

    def registry_for(name: str) -> str:
        if not config:
            from dshctl.bundles.npm import config as npmconfig

            config.append(npmconfig.load(profile_dir, home))
        return config[0].registry_for(name)
    return registry_for


class RegistryBundles:
    """The registry bundles of one run: one npm context (config, HTTP client, npm store)."""

    def __init__(self, installer, prof, refresh: bool, stage=None):
        self.installer, self.prof, self.refresh = installer, prof, refresh
        self.stage = stage  # the transaction's staging area (a callable), where tarballs unpack
        self.ctx = None
        self.picked: dict[str, dict] = {}
        self._tarballs: dict[str, tuple] = {}

    def _context(self):
        if self.ctx is None:
            from dshctl.bundles.npm import deps as npmdeps

            inst = self.installer
            self.ctx = npmdeps.NpmContext(inst.home, self.prof.dir, faults=inst.faults,
                                          limits=inst.opts.limits, offline=inst.opts.offline,
                                          progress=inst.opts.progress, git_store=inst.store,
                                          refresh=self.refresh, unpack_root=self.stage)
        return self.ctx

    def resolve(self, spec: RegistrySpec, locked: dict | None) -> None:
        from dshctl.bundles import registry_install

        chosen, tarball = registry_install.resolve(self._context(), spec, locked)
        self.picked[spec.source_key] = {"resolved": chosen.resolved, "integrity": chosen.integrity}
        self._tarballs[spec.source_key] = (chosen, tarball)
        return None

    def fetch(self, spec: RegistrySpec):
        from dshctl.bundles import registry_install

        chosen, tarball = self._tarballs[spec.source_key]
        return registry_install.fetch(self._context(), spec, chosen, tarball)

    def close(self) -> None:
        if self.ctx is not None:
            self.ctx.close()


def known_specs(prof) -> dict[str, tuple]:
    """``name -> (spec, pin)`` for every dependency in ``package.json`` (the membership both tools
    agree on): pinned by dshctl's lock when its entry was made for the same spec, else by
    ``pnpm-lock.yaml`` (what dsh's plugin command installed), else unpinned. Specs dshctl cannot install
    (``file:`` directories, ``link:``) are left to pnpm."""
    out = {}
    for name, text in mf.dependencies_of(prof.manifest).items():
        entry = prof.lock.get(name)
        found = _from_pnpm(prof, name, text)
        if found is not None and found[1] is not None:  # dshctl writes both locks alike: a pnpm
            if entry is not None and entry.registry is None and isinstance(found[1], str) \
                    and GitSpec(entry.spec, entry.url, entry.ref).manifest_spec() == text:
                found = (GitSpec(entry.spec, entry.url, entry.ref), found[1])
            out[name] = found  # pin that differs from dshctl's is newer (dsh changed it)
            continue
        if entry is not None and entry.registry is not None and entry.spec == text:
            out[name] = (TarballSpec(text) if looks_like_tarball(text) else
                         RegistrySpec(f"{name}@{text}", name, text),
                         {"version": entry.version, **entry.registry})
            continue
        if entry is not None and entry.registry is None:
            spec = GitSpec(entry.spec, entry.url, entry.ref)
            if text in (spec.manifest_spec(), spec.legacy_pinned(entry.commit)):
                out[name] = (spec, entry.commit)
                continue
        if found is not None:
            out[name] = found
    return out


def _from_pnpm(prof, name: str, text: str):
    from dshctl.bundles.npm.pick import is_registry_spec

    pinned = prof.pnpm.pinned(name, text)
    if looks_like_tarball(text):
        resolution = (pinned or {}).get("resolution") or {}
        if isinstance(resolution.get("integrity"), str):
            return TarballSpec(text), {"version": "0.0.0", "resolved": text,
                                       "integrity": resolution["integrity"]}
        return TarballSpec(text), None
    if is_registry_spec(text):
        spec = RegistrySpec(f"{name}@{text}", name, text)
        if pinned and "version" in pinned and isinstance(pinned["resolution"].get("integrity"), str):
            tarball = pinned["resolution"].get("tarball") or pnpm_lock.default_tarball(
                registry_lookup(prof.dir, prof.dir.parent.parent)(name), name, pinned["version"])
            return spec, {"version": pinned["version"], "resolved": tarball,
                          "integrity": pinned["resolution"]["integrity"]}
        return spec, None
    try:
        spec = parse_spec(text)
    except DshctlError:
        return None
    commit = (pinned or {}).get("git", {}).get("commit")
    return spec, commit if commit and (pinned["git"]["repo"] == spec.url) else None


def refuse_unknown_bundles(prof, manifest: dict, lock: dict) -> None:
    """A listed bundle dependency that is neither locked nor installed (a `profile init --from` copy)
    cannot be told apart from a dependency that stopped being a bundle; reconcile would drop it from
    ``dsh.profile.bundles`` without a word. Refuse instead, before anything is written."""
    deps = mf.dependencies_of(manifest)
    unknown = [name for name in mf.bundles_of(manifest)
               if name in deps and name not in lock and name not in mf.DEFAULT_TEMPLATE_BUNDLES
               and not (prof.module_dir(name) / "package.json").is_file()]
    if unknown:
        spec = deps[unknown[0]]
        raise DshctlError(
            f"bundle{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} listed in dsh.profile.bundles "
            f"{'are' if len(unknown) > 1 else 'is'} neither installed nor in {lockmod.LOCK_NAME}; nothing was changed",
            loc=Loc(str(prof.manifest_path)),
            hint=f"add it from its source (dshctl plugin --profile {prof.name} add <git url>; the manifest "
                 f"says {spec!r}), or copy node_modules/{unknown[0]} from the profile it came from")
