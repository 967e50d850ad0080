"""`dshctl fleet publish` / `rollback` against a real etcd: refusals write nothing, history grows,
a racing publisher is refused, and a revision composes on another home to the publisher's rows."""
from __future__ import annotations

import asyncio
import json

import pytest

from dshctl.fleet import publish as P
from dshctl.fleet.composer import FleetComposer
from dshctl.fleet.etcd import Etcd
from dshctl.fleet.keys import Keys
from dshctl.host.lastgood import rows_digest

from .conftest import dshctl, home


def head_of(url: str, prefix: str) -> int:
    async def go():
        async with Etcd(url) as etcd:
            return (await P.read_head(etcd, Keys(prefix))).number
    return asyncio.run(go())


def publish(h, url, prefix, *extra):
    return dshctl("fleet", "publish", "--etcd", url, "--prefix", prefix, *extra, home=h)


@pytest.mark.parametrize("user, where, words", [
    ("- id: a\n  config: [unclosed\n", "cordis.patch.yml:", "failed to parse"),
    ("- id: nosuchrow\n  config: {x: 1}\n", "cordis.patch.yml:1:", "patch warning"),
])
def test_a_profile_that_does_not_compose_cleanly_is_refused_and_nothing_written(tmp_path, etcd, prefix,
                                                                                  user, where, words):
    h = home(tmp_path, "pub", user=user)
    result = publish(h, etcd.url, prefix)
    assert result.returncode == 1, result.stdout
    first = result.stderr.splitlines()[0]
    assert first.startswith("dshctl: error: ") and where in first and words in first, result.stderr
    assert "Traceback" not in result.stderr
    assert head_of(etcd.url, prefix) == 0


def test_publish_keeps_history_and_rollback_publishes_an_old_revision_again(tmp_path, etcd, prefix):
    h = home(tmp_path, "pub")
    assert publish(h, etcd.url, prefix).returncode == 0
    user = h / "profiles" / "p" / "cordis.patch.yml"
    user.write_text("- id: a\n  config: {service: beta}\n")
    result = publish(h, etcd.url, prefix, "-f", "json")
    assert result.returncode == 0, result.stderr
    second = json.loads(result.stdout)
    assert second["revision"] == 2
    result = dshctl("fleet", "rollback", "--etcd", etcd.url, "--prefix", prefix, "--to", "1", "-f", "json")
    assert result.returncode == 0, result.stderr
    third = json.loads(result.stdout)
    assert third["revision"] == 3 and third["rollback_of"] == 1

    async def docs():
        async with Etcd(etcd.url) as e:
            return [await P.load_revision(e, Keys(prefix), n) for n in (1, 2, 3)]
    one, two, three = asyncio.run(docs())
    assert one["digest"] == three["digest"] != two["digest"]
    assert [l["kind"] for l in two["layers"]] == ["bundle", "profile"]
    missing = dshctl("fleet", "rollback", "--etcd", etcd.url, "--prefix", prefix, "--to", "9")
    assert missing.returncode == 1 and "no revision 9" in missing.stderr and "latest is 3" in missing.stderr


def test_of_two_racing_publishers_one_wins_and_the_other_learns_which_revision_won(tmp_path, etcd, prefix):
    h = home(tmp_path, "pub")
    records, digest, dump = P.build(h, "p")

    async def race():
        async with Etcd(etcd.url) as e:
            keys = Keys(prefix)
            seen_by_both = await P.read_head(e, keys)
            first = await P.commit(e, keys, seen_by_both, {"layers": records, "digest": digest})
            with pytest.raises(P.PublishLost) as lost:
                await P.commit(e, keys, seen_by_both, {"layers": records, "digest": "other"})
            return first, str(lost.value), await P.read_head(e, keys)
    first, message, head = asyncio.run(race())
    assert first == 1 and head.number == 1
    assert "revision 1 was written first" in message


def test_a_revision_composes_on_another_home_to_the_rows_the_publisher_dumped(tmp_path, etcd, prefix):
    pub = home(tmp_path, "pub", user="- id: c\n  config: {tag: shared}\n")
    (pub / "cordis.patch.yml").write_text("- id: a\n  config: {service: from-home}\n")
    assert publish(pub, etcd.url, prefix).returncode == 0
    dumped = dshctl("profile", "dump", "-f", "json", home=pub)
    assert dumped.returncode == 0, dumped.stderr

    async def fetch():
        async with Etcd(etcd.url) as e:
            return await P.load_revision(e, Keys(prefix), 1)
    doc = asyncio.run(fetch())
    other = home(tmp_path, "host")          # its own user layers are not read on a fleet host
    (other / "cordis.patch.yml").write_text("- id: a\n  disabled: true\n")
    composer = FleetComposer(other, "p")
    composer.revision = doc
    composed = composer.boot()
    assert composed.digest == doc["digest"]
    rows = {r["id"]: r for r in json.loads(dumped.stdout)["rows"]}
    assert rows["a"]["config"]["service"] == "from-home" and rows["c"]["config"]["tag"] == "shared"
    assert {r["id"]: r.get("config") for r in composed.rows} == {k: v.get("config") for k, v in rows.items()}
    assert str(composed.rows[0].loc).startswith(str(other / "profiles" / "p" / "node_modules"))
