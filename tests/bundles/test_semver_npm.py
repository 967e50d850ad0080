"""Differential test: dshctl's npm range checker against npm's own ``semver`` package under Node."""
from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_files import CORPUS  # beside the checkout; a missing corpus fails, never skips
from dshctl.bundles.semver import Range, Version, satisfies, valid_range

BUNDLED = [Path("/usr/lib/node_modules/npm/node_modules/semver"),
           Path("/usr/local/lib/node_modules/npm/node_modules/semver")]

NODE_SCRIPT = r"""
const semver = require(process.argv[1]);
const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const out = cases.map(([v, r, inc]) => {
  let valid = true;
  try { new semver.Range(r); } catch (e) { valid = false; }
  return [semver.satisfies(v, r, {includePrerelease: inc}), valid];
});
process.stdout.write(JSON.stringify(out));
"""


@pytest.fixture(scope="session")
def npm_semver(tmp_path_factory) -> Path:
    """npm's semver package: the copy bundled with npm, else ``npm install semver`` into a temp dir."""
    if not shutil.which("node"):  # never a skip: a missing Node must turn CI red, not green
        pytest.fail("Node is required for the semver differential test (CI has Node 20)")
    candidates = list(BUNDLED)
    if shutil.which("npm"):  # wherever this Node's npm lives (e.g. a CI tool cache)
        root = subprocess.run(["npm", "root", "-g"], capture_output=True, text=True, timeout=60)
        if root.returncode == 0 and root.stdout.strip():
            candidates.insert(0, Path(root.stdout.strip()) / "npm" / "node_modules" / "semver")
    for candidate in candidates:
        if (candidate / "package.json").exists():
            return candidate
    where = tmp_path_factory.mktemp("npm-semver")
    subprocess.run(["npm", "install", "--silent", "--prefix", str(where), "semver@7"], check=True,
                   timeout=120)
    return where / "node_modules" / "semver"


def npm_answers(npm_semver: Path, cases: list) -> list:
    proc = subprocess.run(["node", "-e", NODE_SCRIPT, str(npm_semver)], input=json.dumps(cases),
                          capture_output=True, text=True, check=True, timeout=60)
    return json.loads(proc.stdout)


def _wanted(spec) -> bool:
    return isinstance(spec, str) and not spec.startswith(
        ("workspace:", "catalog:", "link:", "file:", "github:", "http"))


def _lockfile_ranges(path: Path) -> set[str]:
    """Ranges in a pnpm lock file: importer specifiers, packages' engines and peer ranges."""
    from ruamel.yaml import YAML

    data = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    found = set()
    for importer in (data.get("importers") or {}).values():
        for section in importer.values():
            for dep in (section or {}).values() if isinstance(section, dict) else ():
                if isinstance(dep, dict):
                    found.add(dep.get("specifier"))
    for package in (data.get("packages") or {}).values():
        for key in ("engines", "peerDependencies"):
            found.update((package.get(key) or {}).values())
    return {str(r) for r in found if _wanted(r)}


def corpus_ranges() -> list[str]:
    ranges = set()
    for lockfile in CORPUS.rglob("pnpm-lock.yaml"):
        ranges |= _lockfile_ranges(lockfile)
    for manifest in CORPUS.rglob("package.json"):
        try:
            data = json.loads(manifest.read_text(encoding="utf-8-sig"))
        except ValueError:
            continue
        for key in ("dependencies", "peerDependencies", "devDependencies", "engines",
                    "optionalDependencies"):
            for spec in (data.get(key) or {}).values():
                if _wanted(spec):
                    ranges.add(spec)
    return sorted(ranges)


PROBE_VERSIONS = ["0.0.0", "0.0.1-rc.1", "0.0.1", "0.1.0-rc.5", "0.1.0-rc.6", "0.1.0-rc.7",
                  "0.1.0", "0.1.1-rc.1", "0.1.1-rc.2", "0.1.1", "0.1.2-rc.7", "0.2.0-0", "0.2.0",
                  "1.0.0", "1.0.2", "3.18.1", "4.0.0-rc", "4.0.0", "4.0.1", "4.9.9", "5.0.0-alpha",
                  "5.0.0", "18.3.1", "22.19.0", "22.20.0", "24.0.0", "99.0.0"]


