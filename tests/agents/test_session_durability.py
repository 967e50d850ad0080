"""Crash safety and interoperability of the session log.

* kill -9 of a real writer process mid-append never tears the log: every batch the writer reported
  durable is there, the last event is complete, and the log reopens;
* a cut at any byte reads as a prefix of the events and repairs to a valid log (fault injection);
* the reference Zstandard tool (the ``zstd`` CLI, the libzstd dsh's Node embeds) accepts our frames
  and checksums, and our reader reads logs whose frames it wrote.
"""
from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time

import pytest

from dshctl.agents.session import frames
from dshctl.agents.session.api import SessionStore
from dshctl.agents.session.records import batch_text, header_line

from tests.agents.session_helpers import write_turn

WRITER = r'''
import sys
from dshctl.agents.session.api import SessionStore
from tests.agents.session_helpers import write_turn
store = SessionStore(sys.argv[1], compression=sys.argv[2])
log = store.create(cwd="/w", session_id="crash")
turn = 0
while True:
    turn += 1
    write_turn(log, turn, "x" * 2000, deltas=40)     # big batches: a kill lands mid-write often
    log.commit()
    print(len(log.events), flush=True)
'''


def _zstd() -> str:
    path = shutil.which("zstd")
    if path is None:
        pytest.fail("the `zstd` command is not on PATH: the interoperability tests need the reference "
                    "Zstandard tool (Debian package `zstd`)")
    return path


@pytest.mark.parametrize("compression", ["zstd", "none"])
@pytest.mark.parametrize("after", [3, 11])
def test_kill_9_mid_append_never_tears_the_log(tmp_path, compression, after):
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), compression],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=str(__import__("pathlib").Path(__file__).resolve().parents[2]))
    durable = 0
    try:
        for _ in range(after):
            line = proc.stdout.readline()
            assert line, proc.stderr.read()
            durable = int(line)
        time.sleep(0.003 * after)                 # land somewhere inside a later append
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    store = SessionStore(tmp_path, compression=compression)
    seen = store.read("crash")
    assert len(seen.events) >= durable            # everything reported durable survived
    assert [e["seq"] for e in seen.events] == list(range(len(seen.events)))
    log = store.open("crash")                     # repair: torn tail cut, open turn closed
    assert log.events[-2]["type"] == "turn/end"
    log.close()
    again = store.read("crash")
    assert again.torn_bytes == 0 and again.closers == []


def _full_log(tmp_path, compression="zstd"):
    store = SessionStore(tmp_path, compression=compression)
    log = store.create(cwd="/w", session_id="cut")
    write_turn(log, 1, "one")
    log.commit()
    write_turn(log, 2, "two", deltas=6)
    log.commit()
    write_turn(log, 3, "three", end=False)
    log.close()
    return store, log


@pytest.mark.parametrize("compression", ["zstd", "none"])
def test_a_cut_at_any_byte_reads_as_a_prefix_and_repairs(tmp_path, compression):
    store, log = _full_log(tmp_path, compression)
    data = log.path.read_bytes()
    header_end = frames.scan_frames(data).frames[0][1] if compression == "zstd" else data.index(b"\n") + 1
    full = log.events
    tail = len(data) - 700                   # every byte of the last batches, a stride before them
    cuts = sorted(set(range(header_end, tail, 7)) | set(range(max(header_end, tail), len(data) + 1)))
    for n, cut in enumerate(cuts):
        log.path.write_bytes(data[:cut])
        seen = store.read("cut")
        assert seen.events == full[:len(seen.events)]
        if n % 40 == 0 or cut == len(data):
            repaired = store.open("cut")
            repaired.close()
            after = store.read("cut")
            assert after.torn_bytes == 0 and after.closers == []
            assert after.events[:len(seen.events)] == seen.events


def test_the_reference_zstd_tool_accepts_our_frames_and_checksums(tmp_path):
    zstd = _zstd()
    store, log = _full_log(tmp_path)
    check = subprocess.run([zstd, "-t", str(log.path)], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    decoded = subprocess.run([zstd, "-dc", str(log.path)], capture_output=True)
    assert decoded.returncode == 0
    assert decoded.stdout.decode() == store.raw_text("cut")
    listing = subprocess.run([zstd, "-lv", str(log.path)], capture_output=True, text=True).stdout
    assert "# Zstandard Frames: 4" in listing and "XXH64" in listing
    # the reference tool notices a flipped byte inside a complete frame, as our reader does
    data = bytearray(log.path.read_bytes())
    start, end = frames.scan_frames(bytes(data)).frames[1]
    data[end - 2] ^= 0x55
    log.path.write_bytes(bytes(data))
    assert subprocess.run([zstd, "-t", str(log.path)], capture_output=True).returncode != 0


def test_we_read_a_log_whose_frames_the_reference_tool_wrote(tmp_path):
    zstd = _zstd()
    store, log = _full_log(tmp_path)
    events = log.events
    header = (header_line(log.header) + "\n").encode()
    batches = [header, batch_text(events[:10], pack=True).encode(), batch_text(events[10:], pack=False).encode()]
    encoded = b"".join(subprocess.run([zstd, "--check", "-q", "-c", "-"], input=b, capture_output=True,
                                      check=True).stdout for b in batches)
    log.path.write_bytes(encoded)
    seen = store.read("cut")
    assert seen.header == log.header and seen.events == events
    assert [c["type"] for c in seen.closers][-1] == "turn/end"      # turn 3 was left open
    assert json.loads(store.raw_text("cut").splitlines()[0])["id"] == "cut"


def test_frames_compressed_in_many_threads_at_once_all_decode():
    """Sessions commit off the event loop (asyncio.to_thread), so several threads encode frames at the
    same time; a zstandard compressor is not thread-safe, and one shared by all of them made corrupt
    frames ("Data corruption detected" when a restarted host read the log back)."""
    import os
    import threading

    from dshctl.agents.session import frames

    payloads = [[os.urandom(64).hex().encode() * (1 + n % 40) for n in range(150)] for _ in range(8)]
    results: dict[int, list[bytes]] = {}
    start = threading.Barrier(len(payloads))

    def encode(k: int) -> None:
        start.wait()
        results[k] = [frames.compress_frame(p) for p in payloads[k]]

    threads = [threading.Thread(target=encode, args=(k,)) for k in range(len(payloads))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k, encoded in results.items():
        assert [frames.decompress_frame(f) for f in encoded] == payloads[k]
