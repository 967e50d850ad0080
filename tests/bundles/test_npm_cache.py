"""The packument cache in the store: HTTP freshness and revalidation against the test registry,
which sends registry.npmjs.org's caching headers (Cache-Control: public, max-age=300, ETag,
Last-Modified) and answers conditional requests with 304."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from datetime import datetime, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dshctl.bundles.install import Installer, Options
from dshctl.errors import DshctlError

from .conftest import installed_packages, npm_bundle, snapshot

DEPS = {"@scope/esm": "^1.0.0", "lib-b": "^2.0.0"}


def add(home, spec, profile="web", **opts):
    return Installer(home, profile, Options(**opts)).add([spec])


def packument_requests(registry) -> list[str]:
    return [r for r in registry.requests if not r.startswith("/-/tarballs/")]


def cache_files(home):
    return sorted((home / ".dshctl/store/npm/packuments").glob("*.json"))


def test_a_fresh_packument_costs_no_request(home, repos, npm_env):
    src = npm_bundle(repos, "dsh-fresh", DEPS)
    add(home, src.url)
    first = packument_requests(npm_env)
    assert first and len(cache_files(home)) == len(set(first))
    expected = installed_packages(home / "profiles/web/node_modules/dsh-fresh")
    npm_env.requests.clear()
    add(home, src.url, profile="other")  # a new profile: resolved again, from the cache
    assert npm_env.requests == []
    assert installed_packages(home / "profiles/other/node_modules/dsh-fresh") == expected


def test_a_stale_packument_is_revalidated_with_a_304(home, repos, npm_env):
    npm_env.max_age = 0  # stale as soon as it is stored
    src = npm_bundle(repos, "dsh-stale", DEPS)
    add(home, src.url)
    names = sorted(set(packument_requests(npm_env)))
    before = {p.name: json.loads(p.read_text())["storedAt"] for p in cache_files(home)}
    npm_env.requests.clear()
    add(home, src.url, profile="other")
    assert sorted(packument_requests(npm_env)) == names  # each asked once more …
    assert sorted(npm_env.not_modified) == names  # … and each answered 304 Not Modified
    assert not [r for r in npm_env.requests if r.startswith("/-/tarballs/")]
    after = {p.name: json.loads(p.read_text())["storedAt"] for p in cache_files(home)}
    assert after.keys() == before.keys() and all(after[k] >= before[k] for k in after)
    assert installed_packages(home / "profiles/other/node_modules/dsh-stale") == \
        installed_packages(home / "profiles/web/node_modules/dsh-stale")


def test_without_cache_control_a_packument_is_fresh_for_a_minute_then_revalidated(
        home, repos, npm_env):
    npm_env.max_age = None  # no Cache-Control at all; Last-Modified is a moment ago
    npm_env.add("leaf-nocc", "1.0.0")
    src = npm_bundle(repos, "dsh-nocc", {"leaf-nocc": "^1.0.0"})
    add(home, src.url)
    [entry] = [p for p in cache_files(home) if json.loads(p.read_text())["url"].endswith("/leaf-nocc")]
    assert json.loads(entry.read_text())["maxAge"] == 60  # the floor: it changed just now
    npm_env.requests.clear()
    add(home, src.url, profile="other")  # within the minute: no request
    assert npm_env.requests == []
    data = json.loads(entry.read_text())
    data["storedAt"] -= 61  # a minute later
    entry.write_text(json.dumps(data))
    add(home, src.url, profile="third")
    assert npm_env.requests == ["/leaf-nocc"] and npm_env.not_modified == ["/leaf-nocc"]


@pytest.mark.parametrize("changed_ago, fresh_for", [(0, 60), (1200, 120), (86400, 300)])
def test_the_heuristic_freshness_is_a_tenth_of_the_age_within_a_minute_and_five(
        changed_ago, fresh_for):
    from email.utils import formatdate

    from dshctl.bundles.npm.cache import from_response

    now = 1_800_000_000.0
    headers = {"date": formatdate(now, usegmt=True),
               "last-modified": formatdate(now - changed_ago, usegmt=True)}
    entry = from_response("http://r/x", "a", {"versions": {}}, headers, now)
    assert entry.max_age == fresh_for
    assert entry.fresh(now + fresh_for - 1) and not entry.fresh(now + fresh_for + 1)
    explicit = from_response("http://r/x", "a", {}, {**headers, "cache-control": "max-age=5"}, now)
    assert explicit.max_age == 5  # a registry's own max-age always wins
    assert not from_response("http://r/x", "a", {}, {"cache-control": "no-cache"}, now).fresh(now)


def test_update_revalidates_and_sees_a_new_version(home, repos, npm_env):
    npm_env.add("cached-moving", "1.0.0")
    src = npm_bundle(repos, "dsh-cmove", {"cached-moving": "^1.0.0"})
    add(home, src.url)
    npm_env.add("cached-moving", "1.1.0")  # published while our copy is still fresh
    add(home, src.url, profile="other")  # a fresh packument is trusted for its max-age
    assert ("cached-moving", "1.0.0") in installed_packages(home / "profiles/other/node_modules/dsh-cmove")
    npm_env.requests.clear()
    outcome = Installer(home, "web", Options()).update([])  # update always revalidates
    assert "/cached-moving" in npm_env.requests and "/cached-moving" not in npm_env.not_modified
    assert outcome.changes[0].action == "updated"
    assert ("cached-moving", "1.1.0") in installed_packages(home / "profiles/web/node_modules/dsh-cmove")
    npm_env.requests.clear()
    add(home, src.url, profile="third")  # and the renewed cache entry now serves 1.1.0
    assert npm_env.requests == [] or all(r.startswith("/-/tarballs/") for r in npm_env.requests)
    assert ("cached-moving", "1.1.0") in installed_packages(home / "profiles/third/node_modules/dsh-cmove")


@pytest.mark.parametrize("damage", ["garbage", "truncated", "wrong-key", "no-versions"])
def test_a_damaged_cache_entry_is_fetched_again(home, repos, npm_env, damage):
    npm_env.add("leaf-damaged", "1.0.0")
    src = npm_bundle(repos, "dsh-damaged", {"leaf-damaged": "^1.0.0"})
    add(home, src.url)
    [entry] = cache_files(home)
    data = json.loads(entry.read_text())
    if damage == "garbage":
        entry.write_bytes(b"\x00\xff not json")
    elif damage == "truncated":
        entry.write_text(entry.read_text()[:40])
    elif damage == "wrong-key":
        entry.write_text(json.dumps({**data, "url": data["url"] + "-other"}))
    else:
        entry.write_text(json.dumps({**data, "body": {"name": "leaf-damaged", "versions": []}}))
    npm_env.requests.clear()
    add(home, src.url, profile="other")
    assert npm_env.requests == ["/leaf-damaged"] and npm_env.not_modified == []
    assert json.loads(entry.read_text())["body"]["versions"]  # rewritten whole
    assert ("leaf-damaged", "1.0.0") in \
        installed_packages(home / "profiles/other/node_modules/dsh-damaged")


def test_offline_resolves_from_the_cache_and_names_what_is_missing(home, repos, npm_env):
    src = npm_bundle(repos, "dsh-offc", DEPS)
    add(home, src.url)
    npm_env.max_age = 0
    npm_env.requests.clear()
    add(home, src.url, profile="other", offline=True)  # any age will do offline: no request
    assert npm_env.requests == []
    npm_env.add("leaf-never-cached", "1.0.0")
    more = npm_bundle(repos, "dsh-offmore", {"leaf-never-cached": "^1.0.0", "lib-b": "^2.0.0"})
    add(home, more.url, profile="x")  # the bundle's commit into the store …
    from dshctl.bundles.npm.cache import PackumentCache
    from dshctl.bundles.npm.registry import ACCEPT

    cache = PackumentCache(home / ".dshctl/store/npm/packuments")
    cache.path(npm_env.url + "leaf-never-cached", ACCEPT).unlink()  # … but not this packument
    npm_env.requests.clear()
    before = snapshot(home / "profiles/other")
    with pytest.raises(DshctlError) as err:
        add(home, more.url, profile="other", offline=True)
    assert err.value.message.startswith("leaf-never-cached@^1.0.0 needed by dsh-offmore")
    assert "offline" in err.value.message and "without --offline" in err.value.hint
    assert npm_env.requests == [] and snapshot(home / "profiles/other") == before


def test_prefer_offline_uses_a_stale_entry_and_prefer_online_revalidates(home, repos, npm_env,
                                                                         monkeypatch):
    npm_env.max_age = 0
    npm_env.add("leaf-prefer", "1.0.0")
    src = npm_bundle(repos, "dsh-prefer", {"leaf-prefer": "^1.0.0"})
    add(home, src.url)
    npm_env.requests.clear()
    monkeypatch.setenv("npm_config_prefer_offline", "true")
    add(home, src.url, profile="other")  # stale, but prefer-offline takes it as it is
    assert npm_env.requests == []
    monkeypatch.delenv("npm_config_prefer_offline")
    add(home, src.url, profile="third")  # stale without it: revalidated
    assert npm_env.requests == ["/leaf-prefer"] and npm_env.not_modified == ["/leaf-prefer"]
    npm_env.max_age = 300
    add(home, src.url, profile="fourth")  # the 304 stored it fresh for 300 s …
    assert npm_env.requests == ["/leaf-prefer", "/leaf-prefer"]
    npm_env.requests.clear()
    npm_env.not_modified.clear()
    add(home, src.url, profile="fifth")
    assert npm_env.requests == []  # … so this one is free
    (home / ".npmrc").write_text("prefer-online=true\n")
    add(home, src.url, profile="sixth")  # prefer-online revalidates even a fresh entry
    assert npm_env.requests == ["/leaf-prefer"] and npm_env.not_modified == ["/leaf-prefer"]


def _cli_imports(home, spec: str, profile: str) -> set[str]:
    env = {**os.environ, "DSH_HOME": str(home)}
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "dshctl", "plugin",
                           "--profile", profile, "add", spec], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return {line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines()
            if line.startswith("import time:") and "|" in line}


@pytest.mark.parametrize("max_age", [300, None])  # None: the heuristic reads Date/Last-Modified
def test_the_cli_fetches_with_http_client_not_httpx_and_imports_neither_when_all_is_cached(
        home, repos, npm_env, max_age):
    npm_env.max_age = max_age
    npm_env.add("leaf-imports", "1.0.0")
    src = npm_bundle(repos, "dsh-imports", {"leaf-imports": "^1.0.0"})
    cold = _cli_imports(home, src.url, "web")
    assert "http.client" in cold  # requests were made, with the standard library's client …
    assert not any(m.startswith(("httpx", "httpcore", "certifi", "pygments")) for m in cold)
    warm = _cli_imports(home, src.url, "other")
    assert not any(m.startswith(("httpx", "http.client", "dshctl.bundles.npm.http_pool"))
                   for m in warm)  # nothing needed the network


def test_a_tarball_fetched_during_resolution_fails_with_the_usual_message(home, repos, npm_env):
    """Tarballs start downloading as the resolver places their packages; a failure there is
    reported by the normal path, with the package and the bundle, and nothing is placed."""
    npm_env.add("tarball-gone", "1.0.0")
    npm_env.tarballs.pop("/-/tarballs/tarball-gone/tarball-gone-1.0.0.tgz")
    src = npm_bundle(repos, "dsh-tgone", {"tarball-gone": "^1.0.0", "lib-c": "^1.0.0"})
    with pytest.raises(DshctlError) as err:
        add(home, src.url)
    assert err.value.message.startswith("tarball-gone@1.0.0 needed by dsh-tgone: tarball ")
    assert "HTTP 404" in err.value.message
    assert not (home / "profiles/web").exists()
    stored = [json.loads(p.read_text())["name"] for p in home.glob(".dshctl/store/npm/trees/*.json")]
    assert "tarball-gone" not in stored


@given(st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(2200, 1, 1)))
def test_http_dates_read_as_the_standard_library_reads_them(when):
    from email.utils import format_datetime, formatdate, parsedate_to_datetime

    from dshctl.bundles.npm.cache import http_date

    stamp = when.replace(tzinfo=timezone.utc, microsecond=0).timestamp()
    fixdate = formatdate(stamp, usegmt=True)
    assert http_date(fixdate) == parsedate_to_datetime(fixdate).timestamp() == stamp
    rfc850 = when.strftime("%A, %d-%b-%y %H:%M:%S GMT")  # an obsolete form: the fallback
    assert http_date(rfc850) == parsedate_to_datetime(rfc850).timestamp()
    assert http_date(format_datetime(when.replace(tzinfo=timezone.utc))) == \
        parsedate_to_datetime(format_datetime(when.replace(tzinfo=timezone.utc))).timestamp()


@pytest.mark.parametrize("bad", ["", "yesterday", "Sun, 06 Nov 1994 25:61:99 GMT",
                                 "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, xx Nov 1994 08:49:37 GMT"])
def test_a_bad_http_date_is_none_not_an_error(bad):
    from dshctl.bundles.npm.cache import http_date

    assert http_date(bad) is None