def compare(npm_semver: Path, ranges: list[str], versions: list[str]) -> None:
    cases = [[v, r, inc] for r in ranges for v in versions for inc in (False, True)]
    expected = npm_answers(npm_semver, cases)
    mismatches = []
    for (v, r, inc), (want, want_valid) in zip(cases, expected):
        got = satisfies(v, r, include_prerelease=inc)
        if got != want or valid_range(r) != want_valid:
            mismatches.append((v, r, inc, want, got, want_valid))
    assert not mismatches, mismatches[:20]


def test_corpus_ranges_agree_with_npm(npm_semver):
    ranges = corpus_ranges()
    assert "^0.1.0-rc.6 || ^0.1.1-rc.1" in ranges and len(ranges) > 50
    assert "^22.19 || >=24" in ranges  # from the corpus's pnpm lock file
    compare(npm_semver, ranges, PROBE_VERSIONS)


def _partial(rng: random.Random) -> str:
    parts = [rng.choice(["0", "1", "2", "x", "*", "X", "10"])]
    for _ in range(rng.randint(0, 2)):
        parts.append(rng.choice(["0", "1", "2", "3", "x"]))
    text = ".".join(parts)
    if len(parts) == 3 and rng.random() < 0.4:
        text += "-" + rng.choice(["0", "rc.1", "rc.2", "alpha", "beta.3", "1"])
    if rng.random() < 0.1:
        text += "+build.7"
    return text


def _simple(rng: random.Random) -> str:
    op = rng.choice(["", "", "^", "~", "~>", ">", ">=", "<", "<=", "=", "v"])
    space = " " if op and op != "v" and rng.random() < 0.2 else ""
    return f"{op}{space}{_partial(rng)}"


def _range(rng: random.Random) -> str:
    alternatives = []
    for _ in range(rng.randint(1, 3)):
        if rng.random() < 0.2:
            alternatives.append(f"{_partial(rng)} - {_partial(rng)}")
        else:
            alternatives.append(" ".join(_simple(rng) for _ in range(rng.randint(1, 3))))
    return rng.choice([" || ", "||", "  ||  "]).join(alternatives)


def test_generated_ranges_agree_with_npm(npm_semver):
    rng = random.Random(20261129)
    ranges = sorted({_range(rng) for _ in range(700)} | {"", "*", "x", ">*", "<*", ">=*", "<=*"})
    versions = ["0.0.0", "0.0.1", "0.0.2-rc.1", "0.1.0-0", "0.1.0", "0.2.3", "1.0.0-alpha",
                "1.0.0-rc.1", "1.0.0", "1.1.0", "1.2.0", "1.2.3-rc.1", "1.2.3", "2.0.0-0",
                "2.0.0", "2.1.1-beta.3", "3.0.0", "10.0.0", "v1.2.3", "1.2", "bogus"]
    compare(npm_semver, ranges, versions)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=3, max_size=3),
       st.lists(st.sampled_from(["alpha", "beta", "rc", "0", "1", "2", "11"]), max_size=3))
def test_version_order_is_total_and_release_beats_prerelease(nums, pre):
    release = Version(*nums)
    v = Version(*nums, tuple(pre))
    if pre:
        assert v.key() < release.key()
        assert satisfies(str(v), f"<{release}", include_prerelease=True)
    assert satisfies(str(release), f"={release}")
    assert satisfies(str(release), f"^{release}") and satisfies(str(release), f"~{release}")


def test_prerelease_caveat_from_the_spec():
    assert not satisfies("0.1.1-rc.1", "^0.1.0-rc.6")
    assert satisfies("0.1.0-rc.7", "^0.1.0-rc.6")
    assert satisfies("0.1.1-rc.1", "^0.1.0-rc.6", include_prerelease=True)
    assert str(Range.parse("1.2 - 2")) == ">=1.2.0 <3.0.0-0"
