"""The logical JSONL records of a session log: the header line and the storage rows.

A storage row is either one event or a *packed* run of consecutive ``assistant/chunk`` deltas (dsh's
``text-chunks`` / ``reasoning-chunks`` / ``tool-call-chunks`` rows: ``seq0``, ``time0``, ``dt`` gaps
and the member payloads). dsh packs runs of three or more by default; readers expand rows
unconditionally, so packing changes only the bytes written.
"""
from __future__ import annotations

import json
from typing import Any

from dshctl.agents.session.api import SESSION_FORMAT_VERSION

HEADER_FIELDS = ("version", "id", "createdAt", "cwd", "parentSession", "seedLength", "origin",
                 "delegationDepth", "agentPreset")
ROW_TYPES = {"text-chunks": "text-delta", "reasoning-chunks": "reasoning-delta",
             "tool-call-chunks": "tool-call-delta"}
MIN_RUN = 3


class RecordError(ValueError):
    pass


class FormatVersionError(RecordError):
    """The header names another format version: the log was written by another harness build."""


# built once: json.dumps with options makes a new encoder on every call
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_COMPACT_ASCII = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), allow_nan=False)
# for a batch of logged events only: each is a plain copy (validate.plain_copy refuses repeated or
# cyclic references), so the encoder's cycle bookkeeping, a third of its time on a message, is skipped
_BATCH = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False, check_circular=False)


def dumps(value: Any) -> str:
    """JSON as ``JSON.stringify`` writes it: compact, non-ASCII kept (lone surrogates escaped)."""
    try:
        text = _COMPACT.encode(value)
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return _COMPACT_ASCII.encode(value)


def header_line(header: dict) -> str:
    """The first record: the header tagged ``type: "session"``, absent fields omitted, in dsh's order."""
    line: dict[str, Any] = {"type": "session"}
    for key in HEADER_FIELDS:
        if key == "delegationDepth":
            line[key] = header.get(key, 0)
        elif header.get(key) is not None:
            line[key] = header[key]
    return dumps(line)


def _nonneg_int(value: Any) -> bool:
    return type(value) is int and value >= 0


def parse_header(text: str | bytes) -> dict:
    """The header of a log from its first line; raises :class:`RecordError` naming what is wrong."""
    try:
        parsed = json.loads(text)
    except ValueError:
        raise RecordError("header line is not valid JSON") from None
    if isinstance(parsed, dict) and isinstance(parsed.get("version"), (int, float)) \
            and parsed["version"] != SESSION_FORMAT_VERSION:
        raise FormatVersionError(
            f"session {parsed.get('id')!r} uses session format version {parsed['version']}; "
            f"this dshctl reads version {SESSION_FORMAT_VERSION}")
    ok = (isinstance(parsed, dict) and parsed.get("type") == "session"
          and type(parsed.get("version")) is int and isinstance(parsed.get("id"), str)
          and _nonneg_int(parsed.get("createdAt")) and _nonneg_int(parsed.get("delegationDepth"))
          and parsed["id"] != "" and parsed.get("origin") in (None, "subagent")
          and all(isinstance(parsed.get(k, ""), str) for k in ("agentPreset", "cwd", "parentSession"))
          and parsed.get("cwd") != "" and _nonneg_int(parsed.get("seedLength", 0)))
    if not ok:
        raise RecordError("first line is not a session header")
    if "sandboxMode" in parsed or "approvalPolicy" in parsed:
        raise RecordError("session header uses retired policy baseline fields")
    return {key: parsed[key] for key in HEADER_FIELDS if key in parsed}


# --- packed chunk rows -------------------------------------------------------------------------

def _delta_kind(event: dict) -> str | None:
    """The delta kind when ``event`` is a plain chunk event a packed row can represent exactly."""
    if event.get("type") != "assistant/chunk" or len(event) != 4:
        return None
    data = event.get("data")
    if not isinstance(data, dict) or set(data) != {"turn", "step", "chunk"}:
        return None
    chunk = data["chunk"]
    if not isinstance(chunk, dict) or type(chunk.get("index")) is not int:
        return None
    kind = chunk.get("type")
    if kind in ("text-delta", "reasoning-delta"):
        return kind if set(chunk) == {"type", "index", "text"} and isinstance(chunk["text"], str) else None
    if kind == "tool-call-delta":
        keys = set(chunk)
        if keys not in ({"type", "index", "id", "argumentsDelta"},
                        {"type", "index", "id", "name", "argumentsDelta"}):
            return None
        if isinstance(chunk["id"], str) and isinstance(chunk["argumentsDelta"], str) \
                and isinstance(chunk.get("name", ""), str):
            return kind
    return None


