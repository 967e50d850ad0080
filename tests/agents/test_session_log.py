"""The session log: dsh's layout and framing, validation on append, restore, torn-tail repair."""
from __future__ import annotations

import json
import os

import pytest
import zstandard

from dshctl.agents.session import frames
from dshctl.agents.session.api import (
    CorruptLog, EventRejected, SessionBusy, SessionStore, derive_history, latest_request_header,
)
from dshctl.agents.session.layout import encode_segment, decode_segment, project_key

from tests.agents.session_helpers import assistant_message, tool_result, user_message, write_turn


def _frames_of(path):
    data = path.read_bytes()
    scan = frames.scan_frames(data)
    assert scan.torn_start is None
    return [zstandard.ZstdDecompressor().decompressobj().decompress(data[s:e]) for s, e in scan.frames]


def test_layout_matches_dsh(tmp_path):
    store = SessionStore(tmp_path)
    log = store.create(cwd="/work/my proj", session_id="s-1")
    assert log.path == tmp_path / "sessions" / "--work-my~0020proj--" / "s-1" / "session.jsonl.zstd"
    log.close()
    assert project_key("C:\\Users\\x") == "--C-Users-x--"
    assert encode_segment("../a~b") == "..~002Fa~007Eb"
    assert encode_segment("..") == "~002E~002E"
    assert decode_segment(encode_segment("é/😀")) == "é/😀"
    nocwd = store.create(session_id="s-2")
    assert nocwd.path.parent.parent.name == "_no-cwd"
    nocwd.close()


def test_header_frame_then_one_checksummed_frame_per_commit(tmp_path):
    log = SessionStore(tmp_path).create(cwd="/w", agent_preset="coder", created_at=1234)
    header = _frames_of(log.path)
    assert len(header) == 1
    assert json.loads(header[0]) == {"type": "session", "version": 0, "id": log.id, "createdAt": 1234,
                                     "cwd": "/w", "delegationDepth": 0, "agentPreset": "coder"}
    write_turn(log, 1, "hi")
    assert log.commit() == len(log.events)
    write_turn(log, 2, "again")
    log.commit()
    assert log.commit() == 0                       # nothing pending: no empty frame
    data = log.path.read_bytes()
    parsed = frames.scan_frames(data)
    assert len(parsed.frames) == 3
    for start, end in parsed.frames:               # every frame carries a content checksum
        assert data[start + 4] & 0x04
    log.close()


def test_chunk_runs_are_packed_and_restore_expands_them(tmp_path):
    store = SessionStore(tmp_path)
    log = store.create(cwd="/w")
    write_turn(log, 1, "hi", deltas=5)
    log.close()
    text = store.raw_text(log.id)
    rows = [json.loads(line) for line in text.splitlines()[1:]]
    packed = [r for r in rows if r["type"] == "text-chunks"]
    assert len(packed) == 1 and packed[0]["data"]["texts"] == ["w0 ", "w1 ", "w2 ", "w3 ", "w4 "]
    assert store.read(log.id).events == log.events


def test_raw_jsonl_on_request(tmp_path):
    store = SessionStore(tmp_path, compression="none", pack_chunks=False)
    log = store.create(cwd="/w")
    write_turn(log, 1, "hi")
    log.close()
    assert log.path.name == "session.jsonl"
    lines = log.path.read_text().splitlines()
    assert json.loads(lines[0])["type"] == "session"
    assert [json.loads(line) for line in lines[1:]] == log.events
    # one root, one encoding (dsh refuses a mixed root)
    with pytest.raises(CorruptLog, match="one encoding per root"):
        SessionStore(tmp_path).create(cwd="/w")


