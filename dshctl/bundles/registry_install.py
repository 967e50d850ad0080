"""A bundle from the npm registry (``add name@range``): pick a version, fetch its tarball into the
npm store (integrity checked before anything reads it, unpacked by the safe extractor into the
run's staging area) and hand the installer that tree as it hands it a git tree."""
from __future__ import annotations

from dshctl.bundles.registry_spec import RegistrySpec, TarballSpec
from dshctl.bundles.store import StoredPackage
from dshctl.bundles.tree import file_digests, tree_hash
from dshctl.errors import DshctlError
from dshctl.records import record


@record(frozen=True)
class RegistryPick:
    version: str
    resolved: str  # the tarball URL without credentials
    integrity: str  # the tarball's SRI


def resolve(ctx, spec: RegistrySpec, locked: dict | None) -> tuple[RegistryPick, str]:
    """``locked`` ({"version", "resolved", "integrity"}, from a lock) is taken as is; otherwise the
    packument is asked. Returns the pick and the tarball URL to download from."""
    from dshctl.bundles.npm import integrity as sri
    from dshctl.bundles.npm.pick import NoMatch, pick
    from dshctl.bundles.npm.registry import FetchFailed
    from dshctl.bundles.npm.store import public_url

    if locked:
        return RegistryPick(locked["version"], locked["resolved"], locked["integrity"]), \
            locked["resolved"]
    if isinstance(spec, TarballSpec):
        return _first_download(ctx, spec), spec.raw
    try:
        manifest = pick(ctx.registry.packument(spec.name), spec.wanted or "latest")
    except (NoMatch, FetchFailed) as exc:
        raise DshctlError(f"{spec.raw}: {exc}",
                          hint="check the name and range, and the registry setting "
                               "(pnpm_config_registry, npm_config_registry or .npmrc)") from None
    dist = manifest.get("dist") or {}
    try:
        integrity = sri.expected(dist)
    except sri.IntegrityError as exc:
        raise DshctlError(f"{spec.raw}: {exc}", hint="dshctl installs no unchecked tarball") from None
    tarball = dist.get("tarball")
    if not isinstance(tarball, str) or not tarball.startswith(("http://", "https://")):
        raise DshctlError(f"{spec.raw}: the registry gives no http(s) tarball URL",
                          hint="the registry's metadata is damaged")
    return RegistryPick(str(manifest.get("version")), public_url(tarball), integrity), tarball


def _first_download(ctx, spec: TarballSpec) -> RegistryPick:
    """A tarball URL has no published integrity: download it once, take its sha512 (pnpm records
    the same) and hand the file to the store's normal check-and-extract path."""
    import base64
    import hashlib
    from dshctl.bundles.npm.registry import FetchFailed

    if ctx.offline:
        raise DshctlError(f"offline: {spec.raw} was never downloaded",
                          hint="run once without --offline")
    tgz = ctx.store._download_dir() / f"url-{hashlib.sha256(spec.raw.encode()).hexdigest()[:16]}.tgz"
    tgz.unlink(missing_ok=True)
    try:
        ctx.registry.tarball_to(spec.raw, tgz)      # streamed to scratch under the size cap
    except FetchFailed as exc:
        raise DshctlError(f"{spec.raw}: {exc}", hint="check the URL") from None
    digest = hashlib.sha512()
    with open(tgz, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    integrity = "sha512-" + base64.b64encode(digest.digest()).decode()
    from concurrent.futures import Future

    done: Future = Future()
    done.set_result(tgz)
    ctx.store._early[integrity] = done  # the store checks and extracts it like any download
    return RegistryPick("0.0.0", spec.raw, integrity)


def fetch(ctx, spec: RegistrySpec, chosen: RegistryPick, tarball: str) -> StoredPackage:
    from dshctl.bundles.npm.store import Wanted

    import tempfile
    from pathlib import Path

    want = Wanted(spec.name, chosen.version, tarball, chosen.integrity, spec.raw)
    stored = ctx.store.ensure_all([want], registry=None if ctx.offline else ctx.registry,
                                  offline=ctx.offline, progress=ctx.progress)[chosen.integrity]
    # the bundle's tree, unpacked where this run stages (it is read, judged, then placed)
    tree = Path(tempfile.mkdtemp(prefix="bundle-", dir=ctx.store.unpack_root())) / "package"
    ctx.store.place(stored, tree)
    files = stored.files if stored.files is not None else file_digests(tree)
    return StoredPackage(None, tree, tree_hash(files), files, None)
