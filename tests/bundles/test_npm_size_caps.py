"""Download and packument size caps (issue 28, finding 5): a huge tarball or packument is refused
at the cap while it streams (to disk, for a tarball), never held whole in memory."""
from __future__ import annotations

import os
import subprocess
import threading

import pytest

from tests.host.helpers import DSHCTL

from .conftest import npm_bundle
from .npm_registry import Behaviour

MB = 1024 * 1024


def dshctl(*args):
    """(exit code, stderr, peak RSS in MB of the dshctl process itself: its VmHWM, polled while it
    runs; wait4's ru_maxrss would also count the git processes it spawns)."""
    proc = subprocess.Popen([DSHCTL, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    peak = [0]
    done = threading.Event()

    def poll():
        while not done.is_set():
            try:
                for line in open(f"/proc/{proc.pid}/status"):
                    if line.startswith("VmHWM:"):
                        peak[0] = max(peak[0], int(line.split()[1]) // 1024)
            except (OSError, ValueError):
                pass
            done.wait(0.01)
    watcher = threading.Thread(target=poll, daemon=True)
    watcher.start()
    _out, err = proc.communicate(timeout=120)
    done.set()
    watcher.join()
    return proc.returncode, err, peak[0]


@pytest.mark.parametrize("no_length", [False, True])
def test_a_tarball_over_the_package_cap_is_refused_while_it_streams(home, repos, npm_env,
                                                                     no_length):
    npm_env.add("huge-tar", "1.0.0")
    npm_env.behaviour["huge-tar"] = Behaviour(huge=150 * MB, no_length=no_length,
                                                 only="tarball")
    src = npm_bundle(repos, "dsh-hugetar", {"huge-tar": "1.0.0"})
    code, err, peak = dshctl("plugin", "add", src.url, "--max-package-mb", "20")
    assert code == 1, err
    assert "huge-tar@1.0.0" in err and "20 MB" in err and "--max-package-mb" in err, err
    assert npm_env.url in err or "127.0.0.1" in err
    assert peak < 120, f"peak RSS {peak} MB while refusing a 150 MB tarball"
    assert not list((home / ".dshctl/store/npm").glob("tmp/*/*")), "scratch left behind"
    assert not (home / "profiles/web/node_modules/dsh-hugetar").exists()


def test_a_packument_over_its_cap_is_refused_while_it_streams(home, repos, npm_env):
    npm_env.add("huge-doc", "1.0.0")
    npm_env.behaviour["huge-doc"] = Behaviour(huge=100 * MB, no_length=True)
    src = npm_bundle(repos, "dsh-hugedoc", {"huge-doc": "1.0.0"})
    code, err, peak = dshctl("plugin", "add", src.url)
    assert code == 1, err
    assert "huge-doc" in err and "packument" in err and "64 MB" in err, err
    assert peak < 160, f"peak RSS {peak} MB while refusing a 100 MB packument"


def test_a_tarball_under_the_caps_installs_from_a_file_not_memory(home, repos, npm_env):
    """The ordinary path still works once downloads go to disk (early and late)."""
    big = os.urandom(3 * MB).hex()  # 6 MB of incompressible text
    npm_env.add("big-ok", "1.0.0", files={"blob.txt": big})
    src = npm_bundle(repos, "dsh-bigok", {"big-ok": "1.0.0"})
    code, err, _peak = dshctl("plugin", "add", src.url)
    assert code == 0, err
    placed = home / "profiles/web/node_modules/dsh-bigok/node_modules/big-ok/blob.txt"
    assert placed.read_text() == big
    assert len(list((home / ".dshctl/store/npm/tarballs").glob("*.tgz"))) == 1


def test_the_packument_cap_is_a_flag(home, repos, npm_env):
    npm_env.add("small-doc", "1.0.0", extra={"description": "d" * 5000})
    src = npm_bundle(repos, "dsh-smalldoc", {"small-doc": "1.0.0"})
    code, err, _ = dshctl("plugin", "add", src.url, "--max-packument-mb", "0.001")
    assert code == 1 and "small-doc" in err and "--max-packument-mb" in err, err
    assert "raise the limit" in err  # the hint matches the refusal
    code, err, _ = dshctl("plugin", "add", src.url, "--max-packument-mb", "1")
    assert code == 0, err
