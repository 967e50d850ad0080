"""Test-wide settings.

Hypothesis explores new random examples on every developer run. Under CI (``CI`` set, as `.ci/run`
is run) it is derandomized so a landing is decided by the same examples every time, has no per-example
deadline (CI machines are shared and loaded), and prints a reproduction blob for any failure.
"""
import os

_ORIGINAL_XDG_CACHE_HOME = os.environ.get("XDG_CACHE_HOME")  # before the scratch cache

from hypothesis import HealthCheck, settings

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
if os.environ.get("CI"):
    settings.load_profile("ci")


# --- the demo home is input, never scratch space ------------------------------------------------

import hashlib  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

EXAMPLE_HOME = Path(__file__).resolve().parents[1] / "examples" / "home"


def _tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if ".dshctl" in path.parts or "__pycache__" in path.parts or not path.is_file():
            continue
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


@pytest.fixture(scope="session", autouse=True)
def example_home_is_left_untouched():
    """Tests copy examples/home before changing anything; a test that edits it in place fails the run."""
    before = _tree_digest(EXAMPLE_HOME)
    yield
    assert _tree_digest(EXAMPLE_HOME) == before, "a test modified examples/home; copy it to tmp_path first"


# --- js-yaml 4.2.0 under Node, for the differential tests -----------------------------------------

import json  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402

JS_YAML_VERSION = "4.2.0"  # the js-yaml 4 release dsh's lockfile pins (dsh-config.md §3)


def _cache_dir() -> Path:
    # The cache root as it was before the scratch cache below replaced it: js-yaml is installed once
    # per machine, not once per run.
    base = _ORIGINAL_XDG_CACHE_HOME or str(Path.home() / ".cache")
    return Path(base) / "dshctl-test-node"


def _installed_version(prefix: Path) -> str | None:
    manifest = prefix / "node_modules" / "js-yaml" / "package.json"
    try:
        return json.loads(manifest.read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None


@pytest.fixture(scope="session")
def js_yaml_prefix() -> Path:
    """A directory whose node_modules holds dsh's js-yaml 4 release (installed once, then reused)."""
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            pytest.fail(f"`{tool}` is not on PATH: the Node differential test needs Node 20+ and npm "
                        "(CI machines have them); install Node.js to run tests/test_patching_node.py")
    prefix = _cache_dir()
    if _installed_version(prefix) == JS_YAML_VERSION:
        return prefix
    prefix.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(["npm", "install", "--no-save", "--no-audit", "--no-fund", "--prefix",
                           str(prefix), f"js-yaml@{JS_YAML_VERSION}"], capture_output=True, text=True,
                          timeout=300)
    if proc.returncode != 0 or _installed_version(prefix) != JS_YAML_VERSION:
        pytest.fail(f"`npm install js-yaml@{JS_YAML_VERSION}` into {prefix} failed (exit "
                    f"{proc.returncode}); the Node differential test needs the npm registry.\n"
                    f"{proc.stderr[-2000:]}")
    return prefix




@pytest.fixture(scope="session")
def dump_oracle(js_yaml_prefix):
    """tests/node/dump_server.mjs: js-yaml's dump and load with dsh's schemas and options."""
    from node_oracle import NodeOracle

    oracle = NodeOracle(js_yaml_prefix, "dump_server.mjs")
    yield oracle
    oracle.close()

# --- the default home is a scratch one, never the developer's ~/.dsh ---------------------------------

@pytest.fixture(scope="session", autouse=True)
def scratch_default_home(tmp_path_factory):
    """A test that names no home (a command without --home, the llm row's anonymous user id) writes
    here, not into the developer's ~/.dsh or $DSH_HOME; tests that need a home of their own set it."""
    old = os.environ.get("DSH_HOME")
    os.environ["DSH_HOME"] = str(tmp_path_factory.mktemp("default-home"))
    yield
    if old is None:
        os.environ.pop("DSH_HOME", None)
    else:
        os.environ["DSH_HOME"] = old


# --- dshctl's caches go to a scratch directory, never the developer's ~/.cache -------------------

@pytest.fixture(scope="session", autouse=True)
def scratch_cache_home(tmp_path_factory):
    """One cache root for the whole run (subprocesses inherit it), so tests also exercise warm caches."""
    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    yield
    if old is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = old
