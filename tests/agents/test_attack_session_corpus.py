"""The damaged-session corpus (issue 28): truncation at every offset, bit flips at random offsets,
kill -9 in the middle of commits. Reading a damaged log either yields a valid prefix or refuses it
with CorruptLog — never another exception, never a hang — and leaves no descriptor behind."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dshctl.agents.session import reader
from dshctl.agents.session.store import SessionStore
from tests.agents.session_helpers import write_turn
from tests.leaks import Counts


def _build(root, compression):
    store = SessionStore(root / "home", compression=compression)
    log = store.create(cwd=str(root))
    for turn in (1, 2, 3):
        write_turn(log, turn, f"prompt {turn}", end=turn < 3)
        log.commit()
    log.close()
    return store, log.id, log.path, log.path.read_bytes()


def _read_or_refuse(store, sid, path, data: bytes) -> str:
    path.write_bytes(data)
    try:
        scan = reader.scan_file(path)
    except reader.CorruptLog:
        return "refused"
    assert [e["seq"] for e in scan.events] == list(range(len(scan.events)))
    try:
        store.read(sid)
    except reader.CorruptLog:
        return "refused"
    except Exception as exc:  # a header flip may name another session: that is a CorruptLog too
        raise AssertionError(f"{type(exc).__name__}: {exc}") from exc
    return "read"


@pytest.mark.parametrize("compression", ["zstd", "none"])
def test_truncation_at_every_offset(tmp_path, compression):
    store, sid, path, data = _build(tmp_path, compression)
    before = Counts.now()
    seen = {}
    for cut in range(len(data) - 1, 0, -max(1, len(data) // 1500)):
        seen[cut] = _read_or_refuse(store, sid, path, data[:cut])
    assert "read" in seen.values()
    after = Counts.now()
    before.assert_flat(after)


@pytest.mark.parametrize("compression", ["zstd", "none"])
def test_bit_flips_at_random_offsets(tmp_path, compression):
    store, sid, path, data = _build(tmp_path, compression)
    before = Counts.now()

    @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.integers(0, len(data) - 1), st.integers(0, 7))
    def flip(offset, bit):
        damaged = bytearray(data)
        damaged[offset] ^= 1 << bit
        _read_or_refuse(store, sid, path, bytes(damaged))
    flip()
    path.write_bytes(data)
    store.open(sid).close()  # the undamaged log still opens
    before.assert_flat(Counts.now())


WRITER = r"""
import sys
from dshctl.agents.session.store import SessionStore
sys.path.insert(0, sys.argv[3])
from tests.agents.session_helpers import write_turn
store = SessionStore(sys.argv[1], compression=sys.argv[2])
log = store.create(cwd=sys.argv[1])
print(log.id, flush=True)
turn = 0
while True:
    turn += 1
    write_turn(log, turn, "p" * 2000, deltas=50)
    log.commit()
"""


@pytest.mark.parametrize("compression", ["zstd", "none"])
def test_kill_9_mid_commit_always_reopens(tmp_path, compression):
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    before = Counts.now()
    for i in range(8):
        home = tmp_path / f"h{i}"
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(home), compression, repo],
                                stdout=subprocess.PIPE, text=True)
        sid = proc.stdout.readline().strip()
        time.sleep(0.05 + 0.03 * i)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        proc.stdout.close()
        store = SessionStore(home, compression=compression)
        log = store.open(sid)                 # repaired: torn tail cut, open turn closed
        assert log.events[-1]["type"] == "session/end-seed"
        log.close()
        again = store.read(sid)
        assert [e["seq"] for e in again.events] == list(range(len(again.events)))
    before.assert_flat(Counts.now())
