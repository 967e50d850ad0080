"""Test homes, test plugins and drivers for the host: in-process (asyncio) and as a real process."""
from __future__ import annotations

import asyncio
import functools
import io
import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DSHCTL = str(REPO / ".venv" / "bin" / "dshctl")
BUNDLE = "@t/base"

# Test plugins, written into the bundle's plugins/ directory. They record what happened in the
# `probe` service (in-process tests) and are observable through `dshctl status` (process tests).
PLUGINS = {
    "svc.py": '''
name = "svc"
VERSION = 1
schema = {"type": "object", "default": {}}

class Thing:
    version = VERSION

def apply(ctx, config):
    thing = Thing()
    thing.config = config
    ctx.provide(config.get("service", "thing"), thing)
    ctx.on("ping", lambda log: log.append(("v1", config.get("tag"))))
''',
    "boom.py": '''
import asyncio
name = "boom"
schema = {"type": "object", "default": {}}

async def apply(ctx, config):
    if config.get("sleep"):
        await asyncio.sleep(config["sleep"])
    if config.get("slow_dispose"):
        async def linger():
            await asyncio.sleep(config["slow_dispose"])
        ctx.effect(lambda: linger, "slow-dispose")
    if config.get("hang"):
        await asyncio.Event().wait()
    if config.get("fail"):
        raise RuntimeError("boom: " + str(config["fail"]))
    if config.get("fail_if_exists") and __import__("os").path.exists(config["fail_if_exists"]):
        raise RuntimeError("boom: the marker file exists")   # fails the rollback's restart too
    if config.get("bad_dispose"):
        def dispose():
            raise RuntimeError("disposer exploded")
        ctx.effect(lambda: dispose, "bad-dispose")
''',
    "helper.py": 'GREETING = "one"\n',
    "pkgplug/__init__.py": '''
from . import helper
name = "pkgplug"

def apply(ctx, config):
    ctx.provide("greeting", helper.GREETING)
''',
    "pkgplug/helper.py": 'GREETING = "one"\n',
}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp~")
    tmp.write_text(text)
    os.replace(tmp, path)  # editors save atomically; a watcher never sees half a file
    return path


def make_home(root: Path, rows: str, *, profile: str = "p", user: str | None = None,
              home_layer: str | None = None) -> Path:
    """A home with one profile whose single bundle ``@t/base`` inserts ``rows`` (YAML, indented as
    items of the insert list) and ships the test plugins."""
    home = root / "home"
    pdir = home / "profiles" / profile
    bundle = pdir / "node_modules" / "@t" / "base"
    write(pdir / "package.json", json.dumps({"name": f"dsh-profile-{profile}", "private": True,
                                             "dsh": {"profile": {"bundles": [BUNDLE]}}}))
    write(bundle / "package.json", json.dumps({"name": BUNDLE, "version": "1.0.0",
                                               "files": ["cordis.patch.yml", "plugins"],
                                               "dsh": {"bundle": {"patch": "cordis.patch.yml"}}}))
    write(bundle / "cordis.patch.yml", "- insert:\n" + rows)
    for rel, text in PLUGINS.items():
        write(bundle / "plugins" / rel, text.lstrip())
    if user is not None:
        write(pdir / "cordis.patch.yml", user)
    if home_layer is not None:
        write(home / "cordis.patch.yml", home_layer)
    return home


def bundle_dir(home: Path, profile: str = "p") -> Path:
    return home / "profiles" / profile / "node_modules" / "@t" / "base"


def user_file(home: Path, profile: str = "p") -> Path:
    return home / "profiles" / profile / "cordis.patch.yml"


def row_map(rows: list, prefix: str = "") -> dict:
    """``full id -> (name, state, config)`` of a status/snapshot row list (groups flattened)."""
    out = {}
    for row in rows:
        out[row["id"]] = (row["name"], row["state"], row.get("config") if not row.get("children") else None)
        out.update(row_map(row.get("children") or []))
    return out


def drift(doc: dict) -> list[str]:
    """``host.drift`` without the line about dshctl's own files changing: other people edit the shared
    source tree while these tests run, and the host (rightly) notices."""
    return [line for line in doc["host"]["drift"] if "dshctl's own code" not in line]


