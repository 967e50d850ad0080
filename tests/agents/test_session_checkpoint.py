"""The restore checkpoint (``<session dir>/.restore``): a restore through it returns exactly what a full
restore of the same bytes returns, and a checkpoint that does not match the log (stale, truncated,
corrupt, another session's, a log cut below it or rewritten, a bit flipped in the covered prefix) is
ignored or refused as the full read refuses, never trusted over the log (fault injection)."""
from __future__ import annotations

import shutil

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from dshctl.agents.session import checkpoint, frames
from dshctl.agents.session.api import CorruptLog, SessionStore
from dshctl.agents.session.restore import restore

from tests.agents.session_helpers import write_turn

TURNS = 120     # ~1,440 events with 4 deltas a turn: above checkpoint.SAVE_AFTER


def _session(home, compression="zstd", turns=TURNS, session_id="s"):
    log = SessionStore(home, compression=compression).create(cwd="/w", session_id=session_id)
    for turn in range(1, turns + 1):
        write_turn(log, turn, f"prompt {turn}", deltas=4)
        log.commit()
    log.close()
    return log.path


def _more(home, session_id, turns, compression="zstd", end=True):
    log = SessionStore(home, compression=compression).open(session_id)
    first = max((e["data"]["turn"] for e in log.events if e["type"] == "turn/end"), default=0)
    for turn in range(first + 1, first + 1 + turns):
        write_turn(log, turn, f"more {turn}", deltas=4, end=end or turn < first + turns)
        log.commit()
    log.close()


def _full(path, strict=True):
    """The restore with no checkpoint at all (moved aside and back)."""
    sidecar = path.parent / checkpoint.FILE_NAME
    aside = path.parent / "aside"
    if sidecar.exists():
        sidecar.rename(aside)
    try:
        return restore(path, strict=strict, save=False)
    finally:
        if aside.exists():
            aside.rename(sidecar)


def _same(a, b):
    assert a.scan.events == b.scan.events
    assert a.scan.recovered == b.scan.recovered and a.scan.truncate_to == b.scan.truncate_to
    assert a.scan.header == b.scan.header
    assert a.trace.surface == b.trace.surface and a.trace.last_seq == b.trace.last_seq
    sa, sb = a.trace.state, b.trace.state
    assert (sa.open_turn, sa.open_step, sa.next_turn, sa.next_step, sa.pending_calls) == \
        (sb.open_turn, sb.open_step, sb.next_turn, sb.next_step, sb.pending_calls)


@pytest.mark.parametrize("compression", ["zstd", "none"])
def test_a_restore_through_the_checkpoint_equals_a_full_one(tmp_path, compression):
    path = _session(tmp_path, compression)
    assert not (path.parent / checkpoint.FILE_NAME).exists()
    first = restore(path, strict=True, save=True)          # no checkpoint yet: reads all, writes one
    assert first.from_checkpoint == 0 and (path.parent / checkpoint.FILE_NAME).is_file()
    again = restore(path, strict=True, save=False)
    assert again.from_checkpoint == len(first.scan.events) > checkpoint.SAVE_AFTER
    _same(again, first)
    _same(restore(path, strict=False, save=False), _full(path, strict=False))


@pytest.mark.parametrize("compression", ["zstd", "none"])
def test_a_stale_checkpoint_covers_the_prefix_and_the_rest_is_decoded(tmp_path, compression):
    path = _session(tmp_path, compression)
    assert SessionStore(tmp_path, compression=compression).checkpoint("s")
    covered = len(restore(path, strict=True, save=False).scan.events)
    _more(tmp_path, "s", 3, compression, end=False)          # an open turn at the end: nesting state
    stale = restore(path, strict=True, save=False)
    assert stale.from_checkpoint == covered < len(stale.scan.events)
    assert stale.trace.state.open_turn is not None
    _same(stale, _full(path))


def test_a_closed_session_is_checkpointed_by_the_store_and_reopens_with_its_closers(tmp_path):
    path = _session(tmp_path)
    _more(tmp_path, "s", 2, end=False)
    store = SessionStore(tmp_path)
    assert store.checkpoint("s")
    assert restore(path, strict=True, save=False).from_checkpoint == len(_full(path).scan.events)
    log = store.open("s")                    # the crash-orphaned turn is closed as without a checkpoint
    closers = [e["type"] for e in log.events[-4:]]
    log.close()
    assert "turn/end" in closers
    assert store.read("s").events == _full(path, strict=False).scan.events


