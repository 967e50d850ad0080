"""Faults with a real etcd: stopped under running hosts, and away when a host boots."""
from __future__ import annotations

from tests.host.helpers import HostProcess, row_map, write

from .conftest import home, status, wait_until
from .test_fleet_hosts import all_on, fleet_args, publish


def revisions_applied(host: HostProcess) -> list[int]:
    """Every revision the host started applying, from all of its log lines so far."""
    host.wait_for("reload/applied")
    while not host.lines.empty():
        host.seen.append(host.lines.get())
    return [e["revision"] for e in host.seen if e["event"] == "fleet/revision"]


def test_etcd_stopped_hosts_keep_serving_and_catch_up_once_without_duplicates(tmp_path, own_etcd, prefix):
    pub = home(tmp_path, "pub")
    publish(pub, own_etcd.url, prefix)
    with HostProcess(home(tmp_path, "h"), "p", *fleet_args(own_etcd.url, prefix, "h")) as host:
        wait_until(all_on(own_etcd.url, prefix, 1, 1), what="revision 1")
        own_etcd.stop()
        host.wait_for("fleet/offline")
        assert row_map(host.status()["rows"])["a"][1] == "ACTIVE"   # the tree keeps running
        own_etcd.start()
        host.wait_for("fleet/online")
        write(pub / "profiles" / "p" / "cordis.patch.yml", "- id: c\n  config: {tag: two}\n")
        publish(pub, own_etcd.url, prefix)
        wait_until(all_on(own_etcd.url, prefix, 2, 1), what="revision 2 after the outage")
        assert revisions_applied(host) == [2]
        assert row_map(host.status()["rows"])["c"][2] == {"tag": "two"}


def test_a_host_booting_while_etcd_is_away_runs_its_saved_revision_then_the_latest(tmp_path, own_etcd, prefix):
    pub = home(tmp_path, "pub", user="- id: c\n  config: {tag: one}\n")
    publish(pub, own_etcd.url, prefix)
    h = home(tmp_path, "h")
    with HostProcess(h, "p", *fleet_args(own_etcd.url, prefix, "h")):
        wait_until(all_on(own_etcd.url, prefix, 1, 1), what="revision 1")
    own_etcd.stop()
    with HostProcess(h, "p", *fleet_args(own_etcd.url, prefix, "h")) as host:
        offline = host.wait_for("fleet/offline")
        assert "revision 1, the last this host applied" in offline["message"]
        assert row_map(host.status()["rows"])["c"][2] == {"tag": "one"}
        own_etcd.start()
        write(pub / "profiles" / "p" / "cordis.patch.yml", "- id: c\n  config: {tag: two}\n")
        publish(pub, own_etcd.url, prefix)
        code, doc = wait_until(all_on(own_etcd.url, prefix, 2, 1), what="revision 2")
        assert code == 0 and doc["hosts"][0]["running_revision"] == 2
        assert revisions_applied(host) == [2]


def test_a_host_with_no_etcd_and_nothing_saved_says_so_in_one_line(tmp_path, own_etcd, prefix):
    own_etcd.stop()
    from .conftest import dshctl
    result = dshctl("host", "run", *fleet_args(own_etcd.url, prefix, "h"), "--for", "1",
                    home=home(tmp_path, "h"))
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("dshctl: error:")]
    assert len(errors) == 1 and "no fleet revision to run" in errors[0], result.stderr
    assert "Traceback" not in result.stderr


def test_one_member_of_three_lost_publishing_and_watching_go_on(tmp_path, cluster, prefix):
    urls = ",".join(m.url for m in cluster)
    pub = home(tmp_path, "pub")
    publish(pub, urls, prefix)
    with HostProcess(home(tmp_path, "h"), "p", *fleet_args(urls, prefix, "h")) as host:
        wait_until(all_on(urls, prefix, 1, 1), what="revision 1")
        cluster[0].stop()   # the member both the host and the publisher talked to first
        write(pub / "profiles" / "p" / "cordis.patch.yml", "- id: c\n  config: {tag: two}\n")
        publish(pub, urls, prefix)
        code, _ = wait_until(all_on(urls, prefix, 2, 1), what="revision 2 with a member down")
        assert code == 0
        assert revisions_applied(host) == [2]
        assert row_map(host.status()["rows"])["c"][2] == {"tag": "two"}


def test_a_host_whose_lease_was_lost_grants_a_new_one_and_reports_again(tmp_path, etcd, prefix):
    import asyncio

    from dshctl.fleet.etcd import Etcd
    from dshctl.fleet.keys import Keys

    pub = home(tmp_path, "pub")
    publish(pub, etcd.url, prefix)
    with HostProcess(home(tmp_path, "h"), "p", *fleet_args(etcd.url, prefix, "h")):
        wait_until(all_on(etcd.url, prefix, 1, 1), what="revision 1")

        async def revoke() -> int:
            async with Etcd(etcd.url) as e:
                kv = await e.get(Keys(prefix).host("h"))
                await e.revoke(kv.lease)   # as if it expired while etcd could not hear the host
                return kv.lease
        old = asyncio.run(revoke())
        write(pub / "profiles" / "p" / "cordis.patch.yml", "- id: c\n  config: {tag: two}\n")
        publish(pub, etcd.url, prefix)
        code, doc = wait_until(all_on(etcd.url, prefix, 2, 1), what="the host reporting under a new lease")

        async def lease_now() -> int:
            async with Etcd(etcd.url) as e:
                return (await e.get(Keys(prefix).host("h"))).lease
        assert code == 0 and asyncio.run(lease_now()) not in (0, old)


def test_garbage_under_the_prefix_is_refused_in_one_line_and_the_host_keeps_its_tree(tmp_path, etcd, prefix):
    import asyncio

    from dshctl.fleet.etcd import Etcd
    from dshctl.fleet.keys import Keys

    from .conftest import dshctl

    pub = home(tmp_path, "pub")
    publish(pub, etcd.url, prefix)
    keys = Keys(prefix)

    async def put(*pairs):
        async with Etcd(etcd.url) as e:
            for key, value in pairs:
                await e.put(key, value)
    with HostProcess(home(tmp_path, "h"), "p", *fleet_args(etcd.url, prefix, "h")) as host:
        wait_until(all_on(etcd.url, prefix, 1, 1), what="revision 1")
        asyncio.run(put((keys.revision(2), '{"format": "dshctl-fleet-revision/1", "layers": [{}]}'),
                        (keys.head, "2")))
        code, doc = wait_until(all_on(etcd.url, prefix, 2, 1, "rejected"), what="revision 2 refused")
        assert code == 1 and doc["hosts"][0]["running_revision"] == 1
        assert "is not a dshctl fleet revision" in doc["hosts"][0]["errors"][0]["message"]
        assert row_map(host.status()["rows"])["a"][1] == "ACTIVE"
        asyncio.run(put((keys.head, "not a number")))
        result = dshctl("fleet", "status", "--etcd", etcd.url, "--prefix", prefix)
        assert result.returncode == 1 and result.stderr.startswith("dshctl: error: the fleet head holds")
        assert "Traceback" not in result.stderr and "internal error" not in result.stderr
