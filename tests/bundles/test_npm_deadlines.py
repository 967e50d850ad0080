"""A trickling registry (issue 28, finding 6): every request has a total deadline besides the read
timeout; past it, one clear line naming the registry and the package, and the locks are free."""
from __future__ import annotations

import time

import pytest

from .conftest import cli, npm_bundle
from .npm_registry import Behaviour


@pytest.mark.parametrize("only", ["packument", "tarball"])
def test_a_registry_trickling_one_byte_a_second_is_given_up_at_the_deadline(
        home, repos, npm_env, monkeypatch, capsys, only):
    monkeypatch.setenv("npm_config_fetch_deadline", "2000")  # ms, dshctl's own setting
    monkeypatch.setenv("npm_config_fetch_retries", "2")
    name = f"slow-{only}"
    npm_env.add(name, "1.0.0")
    npm_env.behaviour[name] = Behaviour(trickle=0.5, only=only)
    src = npm_bundle(repos, f"dsh-{name}", {name: "1.0.0"})
    start = time.monotonic()
    code, out, err = cli(capsys, "plugin", "add", src.url)
    took = time.monotonic() - start
    assert code == 1, err
    assert took < 10, f"took {took:.1f} s with a 2 s deadline"
    assert name in err and npm_env.url.rstrip("/") in err and "2 s" in err, err
    assert "fetch-deadline" in err and "Traceback" not in err
    assert "package.json" not in err  # the hint says the registry is failing, not the bundle
    npm_env.behaviour.clear()  # the locks were released: the next run goes through
    code, out, err = cli(capsys, "plugin", "add", src.url)
    assert code == 0, err


def test_the_deadline_covers_the_retries(home, repos, npm_env, monkeypatch, capsys):
    monkeypatch.setenv("npm_config_fetch_deadline", "1500")
    monkeypatch.setenv("npm_config_fetch_retries", "5")
    monkeypatch.setenv("npm_config_fetch_timeout", "600")  # each attempt stalls past its timeout
    npm_env.add("stalling", "1.0.0")
    npm_env.behaviour["stalling"] = Behaviour(stall=1.0, only="packument")
    src = npm_bundle(repos, "dsh-stalling", {"stalling": "1.0.0"})
    start = time.monotonic()
    code, out, err = cli(capsys, "plugin", "add", src.url)
    assert code == 1 and time.monotonic() - start < 6, err
    assert "stalling" in err and npm_env.url.rstrip("/") in err, err


def test_a_429_gets_a_rate_limit_hint_not_fix_the_package_json(home, repos, npm_env, capsys):
    """Issue 28, finding 9: the hint matches the status."""
    npm_env.add("limited", "1.0.0")
    npm_env.behaviour["limited"] = Behaviour(status=429)
    src = npm_bundle(repos, "dsh-limited", {"limited": "1.0.0"})
    code, out, err = cli(capsys, "plugin", "add", src.url)
    assert code == 1 and "HTTP 429" in err, err
    assert "rate-limiting" in err and "package.json" not in err, err