@pytest.mark.parametrize("damage", ["truncated", "flipped", "empty", "garbage", "old-magic"])
def test_a_damaged_checkpoint_is_ignored(tmp_path, damage):
    path = _session(tmp_path)
    SessionStore(tmp_path).checkpoint("s")
    sidecar = path.parent / checkpoint.FILE_NAME
    data = sidecar.read_bytes()
    if damage == "truncated":
        data = data[:len(data) * 2 // 3]
    elif damage == "flipped":
        data = data[:len(data) // 2] + bytes([data[len(data) // 2] ^ 0x10]) + data[len(data) // 2 + 1:]
    elif damage == "empty":
        data = b""
    elif damage == "garbage":
        frame = frames.compress_frame(b"\x00not marshal")     # sealed, so the decoder itself refuses it
        data = checkpoint._MAGIC + checkpoint._seal(checkpoint._key(create=False), frame) + frame
    else:
        data = b"dshctl-restore/0\n" + data[len(checkpoint._MAGIC):]
    sidecar.write_bytes(data)
    got = restore(path, strict=True, save=False)
    assert got.from_checkpoint == 0
    _same(got, _full(path))


def _forged(path, events) -> bytes:
    """A sidecar that matches the log's digest and decodes, but was not sealed by this user's dshctl."""
    import marshal

    buf = path.read_bytes()
    body = marshal.dumps((len(buf), checkpoint._digest(path.name, buf), events, (0, 0, 1, 1, ()), [], 1), 4)
    frame = frames.compress_frame(body)
    return checkpoint._MAGIC + bytes(checkpoint._SEAL) + frame


def test_a_forged_sidecar_beside_a_log_is_not_trusted(tmp_path):
    """Anyone can hash a log: a sidecar with the right digest and other events fails the seal."""
    path = _session(tmp_path)
    events = _full(path).scan.events
    lie = [dict(e, data={"text": "never said"}) if e["type"] == "message/user" else e for e in events]
    (path.parent / checkpoint.FILE_NAME).write_bytes(_forged(path, lie))
    got = restore(path, strict=True, save=False)
    assert got.from_checkpoint == 0
    _same(got, _full(path))


def test_a_checkpoint_sealed_by_another_user_is_ignored_and_caches_off_write_none(tmp_path, monkeypatch):
    """A session directory copied from another machine carries a sidecar under another key."""
    path = _session(tmp_path)
    SessionStore(tmp_path).checkpoint("s")
    assert restore(path, strict=True, save=False).from_checkpoint > 0
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "other-user-cache"))
    got = restore(path, strict=True, save=False)
    assert got.from_checkpoint == 0
    _same(got, _full(path))
    key = tmp_path / "other-user-cache" / "dshctl" / "restore.key"
    assert not key.exists()                         # reading never makes a key
    SessionStore(tmp_path).checkpoint("s")
    assert oct(key.stat().st_mode & 0o777) == "0o600"
    monkeypatch.setenv("DSHCTL_CACHE", "0")
    (path.parent / checkpoint.FILE_NAME).unlink()
    SessionStore(tmp_path).checkpoint("s")
    assert not (path.parent / checkpoint.FILE_NAME).exists()


def test_another_sessions_checkpoint_is_ignored(tmp_path):
    a = _session(tmp_path, session_id="a")
    b = _session(tmp_path, session_id="b")     # the same events, another header
    SessionStore(tmp_path).checkpoint("a")
    shutil.copy(a.parent / checkpoint.FILE_NAME, b.parent / checkpoint.FILE_NAME)
    got = restore(b, strict=True, save=False)
    assert got.from_checkpoint == 0 and got.scan.header["id"] == "b"
    _same(got, _full(b))


