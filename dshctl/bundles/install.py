"""add / remove / update / install: resolve -> fetch into the store -> inspect -> place -> record.

Each operation runs under the profile lock as one Transaction (see transaction.py): a failure at
any step leaves ``package.json``, ``dshctl.lock.json`` and ``node_modules`` exactly as they were.
No code from a package runs at install time; only its ``package.json`` and patch file are read.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from dshctl.bundles import lock as lockmod
from dshctl.bundles import manifest as mf
from dshctl.bundles import pnpm_lock
from dshctl.bundles.limits import check_tree
from dshctl.bundles.outcome import Change, Options, Outcome  # noqa: F401 - the installer's API
from dshctl.bundles.placed import (declares_dependencies, manifest_of, npm_as_locked,
                                   npm_files_as_locked, same_npm, tree_as_locked)
from dshctl.bundles.package import PLAIN_WARNING, PackageInfo, read_package
from dshctl.bundles.interop import (PNPM_WORKSPACE_TEMPLATE, RegistryBundles, known_specs,
                                    pnpm_lock_text, refuse_unknown_bundles)
from dshctl.bundles.registry_spec import (RegistrySpec, TarballSpec, looks_like_registry,
                                          looks_like_tarball, parse_registry_spec,
                                          parse_tarball_spec)
from dshctl.bundles.specs import GitSpec, parse_spec
from dshctl.bundles.store import StoredPackage, Store
from dshctl.bundles.transaction import (Faults, Transaction, profile_lock, recover,
                                       store_use_lock)
from dshctl.core.compose.profile import USER_LAYER_TEMPLATE, check_profile_name, profile_dir
from dshctl.errors import DshctlError, Loc
from dshctl.records import record

if TYPE_CHECKING:  # the npm modules load only when a bundle has npm dependencies
    from dshctl.bundles.npm.deps import NpmDeps

LOCK_FILE = lockmod.LOCK_NAME


@record
class _Plan:
    spec: GitSpec | RegistrySpec | TarballSpec
    stored: StoredPackage
    info: PackageInfo
    previous: lockmod.LockEntry | None
    npm: NpmDeps | None = None  # None: keep what the lock records, place nothing new
    registry: dict | None = None  # a registry bundle: {"resolved", "integrity"} of its tarball
    npm_intact: bool = True  # install found every placed npm file as the store recorded it


class _Profile:
    """The profile's current state, read once under the lock."""

    def __init__(self, home: Path, name: str):
        self.name = name
        self.dir = profile_dir(home, name)
        self.manifest_path = self.dir / "package.json"
        self.lock_path = self.dir / LOCK_FILE
        self.exists = self.manifest_path.exists()
        text = self.manifest_path.read_text("utf-8") if self.exists else \
            mf.initial_manifest_text(name)
        self.manifest = mf.read(self.manifest_path) if self.exists else json.loads(text)
        self.lock = lockmod.read(self.lock_path)
        self.pnpm_lock_path = self.dir / pnpm_lock.LOCK_NAME
        self.pnpm = pnpm_lock.read(self.pnpm_lock_path)
        self.old_deps = list(mf.dependencies_of(self.manifest))

    def module_dir(self, name: str) -> Path:
        return self.dir / "node_modules" / name

    def installed_is_bundle(self, name: str) -> bool:
        entry = self.lock.get(name)
        if entry is not None:
            return entry.bundle
        try:
            data = json.loads((self.module_dir(name) / "package.json").read_text("utf-8"))
            return isinstance(((data.get("dsh") or {}).get("bundle") or {}).get("patch"), str)
        except (OSError, ValueError, AttributeError):
            return False


