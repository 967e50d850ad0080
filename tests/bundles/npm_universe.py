"""The packages the test registry serves: a pool of libraries with overlapping ranges and a cycle,
synthesised versions of every dependency the corpus bundles declare (same names), dsh's own
packages for their peers, and packages that misbehave on purpose."""
from __future__ import annotations

import json
import random
import re
import tarfile

from corpus_files import CORPUS, index
from dshctl.bundles.semver import satisfies

from .npm_registry import Registry, make_tarball

POOL = [f"lib-{c}" for c in "abcdefghijkl"]
POOL_VERSIONS = ["1.0.0", "1.1.0", "1.2.3", "2.0.0", "2.1.0"]
RANGES = ["^1.0.0", "~1.1.0", "^2.0.0", "1.0.0", ">=1.1.0 <2.1.0", "*", "2.x", "^1.2.0"]
CORPUS_BUNDLES = ["XMoon/dsh-pi-tui", "00080000/dsh-project-memory", "tyza66/dsh-loop-agent",
                  "arkme-senx/arkme-dsh-plugin", "JNNarrator/jn-deepseek-harness"]
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)(-[0-9A-Za-z.-]+)?")


def corpus_manifests() -> list[tuple[str, dict]]:
    """The corpus's real bundle package.json files whose dependencies are all registry ranges."""
    out = []
    for row in index():
        if row["kind"] != "bundle-manifest" or row["repo"] not in CORPUS_BUNDLES:
            continue
        path = CORPUS / row["repo"].replace("/", "__") / row["path"]
        data = json.loads(path.read_text("utf-8-sig"))
        deps = data.get("dependencies") or {}
        if deps and all(not str(s).startswith(("workspace:", "file:", "git")) for s in deps.values()):
            out.append((f"{row['repo']}:{row['path']}", data))
    return out


def _candidates(spec: str) -> list[str]:
    found = set()
    for m in _VERSION.finditer(spec):
        x, y, z, pre = int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4) or ""
        found |= {f"{x}.{y}.{z}{pre}", f"{x}.{y}.{z}", f"{x}.{y}.{z + 1}", f"{x}.{y + 1}.0",
                  f"{x + 1}.0.0"}
    if not found:
        found = {"1.0.0", "1.5.0"}
    return sorted(found)


def _pool(reg: Registry, rnd: random.Random) -> None:
    for i, name in enumerate(POOL):
        for version in POOL_VERSIONS:
            later = POOL[i + 1:i + 4]
            deps = {d: rnd.choice(RANGES) for d in rnd.sample(later, k=min(len(later), rnd.randint(0, 2)))}
            reg.add(name, version, deps=deps, esm=(i % 3 == 0))
    # a cycle: lib-x <-> lib-y, resolved like npm (each reused from higher up)
    reg.add("lib-x", "1.0.0", deps={"lib-y": "^1.0.0"})
    reg.add("lib-y", "1.0.0", deps={"lib-x": "^1.0.0"})


def _synthesise(reg: Registry, rnd: random.Random, name: str, specs: set[str], peer: bool) -> None:
    versions = set()
    for spec in specs:
        versions |= set(_candidates(spec))
    extra = {}
    if name == "sharp":  # a native package: install script, binding.gyp, platform optionals
        extra = {"scripts": {"install": "node install/check.js"}}
    for version in sorted(versions):
        deps = {} if peer else {d: rnd.choice(RANGES) for d in rnd.sample(POOL, k=rnd.randint(0, 3))}
        optional = None
        files = None
        if name == "sharp":
            optional = {"@img/sharp-linux-x64": version, "@img/sharp-darwin-arm64": version}
            files = {"binding.gyp": "{}", "install/check.js": "process.exit(1)\n"}
            for plat, os_, cpu in (("linux-x64", "linux", "x64"), ("darwin-arm64", "darwin", "arm64")):
                reg.add(f"@img/sharp-{plat}", version, extra={"os": [os_], "cpu": [cpu]})
        reg.add(name, version, deps=deps, optional=optional, extra=extra, files=files,
                esm=not peer and rnd.random() < 0.4)


def build(reg: Registry) -> None:
    rnd = random.Random(16)
    _pool(reg, rnd)
    deps: dict[str, set[str]] = {}
    peers: dict[str, set[str]] = {}
    for _, data in corpus_manifests():
        for name, spec in (data.get("dependencies") or {}).items():
            deps.setdefault(name, set()).add(spec)
        for name, spec in (data.get("peerDependencies") or {}).items():
            peers.setdefault(name, set()).add(spec)
    # A package some bundle takes as a peer gets no dependencies of its own: npm lays out peers
    # in its ideal tree even with --omit=peer, so their dependencies would shift npm's placement
    # (a documented difference, docs/bundles.md).
    for name, specs in sorted(deps.items()):
        _synthesise(reg, rnd, name, specs | peers.get(name, set()), peer=name in peers)
    for name, specs in sorted(peers.items()):
        if name not in deps:
            _synthesise(reg, rnd, name, specs, peer=True)
    _specials(reg)


def _specials(reg: Registry) -> None:
    reg.add("uses-peers", "1.0.0", peers={"@deepseek-ai/cordis": "^4.0.1", "left-pad-peer": "^3.0.0"})
    reg.add("with-script", "1.0.0", extra={"scripts": {"postinstall": "node build.js"}},
            files={"build.js": "require('fs').writeFileSync('built', '1')\n"})
    reg.add("@scope/esm", "1.2.0", esm=True, deps={"lib-a": "^1.0.0"})
    reg.add("needs-optional", "1.0.0", optional={"only-darwin": "^1.0.0", "gone-optional": "^1.0.0"})
    reg.add("only-darwin", "1.0.0", extra={"os": ["darwin"]})
    reg.add("bad-integrity", "1.0.0", integrity="sha512-" + "A" * 86 + "==")
    evil = tarfile.TarInfo("package/../../escaped.txt")
    evil.size = 3
    reg.add("traversal", "1.0.0", tarball=make_tarball(
        {"package.json": json.dumps({"name": "traversal", "version": "1.0.0"})}, extra=[evil]))
    link = tarfile.TarInfo("package/evil-link")
    link.type, link.linkname = tarfile.SYMTYPE, "../../../etc"
    reg.add("link-escape", "1.0.0", tarball=make_tarball(
        {"package.json": json.dumps({"name": "link-escape", "version": "1.0.0"})}, extra=[link]))
    dev = tarfile.TarInfo("package/dev")
    dev.type = tarfile.CHRTYPE
    reg.add("device", "1.0.0", tarball=make_tarball(
        {"package.json": json.dumps({"name": "device", "version": "1.0.0"})}, extra=[dev]))
    reg.add("huge", "1.0.0", files={"blob.bin": "x" * (3 * 1024 * 1024)})
    for name in ("flaky", "stalled", "broken", "private-pkg", "always-500", "forbidden"):
        reg.add(name, "1.0.0")
    reg.add("only-v1", "1.0.0")
    reg.add("deep-a", "1.0.0", deps={"deep-b": "^1.0.0"})
    reg.add("deep-a", "2.0.0", deps={"deep-b": "^2.0.0"})
    reg.add("deep-b", "1.0.0", deps={"deep-a": "^2.0.0"})
    reg.add("deep-b", "2.0.0", deps={"deep-a": "^1.0.0"})
