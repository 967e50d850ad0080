"""Damaged sessions reported, not trusted (issue 28, finding 9): a zstd frame without the content
checksum dsh writes, and a plain ``.jsonl`` line that stays JSON but no longer validates."""
from __future__ import annotations

import pytest
import zstandard

from dshctl.agents.session import reader
from dshctl.agents.session.store import SessionStore
from tests.agents.session_helpers import write_turn


def _session(tmp_path, compression, *, last_ended=True):
    store = SessionStore(tmp_path / "home", compression=compression)
    log = store.create(cwd=str(tmp_path))
    write_turn(log, 1, "first")
    log.commit()
    write_turn(log, 2, "second", end=last_ended)  # not ended: a host killed mid-turn
    log.close()
    return store, log.id, log.path


def test_a_frame_without_its_checksum_is_refused(tmp_path):
    store, sid, path = _session(tmp_path, "zstd")
    buf = path.read_bytes()
    scan = reader.scan_zstd(buf)
    assert scan.events
    # re-encode the last batch as a valid frame without a content checksum
    from dshctl.agents.session import frames
    found = frames.scan_frames(buf)
    start, end = found.frames[-1]
    plain = frames.decompress_frame(buf[start:end])
    unchecked = zstandard.ZstdCompressor(write_checksum=False).compress(plain)
    path.write_bytes(buf[:start] + unchecked)
    with pytest.raises(reader.CorruptLog) as err:
        reader.scan_file(path)
    assert "checksum" in str(err.value) and str(start) in str(err.value)


def _last_turn_line(text: bytes, marker: bytes) -> int:
    """Offset of ``marker`` inside the last turn (after the last turn/start)."""
    last_turn = text.rfind(b'"turn/start"')
    return text.index(marker, last_turn)


@pytest.mark.parametrize("marker,flip", [
    (b'"step/end"', lambda b: b.replace(b'"step/end"', b'"step/end"\x22', 1)),  # JSON no more
    (b'"step/end"', lambda b: b.replace(b'"data":{', b'"dat`":{', 1)),          # no data: invalid
])
def test_a_complete_bad_line_in_the_last_turn_is_reported_not_cut(tmp_path, marker, flip):
    store, sid, path = _session(tmp_path, "none", last_ended=False)
    text = path.read_bytes()
    at = text.rfind(b"\n", 0, _last_turn_line(text, marker)) + 1   # start of that line
    line_end = text.index(b"\n", at)
    damaged = text[:at] + flip(text[at:line_end]) + text[line_end:]
    assert damaged != text
    path.write_bytes(damaged)
    with pytest.raises(reader.CorruptLog) as err:
        reader.scan_file(path)
    assert "line" in str(err.value) and "not trusted" in str(err.value)
    with pytest.raises(Exception):
        store.open(sid)                      # and it is not silently truncated on open
    assert path.read_bytes() == damaged


def test_an_event_that_does_not_validate_is_named_by_its_line(tmp_path):
    store, sid, path = _session(tmp_path, "none")
    text = path.read_bytes()
    first = text.index(b'"step/end"')
    at = text.rfind(b"\n", 0, first) + 1
    line_end = text.index(b"\n", at)
    line = text[at:line_end].replace(b'"turn":1', b'"turn":"1"', 1)   # still JSON, not an event
    path.write_bytes(text[:at] + line + text[line_end:])
    with pytest.raises(reader.CorruptLog) as err:
        reader.scan_file(path)
    assert "does not validate" in str(err.value) and "line" in str(err.value)


def test_an_undamaged_session_still_reads(tmp_path):
    for compression in ("none", "zstd"):
        store, sid, path = _session(tmp_path / compression, compression)
        scan = reader.scan_file(path)
        assert [e["seq"] for e in scan.events] == list(range(len(scan.events)))
        assert scan.truncate_to is None