@pytest.mark.parametrize("mutate, message", [
    (lambda m: m.pop("id"), "lacks an identified message"),
    (lambda m: m.update(id=""), "lacks an identified message"),
    (lambda m: m.update(role="assistant"), 'must have role "user"'),
    (lambda m: m.update(source={}), "invalid source"),
    (lambda m: m.update(content="x"), "invalid content"),
])
def test_a_malformed_message_is_refused_at_append(tmp_path, mutate, message):
    log = SessionStore(tmp_path).create()
    log.append("turn/start", {"turn": 1})
    bad = user_message("hi", "u1")
    mutate(bad)
    with pytest.raises(EventRejected, match=message):
        log.append("user/message", bad)
    assert [e["type"] for e in log.events] == ["turn/start"]   # nothing entered the log
    log.append("user/message", user_message("hi", "u1"))
    assert log.events[-1]["seq"] == 1 and log.events[-1]["surfaceOp"] == "append"
    log.close()


@pytest.mark.parametrize("kind, data, extra, message", [
    ("turn/start", {"turn": 2}, {}, "expected turn 1"),
    ("step/start", {"turn": 1, "step": 1}, {}, "open turn is None"),
    ("request/header", {"header": {"config": {}}, "reason": "initial"}, {}, "outside any open turn"),
    ("turn/start", {"turn": 1, "x": float("nan")}, {}, "non-JSON"),
    ("turn/start", {"turn": 1, "x": -0.0}, {}, "non-JSON"),
    ("turn/start", {"turn": 1, 2: "k"}, {}, "non-string key"),
    ("turn/start", {"turn": 1, "x": {1, 2}}, {}, "not plain JSON"),
    ("turn/start", {"turn": 1}, {"surfaceOp": "append"}, "not surface-eligible"),
    ("my/event", {}, {}, "mark it ignorable"),
    ("request/header-delta", {}, {"ignorable": True}, "legacy"),
    ("turn/start", {"turn": 1}, {"colour": "red"}, "unknown event fields"),
])
def test_invalid_events_are_refused_at_append(tmp_path, kind, data, extra, message):
    log = SessionStore(tmp_path).create()
    with pytest.raises(EventRejected, match=message):
        log.append(kind, data, **extra)
    assert log.events == []
    log.close()


def test_nesting_and_tool_pairing_are_enforced(tmp_path):
    log = SessionStore(tmp_path).create()
    log.append("turn/start", {"turn": 1})
    log.append("step/start", {"turn": 1, "step": 1})
    with pytest.raises(EventRejected, match="no prior tool/call"):
        log.append("tool/result", {"turn": 1, "step": 1, "message": tool_result("r", "c9", "x")})
    with pytest.raises(EventRejected, match="still open"):
        log.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    log.append("my/note", {"n": 1}, ignorable=True)          # unknown types are fine when ignorable
    log.append("step/end", {"turn": 1, "step": 1})
    log.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    log.close()


def test_appended_data_is_a_snapshot(tmp_path):
    log = SessionStore(tmp_path).create()
    data = {"turn": 1}
    event = log.append("turn/start", data)
    data["turn"] = 99
    assert event["data"] == {"turn": 1}
    log.close()


def test_history_and_request_header_come_from_the_log_alone(tmp_path):
    store = SessionStore(tmp_path)
    log = store.create(cwd="/w")
    write_turn(log, 1, "hi")
    write_turn(log, 2, "more", tool=False)
    log.close()
    restored = store.open(log.id)
    history = derive_history(restored.events)
    assert [m["id"] for m in history] == ["u1", "a1", "r1", "u2", "a2"]
    assert latest_request_header(restored.events) == {"config": {"provider": "script", "model": "demo"},
                                                      "system": "be brief"}
    restored.close()


def test_surface_replace_shadows_a_range(tmp_path):
    log = SessionStore(tmp_path).create()
    write_turn(log, 1, "hi", tool=False)
    u1, a1 = (e["seq"] for e in log.events if e["type"] in ("user/message", "assistant/message"))
    summary = user_message("summary of turn 1", "sum")
    with pytest.raises(EventRejected, match="shadowed"):
        log.append("user/message", summary, surfaceOp={"op": "replace", "start": u1, "end": a1},
                   sourceEventSeqs=[u1])
    log.append("user/message", summary, surfaceOp={"op": "replace", "start": u1, "end": a1},
               sourceEventSeqs=[u1, a1])
    assert [m["id"] for m in derive_history(log.events)] == ["sum"]
    log.close()