def _continues(prev: dict, nxt: dict, kind: str) -> bool:
    if nxt["seq"] != prev["seq"] + 1:
        return False
    a, b = prev["data"], nxt["data"]
    if a["turn"] != b["turn"] or a["step"] != b["step"] or a["chunk"]["index"] != b["chunk"]["index"]:
        return False
    if kind != "tool-call-delta":
        return True
    ca, cb = a["chunk"], b["chunk"]
    return ca["id"] == cb["id"] and ("name" in ca) == ("name" in cb) and ca.get("name") == cb.get("name")


def _row(kind: str, run: list[dict]) -> dict:
    first = run[0]["data"]
    data: dict[str, Any] = {"turn": first["turn"], "step": first["step"], "index": first["chunk"]["index"]}
    dt = [run[i]["time"] - run[i - 1]["time"] for i in range(1, len(run))]
    if kind == "tool-call-delta":
        data["id"] = first["chunk"]["id"]
        if "name" in first["chunk"]:
            data["name"] = first["chunk"]["name"]
        data["dt"] = dt
        data["args"] = [e["data"]["chunk"]["argumentsDelta"] for e in run]
        tag = "tool-call-chunks"
    else:
        data["dt"] = dt
        data["texts"] = [e["data"]["chunk"]["text"] for e in run]
        tag = "text-chunks" if kind == "text-delta" else "reasoning-chunks"
    return {"type": tag, "seq0": run[0]["seq"], "time0": run[0]["time"], "data": data}


def pack_rows(events: list[dict]) -> list[dict]:
    """Pack runs of three or more consecutive deltas of one block into storage rows."""
    out: list[dict] = []
    run: list[dict] = []
    kind: str | None = None

    def flush():
        if kind is not None and len(run) >= MIN_RUN:
            out.append(_row(kind, run))
        else:
            out.extend(run)

    for event in events:
        k = _delta_kind(event)
        if k is not None and k == kind and run and _continues(run[-1], event, k):
            run.append(event)
            continue
        flush()
        if k is None:
            out.append(event)
            run, kind = [], None
        else:
            run, kind = [event], k
    flush()
    return out


def _expand(row: dict) -> list[dict]:
    tag = row["type"]
    if set(row) != {"type", "seq0", "time0", "data"} or not _nonneg_int(row["seq0"]) \
            or type(row["time0"]) is not int or not isinstance(row["data"], dict):
        raise RecordError(f"malformed {tag} storage row: bad envelope")
    data = row["data"]
    key = "args" if tag == "tool-call-chunks" else "texts"
    members, dt = data.get(key), data.get("dt")
    if not isinstance(members, list) or not members or not all(isinstance(m, str) for m in members) \
            or not isinstance(dt, list) or len(dt) != len(members) - 1 \
            or not all(type(g) is int for g in dt) \
            or not all(type(data.get(k)) is int for k in ("turn", "step", "index")):
        raise RecordError(f"malformed {tag} storage row: bad members")
    turn, step, index, seq0 = data["turn"], data["step"], data["index"], row["seq0"]
    times = [row["time0"]]
    for gap in dt:
        times.append(times[-1] + gap)
    if tag == "tool-call-chunks":
        head = {"type": "tool-call-delta", "index": index, "id": data["id"]}
        if "name" in data:
            head["name"] = data["name"]
        chunks = [{**head, "argumentsDelta": m} for m in members]
    else:
        delta = ROW_TYPES[tag]
        chunks = [{"type": delta, "index": index, "text": m} for m in members]
    return [{"type": "assistant/chunk", "seq": seq0 + k, "time": times[k],
             "data": {"turn": turn, "step": step, "chunk": chunk}} for k, chunk in enumerate(chunks)]


def decode_row(value: Any) -> list[dict]:
    """The events one storage row stands for (a plain event is its own row)."""
    if isinstance(value, dict) and value.get("type") in ROW_TYPES:
        return _expand(value)
    return [value]


def batch_text(events: list[dict], pack: bool) -> str:
    """The JSONL text of one append batch, newline-terminated."""
    rows = pack_rows(events) if pack else events
    return "".join(dumps(row) + "\n" for row in rows)


def batch_bytes(events: list[dict], pack: bool) -> bytes:
    """``batch_text`` as UTF-8, encoded once for the batch; a lone surrogate anywhere (which UTF-8
    cannot carry) sends the batch through ``batch_text``, which escapes it in its row only."""
    rows = pack_rows(events) if pack else events
    encode = _BATCH.encode
    try:
        return "".join([encode(row) + "\n" for row in rows]).encode("utf-8")
    except UnicodeEncodeError:
        return "".join(dumps(row) + "\n" for row in rows).encode("utf-8")