class Installer:
    def __init__(self, home: Path, profile: str, options: Options | None = None):
        self.home = Path(home)
        self.profile = check_profile_name(profile)  # before anything is written anywhere
        self.opts = options or Options()
        self.faults = Faults(self.opts.fault_at)
        self.store = Store(self.home, self.faults)

    def _progress(self, message: str) -> None:
        if self.opts.progress:
            self.opts.progress(message)

    # -- operations ---------------------------------------------------------------------------

    def add(self, raw_specs: list[str]) -> Outcome:
        specs = [parse_tarball_spec(s) if looks_like_tarball(s) else parse_registry_spec(s)
                 if looks_like_registry(s) else parse_spec(s, cwd=self.opts.cwd) for s in raw_specs]
        return self._locked(lambda tx, prof: self._install(tx, prof, specs, refresh=False))

    def update(self, names: list[str], *, pins: dict[str, str] | None = None) -> Outcome:
        """Re-resolve the locked refs; ``pins`` (name -> commit, from a dry run) fixes them."""
        def run(tx: Transaction, prof: _Profile) -> Outcome:
            known = known_specs(prof)
            targets = names or list(known)
            unknown = [n for n in targets if n not in known]
            if unknown:
                raise _not_installed(unknown[0], prof)
            specs = [known[n][0] for n in targets]
            pinned = {s.source_key: (pins or {}).get(n) for n, s in zip(targets, specs)}
            return self._install(tx, prof, specs, refresh=True, pins=pinned)
        return self._locked(run)

    def install(self) -> Outcome:
        """Re-create exactly the locked state (commits and trees as recorded)."""
        def run(tx: Transaction, prof: _Profile) -> Outcome:
            known = known_specs(prof)
            specs = [spec for spec, _pin in known.values()]
            pins = {spec.source_key: pin for spec, pin in known.values()}
            return self._install(tx, prof, specs, refresh=False, exact=True, pins=pins)
        return self._locked(run)

    def remove(self, names: list[str]) -> Outcome:
        return self._locked(lambda tx, prof: self._remove(tx, prof, names))

    def _locked(self, body: Callable[[Transaction, _Profile], Outcome]) -> Outcome:
        with profile_lock(self.home, self.profile), store_use_lock(self.home):
            recover(self.home, profile_dir(self.home, self.profile))  # runs killed half-way
            prof = _Profile(self.home, self.profile)
            self.faults.writes = 0  # write:<n> counts within each locked run
            tx = Transaction(self.home, prof.dir, faults=self.faults)
            with tx.running():
                return body(tx, prof)

    # -- install ------------------------------------------------------------------------------

    def _install(self, tx: Transaction, prof: _Profile, specs: list[GitSpec], *, refresh: bool,
                 exact: bool = False, pins: dict[str, str | None] | None = None) -> Outcome:
        tx.step("resolve")
        self._progress("resolving bundles")
        pins = pins or {}
        registry = RegistryBundles(self, prof, refresh, stage=lambda: tx.stage)
        try:
            # a git spec of HEAD may resolve to None: its fetch names the commit (Store.resolve)
            commits = [registry.resolve(s, pins.get(s.source_key)) if isinstance(s, (RegistrySpec, TarballSpec))
                       else pins.get(s.source_key) or
                       self.store.resolve(s, offline=self.opts.offline, refresh=refresh, fetch_head=True)
                       for s in specs]
            tx.step("fetch")
            stored = [registry.fetch(s) if isinstance(s, (RegistrySpec, TarballSpec)) else
                      self.store.ensure(s, c, offline=self.opts.offline, progress=self.opts.progress,
                                        check=lambda tree, s=s: self._judge(prof, s, tree, exact))
                      for s, c in zip(specs, commits)]
            commits = [c if c is not None else p.commit for c, p in zip(commits, stored)]
        finally:
            registry.close()
        tx.step("inspect")
        plans, warnings = self._inspect(prof, specs, stored, exact)
        for plan in plans:
            plan.registry = registry.picked.get(plan.spec.source_key)
        tx.step("dependencies")
        outcome = Outcome(prof.name, prof.dir, [], warnings, not prof.exists, self.opts.dry_run)
        self._dependencies(tx, prof, plans, outcome, exact=exact, refresh=refresh)
        deps_now = mf.dependencies_of(prof.manifest)
        new_lock = {n: e for n, e in prof.lock.items() if n in deps_now}  # dsh may have removed some
        for plan in plans:
            change, entry = self._record(prof, plan, exact)
            new_lock[plan.info.name] = entry
            outcome.changes.append(change)
        manifest = prof.manifest
        refuse_unknown_bundles(prof, manifest, new_lock)
        mf.reconcile(manifest, old_dependencies=prof.old_deps,
                     is_bundle=lambda n: new_lock[n].bundle if n in new_lock
                     else prof.installed_is_bundle(n))
        _fill_positions(outcome.changes, manifest)
        if self.opts.dry_run:
            return outcome
        self._commit(tx, prof, manifest, new_lock,
                     place=[p for p, c in zip(plans, outcome.changes) if c.action != "unchanged"],
                     remember=[] if exact else [(s, c) for s, c in zip(specs, commits)
                                                if isinstance(s, GitSpec)])
        return outcome

    def _judge(self, prof: _Profile, spec: GitSpec, tree: Path, exact: bool, *,
               patch_checked: bool = False) -> PackageInfo:
        """Every rule a package must pass; run on the fetched tree before it enters the store."""
        check_tree(tree, self.opts.limits, f"{spec.raw}")
        info = read_package(tree, source=spec.url, patch_checked=patch_checked)
        # A package without dsh.bundle installs as a plain dependency with dsh's warning (as dsh
        # does; --allow-plain is still accepted and changes nothing).
        if info.conflicts and not (self.opts.force or exact):
            first = info.conflicts[0]
            # named by the spec the user typed: the store path means nothing to them
            label = f"{info.name} {info.version}" if info.version else info.name
            raise DshctlError(f"{spec.raw} ({label}) is not compatible with this dshctl: "
                              f"{first.describe()}",
                              hint="pass --force to install it anyway (the lock records it)")
        return info

    def _inspect(self, prof: _Profile, specs, stored, exact: bool):
        plans, warnings = [], []
        from dshctl import __version__

        for spec, pkg in zip(specs, stored):
            info = self._judge(prof, spec, pkg.path, exact, patch_checked=pkg.checked_by == __version__)
            previous = prof.lock.get(info.name)
            if exact and previous and previous.commit is not None and \
                    previous.commit == pkg.commit and pkg.integrity != previous.integrity:
                raise DshctlError(f"the stored tree of {info.name} @ {pkg.commit[:12]} does not "
                                  f"match the lock file's integrity", loc=Loc(str(prof.lock_path)),
                                  hint="the lock was edited or the store is damaged; delete "
                                       f"{pkg.path} and run install again")
            if not info.is_bundle:
                warnings.append(PLAIN_WARNING.format(name=info.name))
            plans.append(_Plan(spec, pkg, info, previous))
        names = [p.info.name for p in plans]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise DshctlError(f"two specs install the same package {sorted(dup)[0]!r}",
                              hint="give each package once")
        return plans, warnings

    def _dependencies(self, tx: Transaction, prof: _Profile, plans: list[_Plan],
                      outcome: Outcome, *, exact: bool, refresh: bool) -> None:
        """npm dependencies of each bundle: re-resolved by update and for a new or moved bundle,
        taken from the lock otherwise (install; add of an unchanged bundle)."""
        if not any(p.previous and p.previous.npm or declares_dependencies(p.stored.path)
                   for p in plans):
            return  # nothing npm to do: the npm modules (and httpx) are never imported
        from dshctl.bundles.npm import deps as npmdeps

        ctx = npmdeps.NpmContext(self.home, prof.dir, faults=self.faults, limits=self.opts.limits,
                                 offline=self.opts.offline, progress=self.opts.progress,
                                 git_store=self.store, refresh=refresh,
                                 unpack_root=lambda: tx.stage)
        try:
            for i, plan in enumerate(plans, 1):
                prev = plan.previous
                damaged = prev is not None and prev.npm_problem is not None  # re-resolved
                if not damaged and self._keep_placed(prof, plan, exact=exact, refresh=refresh):
                    continue  # nothing to place: npm stays None (kept as locked)
                self._progress(f"npm dependencies {i}/{len(plans)}: {plan.info.name}")
                if not plan.npm_intact:  # the store's copy may be what changed: check it too
                    from dshctl.bundles.store_admin import repair_entries

                    outcome.notes += [f"the store entry {r}" for r in
                                      repair_entries(self.home, prev.npm)]
                if damaged:
                    outcome.warnings.append(f"dshctl: warning: {prev.npm_problem}; resolving "
                                            f"the npm dependencies of {plan.info.name} again")
                # the lock's dependencies when it was made for this very tree; a bundle adopted
                # from pnpm's lock (or moved by dsh) has its dependencies resolved
                if not damaged and (exact or not refresh) and prev is not None and \
                        prev.commit == plan.stored.commit and prev.integrity == plan.stored.integrity:
                    plan.npm = npmdeps.from_lock(ctx, plan.info.name, prev.npm if prev else {})
                else:
                    plan.npm = npmdeps.resolve_bundle(ctx, plan.info.name,
                                                      manifest_of(plan.stored.path))
                outcome.notes += plan.npm.notes
                outcome.warnings += plan.npm.warnings
                outcome.scripts += plan.npm.scripts
        finally:
            ctx.close()

    def _keep_placed(self, prof: _Profile, plan: _Plan, *, exact: bool, refresh: bool) -> bool:
        """The bundle's placed npm packages stay as they are: same tree, as locked, and for
        install (``exact``) every file re-hashed as the store recorded it (else repaired)."""
        prev, directory = plan.previous, prof.module_dir(plan.info.name)
        same_tree = prev is not None and prev.commit == plan.stored.commit \
            and prev.integrity == plan.stored.integrity and npm_as_locked(directory, prev)
        if exact and same_tree:
            plan.npm_intact = npm_files_as_locked(self.home, directory, prev)
        return not refresh and same_tree and (not exact or (
            tree_as_locked(directory, prev) and plan.npm_intact))

    def _record(self, prof: _Profile, plan: _Plan, exact: bool):
        info, prev, pkg = plan.info, plan.previous, plan.stored
        npm = plan.npm.packages if plan.npm is not None else (prev.npm if prev else {})
        intact = prev is not None and prof.module_dir(info.name).is_dir() and \
            prev.commit == pkg.commit and prev.integrity == pkg.integrity and \
            same_npm(prev.npm, npm) and npm_as_locked(prof.module_dir(info.name), prev)
        if exact:
            action = "unchanged" if intact and plan.npm_intact and \
                tree_as_locked(prof.module_dir(info.name), prev) else "installed"
        elif intact:
            action = "unchanged"
        else:
            action = "added" if prev is None else "updated"
        # install (exact) keeps a recorded --force; anything else needs --force again
        forced = bool(info.conflicts) and (self.opts.force or (exact and prev is not None and prev.forced))
        if plan.registry is not None:  # the lock keeps the range pnpm records (update re-resolves it)
            spec_text = plan.spec.manifest_spec(info.version or "0.0.0")
            entry = lockmod.LockEntry(
                spec=spec_text, url=plan.registry["resolved"], ref=None, commit=None,
                version=info.version, integrity=pkg.integrity, bundle=info.is_bundle,
                forced=forced, conflicts=[c.to_dict() for c in info.conflicts], npm=npm,
                registry=dict(plan.registry))
        else:
            spec_text = plan.spec.manifest_spec()
            entry = lockmod.LockEntry(
                spec=plan.spec.raw, url=plan.spec.url, ref=plan.spec.ref, commit=pkg.commit,
                version=info.version, integrity=pkg.integrity, bundle=info.is_bundle,
                forced=forced, conflicts=[c.to_dict() for c in info.conflicts], npm=npm)
        change = Change(info.name, action, info.version, pkg.commit,
                        prev.commit if prev else None, info.is_bundle, None, forced,
                        entry.conflicts, pkg.path, len(npm))
        mf.set_dependency(prof.manifest, info.name, spec_text)
        return change, entry

    # -- remove -------------------------------------------------------------------------------

    def _remove(self, tx: Transaction, prof: _Profile, names: list[str]) -> Outcome:
        tx.step("resolve")
        deps = mf.dependencies_of(prof.manifest)
        changes = []
        for name in names:
            if name not in deps and name not in prof.lock:
                raise _not_installed(name, prof)
            old = prof.lock.get(name)
            changes.append(Change(name, "removed", old.version if old else None, None,
                                  old.commit if old else None, prof.installed_is_bundle(name),
                                  npm_packages=len(old.npm) if old else 0))
            mf.set_dependency(prof.manifest, name, None)
        new_lock = {n: e for n, e in prof.lock.items() if n not in names}
        manifest = prof.manifest
        refuse_unknown_bundles(prof, manifest, new_lock)
        mf.reconcile(manifest, old_dependencies=prof.old_deps,
                     is_bundle=lambda n: new_lock[n].bundle if n in new_lock
                     else prof.installed_is_bundle(n))
        outcome = Outcome(prof.name, prof.dir, changes, [], False, self.opts.dry_run)
        if not self.opts.dry_run:
            self._commit(tx, prof, manifest, new_lock, place=[], remove=names)
        return outcome

    # -- the commit ---------------------------------------------------------------------------

    def _commit(self, tx: Transaction, prof: _Profile, manifest: dict,
                new_lock: dict[str, lockmod.LockEntry], *, place: list[_Plan],
                remove: list[str] = (), remember: list = ()) -> None:
        tx.step("stage")
        staged = []
        for i, plan in enumerate(place):
            tree = tx.stage_copy(plan.stored.path, f"{i}")
            if plan.npm is not None and plan.npm.trees:
                from dshctl.bundles.npm.layout import populate
                from dshctl.bundles.npm.store import NpmStore

                self._progress(f"placing {len(plan.npm.trees)} npm packages for {plan.info.name}")
                populate(tree, plan.npm.trees, NpmStore(self.home, self.faults, self.opts.limits))
            staged.append((plan.info.name, tree))
        tx.step("place")
        for i, (name, tree) in enumerate(staged):
            tx.replace_dir(prof.module_dir(name), tree, f"{i}")
        for j, name in enumerate(remove):
            tx.replace_dir(prof.module_dir(name), None, f"rm-{j}")
        tx.step("manifest")
        if not prof.exists:
            tx.write_new_file(prof.dir / "cordis.patch.yml", USER_LAYER_TEMPLATE)
        if not (prof.dir / "pnpm-workspace.yaml").exists():  # dsh's settings, so dsh's pnpm agrees
            tx.write_new_file(prof.dir / "pnpm-workspace.yaml", PNPM_WORKSPACE_TEMPLATE)
        tx.write_file(prof.manifest_path, mf.render(manifest))
        tx.step("lockfile")
        tx.write_file(prof.lock_path, lockmod.render(new_lock))
        pnpm_text = pnpm_lock_text(prof, manifest, new_lock, self.home)
        if pnpm_text is not None:
            tx.write_file(prof.pnpm_lock_path, pnpm_text)
        # Only an installed resolution is remembered (never a dry run's or a refused package's).
        for spec, commit in remember:
            self.store.remember(spec, commit)
        tx.step("commit")


def _fill_positions(changes: list[Change], manifest: dict) -> None:
    bundles = mf.bundles_of(manifest)
    for change in changes:
        if change.name in bundles:
            change.position = bundles.index(change.name) + 1


def _not_installed(name: str, prof: _Profile) -> DshctlError:
    return DshctlError(f"{name} is not installed in profile {prof.name}",
                       loc=Loc(str(prof.manifest_path)),
                       hint=f"see what is installed: dshctl plugin --profile {prof.name} list")
