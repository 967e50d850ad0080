"""Homes that both the real dsh and dshctl can compose, built from examples/home and the shared corpus.

dsh resolves a bundle from its installation first, then from the profile (Node's lookup from
``profiles/<p>/package.json``); on every dump it also links its installation's packages into
``$DSH_HOME/profiles/node_modules``. dshctl has no installation: it looks in the profile the way Node
does, parents included, so once dsh has run on a home dshctl finds the in-box bundles
(``@deepseek-ai/dsh-base``, …) through that same ``profiles/node_modules`` — the documented way the two
tools read one home (docs/compose.md, "The real dsh beside dshctl"). Every other bundle a profile
lists is installed into the profile's ``node_modules`` as a package manager would: the corpus copy when
the corpus holds that bundle, else a stand-in with an empty patch list (the corpus has only the
manifests of most third-party bundles).
"""
from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import corpus_files
from demo_home import copy_demo_home
from dshctl.core.compose.profile import HOST_BASE_BUNDLE, SHIPPED_BUNDLES

PROFILE_MANIFEST = re.compile(r"^(?:(?P<home>.*)/)?profiles/(?P<profile>[^/]+)/package\.json$")


@dataclass
class Invocation:
    """One dump, as both tools are asked for it: dsh's argv and dshctl's, same home and directory."""
    key: str
    home: Path
    profile: str
    cwd: Path
    default_only: bool = False
    patches: list[str] = field(default_factory=list)

    def dsh_argv(self) -> list[str]:
        argv = ["--profile", self.profile, "--dump-default-config" if self.default_only else "--dump-config"]
        for patch in self.patches:
            argv += ["--patch", patch]
        return argv

    def dshctl_argv(self) -> list[str]:
        argv = ["--profile", self.profile, "profile", "dump"]  # the home: DSH_HOME, as for dsh
        if self.default_only:
            argv.append("--default-only")
        for patch in self.patches:
            argv += ["--patch", patch]
        return argv


def in_box(dsh_source: Path, name: str) -> bool:
    """Whether dsh resolves bundle ``name`` from its own installation (apps/cli is its anchor)."""
    return any((base / "node_modules" / name / "package.json").is_file()
               for base in (dsh_source / "apps" / "cli", dsh_source / "apps", dsh_source))


def install(profile_dir: Path, package_dir: Path) -> Path:
    """Copy a bundle package (its manifest and declared patch file) into the profile's node_modules."""
    manifest = json.loads(package_dir.joinpath("package.json").read_text(encoding="utf-8-sig"))
    target = profile_dir / "node_modules" / manifest["name"]
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy2(package_dir / "package.json", target / "package.json")
    patch = ((manifest.get("dsh") or {}).get("bundle") or {}).get("patch")
    if isinstance(patch, str) and (package_dir / patch).is_file():
        (target / patch).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(package_dir / patch, target / patch)
    return target


def install_stand_in(profile_dir: Path, name: str) -> Path:
    target = profile_dir / "node_modules" / name
    target.mkdir(parents=True, exist_ok=True)
    (target / "package.json").write_text(json.dumps(
        {"name": name, "version": "0.0.0", "dsh": {"bundle": {"patch": "cordis.patch.yml"}}}, indent=2) + "\n")
    (target / "cordis.patch.yml").write_text("[]\n")
    return target


def demo_home(target: Path) -> Path:
    """examples/home with dshctl's base bundle installed into the web profile, so dsh resolves it too."""
    home = copy_demo_home(target)
    install(home / "profiles" / "web", SHIPPED_BUNDLES / HOST_BASE_BUNDLE)
    return home


def corpus_bundles() -> dict[str, Path]:
    """Bundle name -> package directory, for every corpus package that declares ``dsh.bundle``."""
    out = {}
    for row in corpus_files.index():
        if row["kind"] != "bundle-manifest":
            continue
        path = corpus_files.path_of(row)
        manifest = json.loads(path.read_text(encoding="utf-8-sig"))
        if isinstance(manifest.get("name"), str) and (manifest.get("dsh") or {}).get("bundle"):
            out[manifest["name"]] = path.parent
    return out


def corpus_profile_homes(target: Path, dsh_source: Path) -> list[tuple[Path, str]]:
    """Every home in the corpus (a ``profiles/<p>/package.json``), copied, its bundles installed."""
    bundles = corpus_bundles()
    out = []
    for row in corpus_files.index():
        match = PROFILE_MANIFEST.match(row["path"])
        if row["kind"] != "profile" or not match:
            continue
        source_manifest = corpus_files.path_of(row)
        source_home = source_manifest.parents[2]
        home = target / f"{row['repo'].replace('/', '__')}__{match['profile']}"
        shutil.copytree(source_home, home, symlinks=True)
        profile_dir = home / "profiles" / match["profile"]
        listed = json.loads(source_manifest.read_text(encoding="utf-8-sig"))["dsh"]["profile"]["bundles"]
        for name in listed:
            if in_box(dsh_source, name) or (profile_dir / "node_modules" / name / "package.json").is_file():
                continue
            if name in bundles:
                install(profile_dir, bundles[name])
            else:
                install_stand_in(profile_dir, name)
        out.append((home, match["profile"]))
    return out


