"""The hostile-registry corpus (issue 28): every misbehaviour a registry can show, against a real
registry on 127.0.0.1, through the installer. Each case must end in one clear refusal (a
DshctlError: never another exception, which the CLI reports as exit 3) or a clean install, with
nothing written outside the home, within the documented deadline; the whole corpus leaves the
process's fds, child processes, threads, temp entries and RSS flat."""
from __future__ import annotations

import copy
import gzip
import io
import json
import tarfile
import tempfile
import time

import pytest

from dshctl.bundles.install import Installer, Options
from dshctl.bundles.limits import MB, Limits
from dshctl.errors import DshctlError
from tests.leaks import Counts

from .conftest import npm_bundle
from .npm_registry import Behaviour, make_tarball

ESCAPE = "../../../../../../../../PLANT/x"


def _bomb() -> bytes:
    """A gzip tarball whose one file inflates to 64 MB (64 KB on the wire)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        info = tarfile.TarInfo("package/zeros.bin")
        info.size = 64 * MB
        tar.addfile(info, io.BytesIO(bytes(64 * MB)))
        pj = json.dumps({"name": "bomb", "version": "1.0.0"}).encode()
        info = tarfile.TarInfo("package/package.json")
        info.size = len(pj)
        tar.addfile(info, io.BytesIO(pj))
    return gzip.compress(raw.getvalue(), 9)


def _setup(reg) -> dict:
    """name -> (spec, expected fragment or None for a clean install); registers what it needs."""
    reg.add("benign", "1.0.0")
    reg.packuments[ESCAPE] = {**copy.deepcopy(reg.packuments["benign"]), "name": ESCAPE}
    reg.add("sneaky", "1.0.0", deps={ESCAPE: "1.0.0"})
    reg.add("bomb", "1.0.0", tarball=_bomb())
    reg.add("hostile-version", "1.0.0")
    doc = reg.packuments["hostile-version"]
    doc["versions"]["../../../PLANT"] = {**doc["versions"]["1.0.0"], "version": "../../../PLANT"}
    doc["dist-tags"]["latest"] = "../../../PLANT"
    for name in ("rate-limited", "trickle", "truncated", "huge-tarball", "huge-packument",
                 "not-json"):
        reg.add(name, "1.0.0")
    reg.behaviour.update({
        "rate-limited": Behaviour(status=429),
        "trickle": Behaviour(trickle=0.3, only="packument"),
        "truncated": Behaviour(truncate=True, only="tarball"),
        "huge-tarball": Behaviour(huge=40 * MB, only="tarball"),
        "huge-packument": Behaviour(huge=20 * MB, no_length=True, only="packument"),
        "not-json": Behaviour(malformed=True),
        "forbidden": Behaviour(status=403),
        "always-500": Behaviour(status=500),
    })
    link = tarfile.TarInfo("package/escape")
    link.type, link.linkname = tarfile.SYMTYPE, "../../../../../../PLANT"
    reg.add("hard-link-escape", "1.0.0", tarball=make_tarball(
        {"package.json": json.dumps({"name": "hard-link-escape", "version": "1.0.0"})},
        extra=[link]))
    return {
        ESCAPE: ("1.0.0", "is not a valid npm package name"),
        "sneaky": ("1.0.0", "is not a valid npm package name"),
        "traversal": ("1.0.0", "outside the package"),
        "link-escape": ("1.0.0", "link pointing outside"),
        "hard-link-escape": ("1.0.0", "link pointing outside"),
        "device": ("1.0.0", "device file"),
        "bomb": ("1.0.0", "unpacks to more than"),
        "bad-integrity": ("1.0.0", "integrity mismatch"),
        "hostile-version": ("latest", None),  # npm ignores a version that is not semver
        "with-script": ("1.0.0", None),        # installed; its script is reported, never run
        "missing-404": ("^1.0.0", "HTTP 404"),
        "forbidden": ("^1.0.0", "HTTP 403"),
        "always-500": ("^1.0.0", "HTTP 500"),
        "rate-limited": ("^1.0.0", "HTTP 429"),
        "trickle": ("^1.0.0", "fetch-deadline"),
        "truncated": ("1.0.0", "tarball"),
        "not-json": ("^1.0.0", "not JSON"),
        "huge-tarball": ("1.0.0", "--max-package-mb"),
        "huge-packument": ("^1.0.0", "--max-packument-mb"),
    }


def test_the_hostile_registry_corpus(home, repos, npm_env, monkeypatch, tmp_path):
    monkeypatch.setenv("npm_config_fetch_deadline", "1500")
    monkeypatch.setenv("npm_config_fetch_timeout", "1000")
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(private_tmp))
    monkeypatch.setattr(tempfile, "tempdir", str(private_tmp))
    cases = _setup(npm_env)
    limits = Limits(total_bytes=16 * MB, packument_bytes=8 * MB)
    bundles = {dep: npm_bundle(repos, f"dsh-c{i}", {dep: spec}) for i, (dep, (spec, _)) in
               enumerate(sorted(cases.items()))}
    # warm up once (imports, the first client, caches), then count
    Installer(home, "warm", Options(limits=limits)).add([npm_bundle(repos, "dsh-warm",
                                                                    {"benign": "1.0.0"}).url])
    store_tmp = home / ".dshctl/store/npm/tmp"
    before = Counts.now(store_tmp, private_tmp)
    outcomes = {}
    for dep, (spec, fragment) in sorted(cases.items()):
        start = time.monotonic()
        try:
            Installer(home, "web", Options(limits=limits)).add([bundles[dep].url])
            outcomes[dep] = None
        except DshctlError as exc:  # anything else would be exit 3
            outcomes[dep] = exc.message
        took = time.monotonic() - start
        assert took < 10, f"{dep}: {took:.1f} s"
        if fragment is None:
            assert outcomes[dep] is None, f"{dep}: {outcomes[dep]}"
        else:
            assert outcomes[dep] is not None and fragment in outcomes[dep], (dep, outcomes[dep])
            assert "\n" not in outcomes[dep]
    after = before.settled(lambda: Counts.now(store_tmp, private_tmp))
    escaped = [p for p in tmp_path.parent.rglob("PLANT*")] + list(tmp_path.rglob("escaped.txt"))
    assert escaped == [], escaped
    before.assert_flat(after)
    placed = list((home / "profiles/web/node_modules").glob("*/node_modules/with-script"))
    assert len(placed) == 1 and (placed[0] / "build.js").is_file()
    assert not (placed[0] / "built").exists()  # no install script ran
