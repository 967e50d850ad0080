"""Revisions that fail on one host only, and staged rollout with `--canary N`, on real hosts and etcd."""
from __future__ import annotations

import contextlib

from tests.host.helpers import HostProcess, write

from .conftest import dshctl, home, status, wait_until
from .test_fleet_hosts import all_on, fleet_args, publish

EXTRA = "- insert:\n    - id: extra\n      name: ./plugins/extra.py\n"
PLUGIN = 'name = "extra"\n\ndef apply(ctx, config):\n    pass\n'


def hosts_where_h1_lacks_the_plugin(tmp_path, etcd, prefix, stack):
    out = []
    for i in range(3):
        h = home(tmp_path, f"h{i}")
        if i != 1:
            write(h / "profiles" / "p" / "plugins" / "extra.py", PLUGIN)
        out.append(stack.enter_context(HostProcess(h, "p", *fleet_args(etcd.url, prefix, f"h{i}"))))
    return out


def reports(url, prefix):
    return {h["host_id"]: h for h in status(url, prefix)[1]["hosts"]}


def test_a_revision_failing_on_one_host_only_is_refused_there_and_applied_elsewhere(tmp_path, etcd, prefix):
    pub = home(tmp_path, "pub")
    write(pub / "profiles" / "p" / "plugins" / "extra.py", PLUGIN)
    publish(pub, etcd.url, prefix)
    with contextlib.ExitStack() as stack:
        hosts_where_h1_lacks_the_plugin(tmp_path, etcd, prefix, stack)
        wait_until(all_on(etcd.url, prefix, 1, 3), what="revision 1 everywhere")
        write(pub / "profiles" / "p" / "cordis.patch.yml", EXTRA)
        publish(pub, etcd.url, prefix)
        got = wait_until(lambda: (lambda r: r if all(h["revision"] == 2 for h in r.values()) and len(r) == 3
                                  else None)(reports(etcd.url, prefix)), what="every host tried revision 2")
        assert got["h0"]["verdict"] == got["h2"]["verdict"] == "applied"
        bad = got["h1"]
        assert bad["verdict"] in ("rejected", "rolled-back") and bad["running_revision"] == 1
        said = " ".join(str(e.get("loc")) + " " + e["message"] for e in bad["errors"])
        assert "extra.py" in said and "profiles/p/cordis.patch.yml:3:" in said
        code, doc = status(etcd.url, prefix)
        assert code == 1 and doc["behind"] == ["h1"]


def test_canary_failure_stops_the_rollout_at_the_canaries_and_success_rolls_out(tmp_path, etcd, prefix):
    pub = home(tmp_path, "pub")
    write(pub / "profiles" / "p" / "plugins" / "extra.py", PLUGIN)
    publish(pub, etcd.url, prefix)
    with contextlib.ExitStack() as stack:
        hosts_where_h1_lacks_the_plugin(tmp_path, etcd, prefix, stack)
        wait_until(all_on(etcd.url, prefix, 1, 3), what="revision 1 everywhere")
        write(pub / "profiles" / "p" / "cordis.patch.yml", EXTRA)
        result = dshctl("fleet", "publish", "--etcd", etcd.url, "--prefix", prefix, "--canary", "2",
                        "--canary-wait", "20", home=pub)
        assert result.returncode == 1, result.stdout
        [line] = [x for x in result.stderr.splitlines() if x.startswith("dshctl: error:")]
        assert "rollout of revision 2 stopped at the canaries: canary h1" in line and "extra.py" in line
        assert "every host stays on revision 1" in line
        got = wait_until(lambda: (lambda r: r if r["h0"]["revision"] == 1 else None)(reports(etcd.url, prefix)),
                         what="canary h0 back on revision 1")
        assert got["h0"]["running_revision"] == 1 and got["h2"]["revision"] == 1   # h2 never tried 2
        code, doc = status(etcd.url, prefix)
        assert code == 1 and doc["rollout"]["halted"]["host"] == "h1"
        assert "halted" in dshctl("fleet", "status", "--etcd", etcd.url, "--prefix", prefix).stdout

        write(pub / "profiles" / "p" / "cordis.patch.yml", "- id: c\n  config: {tag: three}\n")
        result = dshctl("fleet", "publish", "--etcd", etcd.url, "--prefix", prefix, "--canary", "2",
                        "--canary-wait", "20", home=pub)
        assert result.returncode == 0, result.stderr
        assert "after canaries h0, h1 applied it" in result.stdout
        code, doc = wait_until(all_on(etcd.url, prefix, 3, 3), what="revision 3 everywhere")
        assert code == 0 and doc["rollout"] is None
