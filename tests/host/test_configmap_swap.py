"""A profile layer mounted from a Kubernetes ConfigMap: the kubelet writes a new timestamped directory,
points ``..data_tmp`` at it and renames that over ``..data``; ``cordis.patch.yml`` is a symlink through
``..data``. Nothing happens to the watched path itself, yet a running host must apply the new file."""
from __future__ import annotations

import os
import shutil

from .helpers import HostProcess, make_home, row_map, write

ROWS = """\
    - id: a
      name: ./plugins/svc.py
      config: {service: alpha}
"""


def kubelet_update(directory, name: str, text: str) -> None:
    """The kubelet's atomic update of a ConfigMap volume, step by step."""
    write(directory / name / "cordis.patch.yml", text)
    os.symlink(name, directory / "..data_tmp")
    os.rename(directory / "..data_tmp", directory / "..data")


def test_the_kubelets_data_symlink_swap_is_applied_by_a_running_host(tmp_path):
    home = make_home(tmp_path, ROWS)
    pdir = home / "profiles" / "p"
    write(pdir / "..2026_12_02_01" / "cordis.patch.yml", "- id: a\n  config: {service: alpha, tag: one}\n")
    os.symlink("..2026_12_02_01", pdir / "..data")
    os.symlink("..data/cordis.patch.yml", pdir / "cordis.patch.yml")
    with HostProcess(home) as host:
        assert row_map(host.status()["rows"])["a"][2]["tag"] == "one"
        kubelet_update(pdir, "..2026_12_02_02", "- id: a\n  config: {service: alpha, tag: two}\n")
        shutil.rmtree(pdir / "..2026_12_02_01")   # the kubelet removes the old generation
        host.wait_for("reload/applied")
        assert row_map(host.status()["rows"])["a"][2]["tag"] == "two"