def test_restore_refuses_another_format_version_and_corrupt_frames(tmp_path):
    store = SessionStore(tmp_path)
    log = store.create(session_id="v")
    write_turn(log, 1, "hi")
    log.close()
    data = bytearray(log.path.read_bytes())
    second = frames.scan_frames(bytes(data)).frames[1]
    data[second[1] - 1] ^= 0xFF                           # flip a checksum byte of a complete frame
    log.path.write_bytes(bytes(data))
    with pytest.raises(CorruptLog, match="failed validation"):
        store.read("v")
    future = store.create(session_id="f", cwd="/x")
    future.close()
    future.path.write_bytes(frames.compress_frame(b'{"type":"session","version":1,"id":"f","createdAt":1,'
                                                  b'"cwd":"/x","delegationDepth":0}\n'))
    with pytest.raises(CorruptLog, match="format version 1"):
        store.read("f")


def test_a_torn_final_frame_is_repaired_with_dsh_closers(tmp_path):
    store = SessionStore(tmp_path)
    log = store.create(cwd="/w", session_id="t")
    write_turn(log, 1, "hi")
    log.commit()
    log.append("turn/start", {"turn": 2})
    log.append("user/message", user_message("go", "u2"))
    log.append("step/start", {"turn": 2, "step": 1})
    log.append("assistant/message", {"turn": 2, "step": 1, "message": assistant_message("a2", [
        {"type": "tool-call", "id": "k1", "name": "x", "arguments": "{}"},
        {"type": "tool-call", "id": "k2", "name": "y", "arguments": "{}"}])})
    log.append("tool/call", {"turn": 2, "step": 1, "callId": "k1", "name": "x", "arguments": "{}"})
    log.commit()
    durable = len(log.events)
    log.append("assistant/chunk", {"turn": 2, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "x"}})
    log.commit()
    log.close()
    data = log.path.read_bytes()
    log.path.write_bytes(data[:-3])                       # the last frame loses its checksum tail
    seen = store.read("t")
    assert seen.torn_bytes > 0
    reopened = store.open("t")
    # the torn frame's complete record (the chunk) is recovered, then 4 closers and the seed boundary
    assert reopened.events[durable]["data"]["chunk"]["text"] == "x"
    assert len(reopened.events) == durable + 1 + 5
    closers = reopened.events[-5:-1]
    assert [c["type"] for c in closers] == ["tool/result", "tool/result", "step/end", "turn/end"]
    assert closers[0]["data"]["error"]["code"] == "TOOL_OUTCOME_UNKNOWN"
    assert closers[0]["sourceEventSeqs"] == [durable - 1]
    assert closers[1]["data"]["error"]["code"] == "TOOL_NOT_STARTED"
    assert closers[3]["data"]["reason"] == {"kind": "interrupted"}
    assert reopened.events[-1]["type"] == "session/end-seed"
    reopened.close()
    again = store.read("t")                               # the repair itself was durable
    assert again.torn_bytes == 0 and again.closers == []
    assert [e["seq"] for e in again.events] == list(range(len(again.events)))


def test_a_torn_raw_line_is_dropped(tmp_path):
    store = SessionStore(tmp_path, compression="none")
    log = store.create(session_id="r")
    write_turn(log, 1, "hi")
    log.close()
    with open(log.path, "ab") as fh:
        fh.write(b'{"type":"turn/start","seq":')
    seen = store.read("r")
    assert seen.events == log.events and seen.torn_bytes > 0
    store.open("r").close()
    assert store.read("r").torn_bytes == 0


def test_one_writer_per_session(tmp_path):
    store = SessionStore(tmp_path)
    log = store.create(session_id="w")
    with pytest.raises(SessionBusy):
        store.open("w")
    log.close()
    store.open("w").close()