def corpus_bundle_home(target: Path, dsh_source: Path) -> tuple[Path, list[tuple[str, str]]]:
    """One home with a profile per corpus bundle dsh does not ship: dsh's web bundles, then that one."""
    home = target / "bundles"
    profiles = []
    for number, (name, package_dir) in enumerate(sorted(corpus_bundles().items()), start=1):
        if in_box(dsh_source, name):
            continue  # dsh would read its installation's copy, never the profile's (docs/compose.md)
        profile = f"b{number:02d}"
        profile_dir = home / "profiles" / profile
        install(profile_dir, package_dir)
        (profile_dir / "package.json").write_text(json.dumps(
            {"name": f"dsh-profile-{profile}", "private": True, "dependencies": {},
             "dsh": {"profile": {"bundles": ["@deepseek-ai/dsh-base", "@deepseek-ai/dsh-web-app", name]}}},
            indent=2) + "\n")
        profiles.append((profile, name))
    return home, profiles


def corpus_patch_files() -> list[Path]:
    """Every YAML file of the corpus that is a patch layer or a profile file: candidates for ``--patch``."""
    out = []
    for row in corpus_files.index():
        if row["kind"] in ("patch", "profile") and row["path"].endswith((".yml", ".yaml")):
            out.append(corpus_files.path_of(row))
    return out


BASE = "@deepseek-ai/dsh-base"

# Profiles of the error home: name -> (bundles, user layer text or None). Bundles starting with
# "local:" are installed into the profile as written by ``_local_bundle``.
ERROR_PROFILES = {
    "broken-user": ([BASE], "- id: timer\n  config: {interval: [1\n"),
    "user-not-a-list": ([BASE], "id: timer\n"),
    "user-entry-not-a-mapping": ([BASE], "- id: timer\n  disabled: true\n- just a string\n"),
    "user-empty": ([BASE], "# only a comment\n"),
    "missing-bundle": ([BASE, "@nowhere/not-installed"], None),
    "plain-package": ([BASE, "local:plain"], None),
    "bundle-patch-missing": (["local:no-patch-file"], None),
    "bundle-patch-broken": (["local:broken-patch"], None),
    "bundle-patch-scalar": (["local:scalar-patch"], None),
}


def _local_bundle(profile_dir: Path, kind: str) -> str:
    name = f"@local/{kind}"
    target = profile_dir / "node_modules" / name
    target.mkdir(parents=True)
    manifest = {"name": name, "version": "1.0.0"}
    if kind != "plain":
        manifest["dsh"] = {"bundle": {"patch": "./cordis.patch.yml"}}
    (target / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    text = {"broken-patch": "- insert:\n  - {id: a, name: A\n", "scalar-patch": "just text\n"}.get(kind)
    if text is not None:
        (target / "cordis.patch.yml").write_text(text)
    return name


def error_home(target: Path) -> Path:
    """One home with a profile per failure of ERROR_PROFILES (the profile name says which)."""
    home = target / "errors"
    for profile, (bundles, user_layer) in ERROR_PROFILES.items():
        profile_dir = home / "profiles" / profile
        profile_dir.mkdir(parents=True)
        names = [_local_bundle(profile_dir, b[len("local:"):]) if b.startswith("local:") else b for b in bundles]
        (profile_dir / "package.json").write_text(json.dumps(
            {"name": f"dsh-profile-{profile}", "private": True, "dsh": {"profile": {"bundles": names}}},
            indent=2) + "\n")
        if user_layer is not None:
            (profile_dir / "cordis.patch.yml").write_text(user_layer)
    return home


def broken_home_layer_home(target: Path) -> Path:
    """A home whose home layer ($DSH_HOME/cordis.patch.yml) does not parse; its web profile is dsh's template."""
    home = target / "broken-home-layer"
    home.mkdir(parents=True)
    (home / "cordis.patch.yml").write_text("- id: timer\n\tdisabled: true\n")
    return home


# A --patch that makes every kind of patch warning dsh has, against the demo home's rows.
WARNING_PATCH = """\
- id: no-such-row
  disabled: true
- id: greeter
  name: '@demo/not-the-greeter'
  config: {}
- id: no-such-group
  insert:
    - {id: extra-1, name: '@demo/extra'}
- id: timer
  insert:
    - {id: extra-2, name: '@demo/extra'}
- disabled: true
- id: 7
  config: {a: 1}
- id: echo-uppr
  disabled: true
"""


# Profile manifests dsh reads with a bare JSON.parse and no shape checks: profile name -> package.json text.
MANIFEST_CASES = {
    "manifest-array": "[1]\n",
    "manifest-truncated": '{"name": ',
    "bundles-a-string": '{"dsh": {"profile": {"bundles": "@deepseek-ai/dsh-base"}}}\n',
    "bundles-a-number": '{"dsh": {"profile": {"bundles": [1]}}}\n',
    "no-dsh-section": '{"name": "dsh-profile-no-dsh-section", "private": true}\n',
}


def manifest_home(target: Path) -> Path:
    home = target / "manifests"
    for profile, text in MANIFEST_CASES.items():
        (home / "profiles" / profile).mkdir(parents=True)
        (home / "profiles" / profile / "package.json").write_text(text)
    return home
