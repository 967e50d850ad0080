"""Differential: session logs dsh itself wrote (tests/fixtures/dsh-sessions) restore through our reader
under our strictest rules, in both encodings, and the history we derive is the one dsh's model saw."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dshctl.agents.session import writer
from dshctl.agents.session.api import SessionStore, derive_history, latest_request_header
from dshctl.agents.session.layout import log_path
from dshctl.agents.session.records import ROW_TYPES, decode_row, dumps
from dshctl.cli.app import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "dsh-sessions"
CWD = "/fixture/cwd"


def denormalize(text: str) -> tuple[dict, list[str]]:
    """The header and the storage rows of a normalized snapshot, with seq/time (seq0/time0) put back."""
    text = text.replace('"{{tools}}"', "[]").replace("{{cwd}}", CWD)
    text = re.sub(r"\{\{([A-Za-z0-9_:.-]+)\}\}", r"ph-\1", text)
    lines = [line for line in text.splitlines() if line.strip()]
    header = json.loads(lines[0])
    header.setdefault("delegationDepth", 0)
    rows, seq, time = [], 0, 1_700_000_000_000
    for line in lines[1:]:
        row = json.loads(line)
        if row.get("type") in ROW_TYPES:
            row = {"type": row["type"], "seq0": seq, "time0": time, "data": row["data"]}
            expanded = decode_row(row)
            seq, time = seq + len(expanded), expanded[-1]["time"]
        else:
            row = {"type": row["type"], "seq": seq, "time": time, **{k: v for k, v in row.items() if k != "type"}}
            seq += 1
        rows.append(dumps(row))
    return header, rows


def install(home: Path, name: str, compression: str) -> str:
    """Put a fixture where dsh's JSONL backend keeps it, in one encoding (one frame per line batch)."""
    header, rows = denormalize((FIXTURES / f"{name}.jsonl").read_text())
    header.pop("type")
    path = log_path(home / "sessions", header.get("cwd"), header["id"], compression)
    body = ("\n".join(rows) + "\n").encode()
    content = writer.encode_header(header, compression) + (writer.frames.compress_frame(body)
                                                           if compression == "zstd" else body)
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    return header["id"]


def _shape(history):
    return [(m["role"], [b["type"] for b in m["content"]]) for m in history]


@pytest.mark.parametrize("compression", ["zstd", "none"])
@pytest.mark.parametrize("name", ["bash-tool", "compaction-recovery", "persistent-tools", "sdk-advanced"])
def test_dsh_logs_restore_strictly(tmp_path, name, compression):
    session_id = install(tmp_path, name, compression)
    store = SessionStore(tmp_path, compression=compression)
    seen = store.read(session_id)
    assert seen.torn_bytes == 0 and seen.closers == []          # dsh closed every turn it opened
    log = store.open(session_id)                                # strict: nesting, shapes, known types
    assert log.events[:-1] == seen.events and log.events[-1]["type"] == "session/end-seed"
    history = derive_history(log.events)
    assert all(m["id"] for m in history)
    assert latest_request_header(log.events)["config"]["model"] in ("deepseek-v4-flash", "smoke-model")
    log.close()
    assert [i.id for i in store.list()] == [session_id]


def test_the_history_is_what_dsh_sent(tmp_path):
    session_id = install(tmp_path, "bash-tool", "zstd")
    history = derive_history(SessionStore(tmp_path).read(session_id).events)
    assert _shape(history) == [("user", ["text"]), ("assistant", ["reasoning", "tool-call"]),
                               ("user", ["tool-result"]), ("assistant", ["reasoning", "text"])]
    assert history[1]["content"][1]["name"] == "bash"
    assert history[3]["content"][1]["text"] == "dsh-sdk-proof-7391"


def test_compaction_replaces_the_shadowed_prompt(tmp_path):
    session_id = install(tmp_path, "compaction-recovery", "none")
    events = SessionStore(tmp_path, compression="none").read(session_id).events
    replacement = next(e for e in events if isinstance(e.get("surfaceOp"), dict))
    history = derive_history(events)
    assert history[0] is replacement["data"]                    # the summary took the prompt's place
    assert all(m is not events[replacement["surfaceOp"]["start"]]["data"] for m in history)


def test_session_show_reads_a_dsh_log(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    session_id = install(tmp_path, "bash-tool", "zstd")
    with pytest.raises(SystemExit) as exc:
        main(["--home", str(tmp_path), "session", "show", session_id])
    out = capsys.readouterr().out
    assert exc.value.code == 0
    assert "turn 1  (2 step(s), completed" in out and "  tool: bash " in out and "dsh-sdk-proof-7391" in out
