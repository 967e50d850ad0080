"""Real `dshctl host run --fleet` processes on a real etcd: five hosts apply a revision, all roll a bad
one back and say which rows failed where, a host killed -9 expires, host-local patches stay on top."""
from __future__ import annotations

import contextlib
import os
import signal

from tests.host.helpers import HostProcess, row_map, write

from .conftest import dshctl, home, status, wait_until


def fleet_args(url, prefix, host_id, *extra):
    return ("--fleet", url, "--host-id", host_id, "--prefix", prefix, "--lease-ttl", "2", *extra)


def publish(h, url, prefix):
    result = dshctl("fleet", "publish", "--etcd", url, "--prefix", prefix, home=h)
    assert result.returncode == 0, result.stderr
    return int(result.stdout.split()[2])


def all_on(url, prefix, revision, count, verdict="applied"):
    def probe():
        code, doc = status(url, prefix)
        hosts = doc["hosts"]
        if len(hosts) == count and all(h["revision"] == revision and h["verdict"] == verdict for h in hosts):
            return code, doc
        return None
    return probe


def test_five_hosts_apply_roll_back_a_bad_revision_together_and_status_names_the_rows(tmp_path, etcd, prefix):
    pub = home(tmp_path, "pub")
    assert publish(pub, etcd.url, prefix) == 1
    with contextlib.ExitStack() as stack:
        hosts = [stack.enter_context(HostProcess(home(tmp_path, f"h{i}"), "p",
                                                 *fleet_args(etcd.url, prefix, f"h{i}")))
                 for i in range(5)]
        code, doc = wait_until(all_on(etcd.url, prefix, 1, 5), what="5 hosts on revision 1")
        assert code == 0 and doc["latest"] == 1 and doc["behind"] == []

        write(pub / "profiles" / "p" / "cordis.patch.yml", "- id: c\n  config: {fail: nope}\n")
        assert publish(pub, etcd.url, prefix) == 2
        code, doc = wait_until(all_on(etcd.url, prefix, 2, 5, "rolled-back"), what="5 rollbacks")
        assert code == 1 and sorted(doc["behind"]) == [f"h{i}" for i in range(5)]
        for h in doc["hosts"]:
            assert h["running_revision"] == 1
            [row] = h["failed_rows"]
            assert row["id"] == "c" and "boom: nope" in row["reason"]
            assert row["loc"].endswith("node_modules/@t/base/cordis.patch.yml:5:7")
            assert row["config_loc"].endswith("profiles/p/cordis.patch.yml:2:11")
        text = dshctl("fleet", "status", "--etcd", etcd.url, "--prefix", prefix)
        assert text.returncode == 1 and "rolled-back" in text.stdout and "cordis.patch.yml:5:7" in text.stdout
        assert row_map(hosts[0].status()["rows"])["c"][1] == "ACTIVE"   # the old tree still runs

        write(pub / "profiles" / "p" / "cordis.patch.yml", "- id: c\n  config: {tag: fixed}\n")
        assert publish(pub, etcd.url, prefix) == 3
        code, doc = wait_until(all_on(etcd.url, prefix, 3, 5), what="5 hosts on revision 3")
        assert code == 0
        assert row_map(hosts[4].status()["rows"])["c"][2] == {"tag": "fixed"}


def test_a_host_killed_9_expires_and_a_stopped_host_leaves(tmp_path, etcd, prefix):
    pub = home(tmp_path, "pub")
    publish(pub, etcd.url, prefix)
    killed = HostProcess(home(tmp_path, "k"), "p", *fleet_args(etcd.url, prefix, "killed"))
    stopped = HostProcess(home(tmp_path, "s"), "p", *fleet_args(etcd.url, prefix, "stopped"))
    with killed, stopped:
        wait_until(all_on(etcd.url, prefix, 1, 2), what="2 hosts up")
        os.kill(killed.proc.pid, signal.SIGKILL)
        killed.proc.wait()
        stopped.stop()
        _, doc = status(etcd.url, prefix)
        assert [h["host_id"] for h in doc["hosts"]] == ["killed"]   # the stopped one revoked its lease
        _, doc = wait_until(lambda: (lambda r: r if not r[1]["hosts"] else None)(status(etcd.url, prefix)),
                            timeout=15, what="the killed host's lease to expire")
        assert doc["expired"] == ["killed"]
        text = dshctl("fleet", "status", "--etcd", etcd.url, "--prefix", prefix).stdout
        assert "killed: gone (its lease expired)" in text


def test_host_local_patches_apply_over_every_revision(tmp_path, etcd, prefix):
    pub = home(tmp_path, "pub")
    publish(pub, etcd.url, prefix)
    h = home(tmp_path, "h")
    local = write(tmp_path / "local.yml", "- id: a\n  config: {service: alpha, tag: local}\n")
    with HostProcess(h, "p", *fleet_args(etcd.url, prefix, "h", "--patch", str(local))) as host:
        wait_until(all_on(etcd.url, prefix, 1, 1), what="revision 1")
        assert row_map(host.status()["rows"])["a"][2]["tag"] == "local"
        write(pub / "profiles" / "p" / "cordis.patch.yml", "- id: c\n  config: {tag: two}\n")
        publish(pub, etcd.url, prefix)
        wait_until(all_on(etcd.url, prefix, 2, 1), what="revision 2")
        rows = row_map(host.status()["rows"])
        assert rows["a"][2]["tag"] == "local" and rows["c"][2] == {"tag": "two"}
        write(local, "- id: a\n  config: {service: alpha, tag: edited}\n")   # watched: applied live
        wait_until(lambda: row_map(host.status()["rows"])["a"][2].get("tag") == "edited", what="local edit")


def test_a_host_local_patch_from_a_configmap_volume_follows_the_kubelets_swap(tmp_path, etcd, prefix):
    from tests.host.kubelet import ConfigMapVolume

    pub = home(tmp_path, "pub")
    publish(pub, etcd.url, prefix)
    # the ConfigMap's mount: ..data -> ..<generation>, files via ..data
    volume = ConfigMapVolume(tmp_path / "config", {"local.yml": "- id: a\n  config: {service: alpha, tag: one}\n"})
    args = fleet_args(etcd.url, prefix, "k", "--patch", str(volume.directory / "local.yml"))
    with HostProcess(home(tmp_path, "h"), "p", *args) as host:
        wait_until(all_on(etcd.url, prefix, 1, 1), what="revision 1")
        assert row_map(host.status()["rows"])["a"][2]["tag"] == "one"
        volume.update({"local.yml": "- id: a\n  config: {service: alpha, tag: two}\n"})
        wait_until(lambda: row_map(host.status()["rows"])["a"][2].get("tag") == "two", what="the swap applied")