def test_list_reads_headers_only_and_reports_broken_logs(tmp_path):
    store = SessionStore(tmp_path)
    a = store.create(cwd="/a", created_at=1)
    write_turn(a, 1, "x")
    a.close()
    b = store.create(cwd="/b", created_at=2)
    b.close()
    # garbage after the header frame does not matter to a metadata-only listing
    with open(a.path, "ab") as fh:
        fh.write(b"\x00garbage")
    broken = tmp_path / "sessions" / "--c--" / "zz"
    broken.mkdir(parents=True)
    (broken / "session.jsonl.zstd").write_bytes(b"not zstd")
    infos = store.list()
    assert [i.id for i in infos if not i.error] == [b.id, a.id]
    assert [i.error for i in infos if i.error] == ["header frame failed validation: invalid Zstandard frame magic at byte 0"]


from hypothesis import given, settings, strategies as st  # noqa: E402

from dshctl.agents.session.records import decode_row, pack_rows  # noqa: E402

_delta = st.one_of(
    st.builds(lambda i, t: {"type": "text-delta", "index": i, "text": t}, st.integers(0, 2), st.text(max_size=5)),
    st.builds(lambda i, t: {"type": "reasoning-delta", "index": i, "text": t}, st.integers(0, 2), st.text(max_size=5)),
    st.builds(lambda i, c, a: {"type": "tool-call-delta", "index": i, "id": c, "argumentsDelta": a},
              st.integers(0, 2), st.sampled_from(["a", "b"]), st.text(max_size=5)),
    st.builds(lambda i, c, a: {"type": "tool-call-delta", "index": i, "id": c, "name": "t", "argumentsDelta": a},
              st.integers(0, 2), st.sampled_from(["a", "b"]), st.text(max_size=5)),
    st.just({"type": "usage", "usage": {"inputTokens": 1, "outputTokens": 2}}),
)


@settings(max_examples=200)
@given(st.lists(st.tuples(_delta, st.integers(0, 3), st.integers(1, 2)), max_size=40))
def test_packing_chunk_runs_is_lossless(items):
    events, time = [], 1000
    for seq, (chunk, gap, step) in enumerate(items):
        time += gap
        events.append({"type": "assistant/chunk", "seq": seq, "time": time,
                       "data": {"turn": 1, "step": step, "chunk": chunk}})
    rows = pack_rows(events)
    assert [e for row in json.loads(json.dumps(rows)) for e in decode_row(row)] == events
    assert all(len(r["data"].get("texts", r["data"].get("args", [0, 0, 0]))) >= 3
               for r in rows if r["type"].endswith("-chunks"))


def _frame(data: bytes, streamed: bool, checksum: bool) -> bytes:
    compressor = zstandard.ZstdCompressor(write_checksum=checksum, write_content_size=not streamed)
    if not streamed:
        return compressor.compress(data)
    obj = compressor.compressobj()                # no content size in the header; raw/RLE blocks too
    return obj.compress(data) + obj.flush()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.binary(max_size=300), st.integers(0, 300_000).map(lambda n: b"a" * n),
                                    st.integers(0, 200_000).map(os.urandom)),
                          st.booleans(), st.booleans()), min_size=1, max_size=4), st.data())
def test_the_frame_scan_finds_every_boundary_and_every_tear(parts, data):
    encoded = [_frame(*part) for part in parts]
    blob = b"".join(encoded)
    ends = [sum(map(len, encoded[:i + 1])) for i in range(len(encoded))]
    scan = frames.scan_frames(blob)
    assert [end for _, end in scan.frames] == ends and scan.torn_start is None
    assert [frames.decompress_frame(blob[s:e]) for s, e in scan.frames] == [p[0] for p in parts]
    cut = data.draw(st.integers(0, len(blob) - 1))
    torn = frames.scan_frames(blob[:cut])
    whole = [e for e in ends if e <= cut]
    assert [end for _, end in torn.frames] == whole
    if cut == 0 or cut in ends:
        assert torn.torn_start is None                 # cut on a boundary: nothing torn
    else:
        assert torn.torn_start == (whole[-1] if whole else 0)
