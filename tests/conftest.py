"""Test-wide settings.

Hypothesis explores new random examples on every developer run. Under CI (``CI`` set, as `.ci/run`
is run) it is derandomized so a landing is decided by the same examples every time, has no per-example
deadline (CI machines are shared and loaded), and prints a reproduction blob for any failure.
"""
import os

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