def test_a_log_cut_below_the_checkpoint_and_rewritten_is_read_in_full(tmp_path):
    path = _session(tmp_path)
    SessionStore(tmp_path).checkpoint("s")
    size = path.stat().st_size
    found = frames.scan_frames(path.read_bytes())
    cut = found.frames[len(found.frames) // 2][1]
    with open(path, "r+b") as fh:               # what a repair by another writer could leave
        fh.truncate(cut)
    _more(tmp_path, "s", TURNS)                  # longer than before: the checkpoint's end is inside it
    assert path.stat().st_size > size
    got = restore(path, strict=True, save=False)
    assert got.from_checkpoint == 0
    _same(got, _full(path))


def test_an_edit_inside_the_covered_prefix_is_what_the_restore_returns(tmp_path):
    path = _session(tmp_path, "none")
    SessionStore(tmp_path, compression="none").checkpoint("s")
    data = path.read_bytes()
    path.write_bytes(data.replace(b'"prompt 7"', b'"prompt 8"'))     # still a valid event: the log wins
    got = restore(path, strict=True, save=False)
    assert got.from_checkpoint == 0
    assert [e["data"]["content"][0]["text"] for e in got.scan.events if e["type"] == "user/message"][6] == "prompt 8"


def test_a_bit_flip_inside_the_covered_prefix_is_still_refused(tmp_path):
    path = _session(tmp_path, "none")
    SessionStore(tmp_path, compression="none").checkpoint("s")
    data = path.read_bytes()
    at = data.index(b'"prompt 7"')
    path.write_bytes(data[:at] + b'"prompt 7",' + data[at + len(b'"prompt 7"'):])   # a complete line, not JSON
    with pytest.raises(CorruptLog):
        restore(path, strict=True, save=False)
    with pytest.raises(CorruptLog):
        SessionStore(tmp_path, compression="none").open("s")


def test_a_torn_tail_after_the_checkpoint_is_repaired_as_without_it(tmp_path):
    path = _session(tmp_path)
    SessionStore(tmp_path).checkpoint("s")
    _more(tmp_path, "s", 1)
    data = path.read_bytes()
    last = frames.scan_frames(data).frames[-1]
    path.write_bytes(data[:last[0] + (last[1] - last[0]) // 2])     # the last batch torn mid-frame
    got = restore(path, strict=True, save=False)
    assert got.from_checkpoint > 0 and got.scan.truncate_to == last[0]
    _same(got, _full(path))
    log = SessionStore(tmp_path).open("s")
    log.close()
    assert restore(path, strict=True, save=False).scan.truncate_to is None


def test_an_unwritable_session_directory_only_skips_the_checkpoint(tmp_path):
    path = _session(tmp_path)
    path.parent.chmod(0o500)
    try:
        assert not SessionStore(tmp_path).checkpoint("s") or (path.parent / checkpoint.FILE_NAME).exists()
        assert restore(path, strict=True, save=True).scan.events == _full(path).scan.events
    finally:
        path.parent.chmod(0o700)
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(before=st.integers(0, 6), after=st.integers(0, 4), open_end=st.booleans(),
       cut=st.one_of(st.none(), st.floats(0, 1)), compression=st.sampled_from(["zstd", "none"]))
def test_property_checkpointed_restore_equals_full_restore(tmp_path_factory, before, after, open_end, cut,
                                                           compression):
    home = tmp_path_factory.mktemp("h")
    path = _session(home, compression, turns=before + 1)
    SessionStore(home, compression=compression).checkpoint("s")
    if after:
        _more(home, "s", after, compression, end=not open_end)
    if cut is not None:                        # any tail cut after the checkpoint
        data = path.read_bytes()
        path.write_bytes(data[:len(data) - int(cut * len(data) * 0.05)])
    try:
        full = _full(path)
    except CorruptLog as exc:
        with pytest.raises(CorruptLog) as again:
            restore(path, strict=True, save=False)
        assert str(again.value) == str(exc)
        return
    _same(restore(path, strict=True, save=False), full)


def test_damage_after_the_checkpoint_is_refused_naming_the_same_line(tmp_path):
    path = _session(tmp_path, "none")
    SessionStore(tmp_path, compression="none").checkpoint("s")
    _more(tmp_path, "s", 3, "none")
    data = path.read_bytes()
    at = data.index(b'"more ')
    path.write_bytes(data[:at] + b"{" + data[at:])          # a complete line after the checkpoint, not JSON
    with pytest.raises(CorruptLog) as full:
        _full(path)
    assert "line" in str(full.value)
    with pytest.raises(CorruptLog) as through:
        restore(path, strict=True, save=False)
    assert str(through.value) == str(full.value)


def test_a_temp_file_a_killed_writer_left_is_swept_by_the_next_save(tmp_path):
    import os
    path = _session(tmp_path)
    old, young = path.parent / ".restore.dead01.tmp", path.parent / ".restore.live01.tmp"
    old.write_bytes(b"partial")
    young.write_bytes(b"being written")
    os.utime(old, (0, 0))
    assert SessionStore(tmp_path).checkpoint("s")
    assert not old.exists() and young.exists()      # a young one may be another writer's, mid-save
    assert restore(path, strict=True, save=False).from_checkpoint > 0