# Deadlines for conditions the tests wait for. They are generous on purpose: CI runs the whole suite on
# a loaded 2-core machine, and a wait only takes long when the machine is slow (or the test fails).
WAIT_S = 30.0


# ---- in-process host -------------------------------------------------------------------------------
def run_async(timeout: float = 4 * WAIT_S):
    def deco(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            return asyncio.run(asyncio.wait_for(fn(*args, **kwargs), timeout=timeout))
        return wrapper
    return deco


class InProcess:
    """``async with InProcess(home) as host`` boots and serves a Host in this event loop."""

    def __init__(self, home: Path, profile: str = "p", **options):
        from dshctl.host.hostlog import HostLog
        from dshctl.host.runner import Host, HostOptions
        self.stream = io.StringIO()
        self.log = HostLog("json", stream=self.stream)
        options.setdefault("apply_timeout", 2.0)
        self.host = Host(HostOptions(home=home, profile=profile, **options), self.log)

    async def __aenter__(self):
        self.handler = self.log.attach_logging()
        await self.host.boot()
        await self.host.serve()
        return self.host

    async def __aexit__(self, *exc):
        await self.host.shutdown()
        self.log.detach_logging(self.handler)

    def events(self, kind: str | None = None) -> list[dict]:
        lines = [json.loads(x) for x in self.stream.getvalue().splitlines() if x.strip()]
        return [e for e in lines if kind is None or e["event"] == kind]


async def until(predicate, timeout: float = WAIT_S, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


# ---- real process --------------------------------------------------------------------------------
class HostProcess:
    """``dshctl host run`` as a subprocess with JSON logs, read on a thread."""

    def __init__(self, home: Path, profile: str = "p", *extra: str):
        self.home, self.profile = home, profile
        self.proc = subprocess.Popen(
            [DSHCTL, "--home", str(home), "host", "run", "--profile", profile, "--log-format", "json",
             "--apply-timeout", "1", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue = queue.Queue()
        self.seen: list[dict] = []
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self):
        try:
            for line in self.proc.stdout:
                try:
                    self.lines.put(json.loads(line))
                except ValueError:
                    self.lines.put({"event": "raw", "message": line})
        except ValueError:
            pass  # a test closed the pipe on purpose

    def wait_for(self, event: str, timeout: float = WAIT_S, match=lambda e: True) -> dict:
        for seen in self.seen:
            if seen["event"] == event and match(seen) and not seen.get("_used"):
                seen["_used"] = True
                return seen
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                item = self.lines.get(timeout=0.05)
            except queue.Empty:
                if self.proc.poll() is not None and self.lines.empty():
                    raise AssertionError(f"host exited ({self.proc.returncode}): {self.proc.stderr.read()}")
                continue
            self.seen.append(item)
            if item["event"] == event and match(item):
                item["_used"] = True
                return item
        raise AssertionError(f"no {event} within {timeout}s; saw {[e['event'] for e in self.seen]}")

    def cli(self, *args: str, timeout: float = WAIT_S) -> subprocess.CompletedProcess:
        return subprocess.run([DSHCTL, "--home", str(self.home), *args, "--profile", self.profile],
                              capture_output=True, text=True, timeout=timeout)

    def status(self) -> dict:
        result = self.cli("status", "--format", "json")
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    def reload(self) -> tuple[int, dict]:
        result = self.cli("reload", "--format", "json")
        return result.returncode, json.loads(result.stdout)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(WAIT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def __enter__(self):
        try:
            self.wait_for("host/ready", timeout=2 * WAIT_S)
        except BaseException:
            self.stop()  # never leave a host behind
            raise
        return self

    def __exit__(self, *exc):
        self.stop()


def eventually(probe, expected=True, timeout: float = WAIT_S, what: str = "condition"):
    """Poll ``probe()`` until it returns ``expected`` (or is truthy when ``expected`` is True); its
    last value otherwise, in the assertion message."""
    deadline = time.monotonic() + timeout
    value = None
    while time.monotonic() < deadline:
        value = probe()
        if (value if expected is True else value == expected):
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}; last: {value!r}")


def http_get(url: str, timeout: float = WAIT_S) -> tuple[int, bytes]:
    import urllib.error
    import urllib.request
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


PY = sys.executable
