"""The fleet's small algorithms, by property: the head's encoding, key ranges, file anchoring."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dshctl.errors import UsageError
from dshctl.fleet import revision as R
from dshctl.fleet.etcd import b64, prefix_end, split_endpoints
from dshctl.fleet.keys import Keys
from dshctl.fleet.publish import Head

ids = st.text(st.characters(min_codepoint=33, max_codepoint=126, blacklist_characters="/"), min_size=1,
              max_size=8)


@given(st.integers(1, 10**6), st.integers(0, 10**6), st.lists(ids, max_size=4, unique=True), ids,
       st.booleans())
def test_a_head_reads_back_as_written_and_wants_the_canary_revision_only_for_canaries(number, stable, canary,
                                                                                      host, halted):
    stable = min(stable, number)
    head = Head(number, 7, stable if canary or halted else number, tuple(canary),
                {"host": "x", "why": "y"} if halted else None)
    again = Head.parse(head.encode(), 7)
    assert again == head
    assert again.wanted(host) == (number if host in canary else head.stable)


keytext = st.text(st.characters(min_codepoint=32, max_codepoint=0x2FF), max_size=6)


@given(keytext.filter(bool), keytext)
def test_a_prefix_range_holds_exactly_the_keys_that_start_with_it(prefix, other):
    import base64
    low, high = prefix.encode(), base64.b64decode(prefix_end(prefix))
    for key in (prefix + other, other):
        assert (low <= key.encode() < high) == key.startswith(prefix)
    assert base64.b64decode(b64(prefix)) == low


@given(st.lists(st.text(st.characters(min_codepoint=97, max_codepoint=122), min_size=1, max_size=5),
                min_size=1, max_size=4), st.sampled_from(["profile", "home", "absolute"]))
def test_a_layer_file_lands_at_the_same_place_under_another_home(parts, where):
    pub, host = Path("/srv/pub"), Path("/srv/host")
    base = {"profile": pub / "profiles" / "p", "home": pub, "absolute": Path("/etc/x")}[where]
    path = base.joinpath(*parts)
    anchor, rel = R.anchored(path, pub, "p")
    assert anchor == where
    expected = {"profile": host / "profiles" / "q", "home": host, "absolute": Path("/etc/x")}[where]
    assert R.placed(anchor, rel, host, "q") == expected.joinpath(*parts)


@pytest.mark.parametrize("bad", ["", ",", "ftp://x", "http://", "http://h:99999", "http://h:1/path", "http://[x"])
def test_malformed_endpoints_are_usage_errors(bad):
    with pytest.raises(UsageError):
        split_endpoints(bad)


@pytest.mark.parametrize("bad", ["", "/", "dshctl", "/a\\nb"])
def test_malformed_prefixes_are_usage_errors(bad):
    with pytest.raises(UsageError):
        Keys(bad.replace("\\n", "\n"))
