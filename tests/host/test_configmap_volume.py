"""A plain ``dshctl host run`` whose user layer comes from a Kubernetes ConfigMap volume (issue 31 item 5).

The kubelet's update (kubelet.py) never touches the visible file's own path: it renames ``..data`` in
the volume. The layer is either the kubelet layout in the profile directory itself, or a symlink from the
profile directory (or the home) into a volume mounted elsewhere, a directory the host does not otherwise
watch. In each case a running host applies a good swap, rolls a bad one back with the failing row's
``file:line:col``, applies the next good one, and ``/readyz`` follows; removing the old generation is no
reload at all.
"""
from __future__ import annotations

import os
import queue
import time

import pytest

from .helpers import WAIT_S, HostProcess, http_get, make_home, row_map, user_file
from .kubelet import ConfigMapVolume
from .test_reliability import ROWS

LAYER = "cordis.patch.yml"


def layer(config: str) -> dict:
    return {LAYER: f"- id: c\n  config: {config}\n"}


def mount(home, where: str) -> tuple[ConfigMapVolume, object]:
    """The volume and the layer path the host reads, for each way of putting a ConfigMap under a host."""
    first = layer("{tag: one}")
    if where == "in the profile directory":
        return ConfigMapVolume(user_file(home).parent, first), user_file(home)
    volume = ConfigMapVolume(home.parent / "config", first)        # mounted at /config, say
    path = user_file(home) if where == "profile layer -> volume" else home / LAYER
    os.symlink(volume.directory / LAYER, path)                   # baked into the image: ln -s /config/...
    return volume, path


def events_within(host: HostProcess, seconds: float) -> list[dict]:
    """Every log line the host writes in the next ``seconds``."""
    out, deadline = [], time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        try:
            out.append(host.lines.get(timeout=left))
        except queue.Empty:
            break
    host.seen.extend(out)
    return out


def verdict_after_swap(host: HostProcess, volume: ConfigMapVolume, files: dict, verdict: str) -> tuple:
    """Swap, wait for the reload's verdict; then remove the old generation and check that it is no
    reload (nothing logged about reloading or watching). Returns (seconds to the verdict, its event)."""
    swapped = time.time()
    old = volume.swap(files)
    event = host.wait_for("reload/" + verdict, timeout=WAIT_S)
    latency = event["ts"] - swapped
    volume.remove(old)
    after = [e for e in events_within(host, 1.5) if e["event"].startswith(("reload/", "row/"))]
    assert after == [], after
    return latency, event


def ready(host) -> tuple[int, bool]:
    import json
    code, body = http_get(host.url + "readyz")
    return code, json.loads(body)["ready"]


@pytest.mark.parametrize("where,polling", [("in the profile directory", False), ("profile layer -> volume", False),
                                           ("home layer -> volume", False), ("profile layer -> volume", True)])
def test_a_running_host_follows_the_kubelets_swaps_of_its_user_layer(tmp_path, monkeypatch, where, polling):
    if polling:   # WSL, Docker and network mounts: the host stats the exact paths instead
        monkeypatch.setenv("WATCHFILES_FORCE_POLLING", "1")
    home = make_home(tmp_path, ROWS)
    volume, path = mount(home, where)
    with HostProcess(home) as host:
        host.url = host.wait_for("host/http")["url"]
        assert row_map(host.status()["rows"])["c"][2] == {"tag": "one"}
        assert ready(host) == (200, True)

        latency, _ = verdict_after_swap(host, volume, layer("{tag: two}"), "applied")
        assert row_map(host.status()["rows"])["c"][2] == {"tag": "two"}
        assert ready(host) == (200, True)

        verdict_after_swap(host, volume, layer("{fail: on purpose}"), "rolled-back")
        failed = host.wait_for("row/failed", match=lambda e: e["message"].startswith("c "))
        assert f"config set at {path}:2:11" in failed["message"] and "boom: on purpose" in failed["message"]
        assert row_map(host.status()["rows"])["c"][2] == {"tag": "two"}    # the last good tree serves
        assert ready(host) == (503, False)

        verdict_after_swap(host, volume, layer("{tag: three}"), "applied")
        assert row_map(host.status()["rows"])["c"][2] == {"tag": "three"}
        assert ready(host) == (200, True)
        print(f"{where}{' (polling)' if polling else ''}: swap -> reload/applied in {latency * 1000:.0f} ms")
        assert latency < WAIT_S
