"""The fd-3 wire protocol, host side: dsh's CPython code-runtime vocabulary, with every inbound frame
treated as hostile.

Frames are JSON objects, one per line, on the worker's fd 3 (stdout and stderr stay the program's).
Worker -> host: ``boot-ack``, ``call {id, global, name, args}``, ``log {text, truncated?}``,
``done {value?, error?: {kind, message}}``. Host -> worker: ``boot`` (limits and namespaces), ``run
{program}``, ``reply {id, ok, value | message}``.

The model's program can write anything to fd 3, so :func:`parse_frame` parses strictly (no ``NaN`` or
``Infinity`` tokens, bounded nesting) and :func:`rebuild_frame` builds a fresh frame from the fields it
knows: extra keys never ride along, an id that is not a plain integer is never echoed, junk is
``None``. Numbers must be *lossless* as dsh defines it (its host is JavaScript): an integer must be
exactly representable as a double, and non-finite numbers and negative zero are refused.
"""
from __future__ import annotations

import json
import math
from typing import Any

PROTOCOL_FD = 3
DONE_ERROR_KINDS = ("exception", "invalid-output", "output-limit")
# Deeper values are refused as not lossless JSON: Python's JSON codec recurses, and the pipeline and the
# session log re-encode arguments, so a value must stay well inside the interpreter's recursion limit.
MAX_NESTING = 256


def log_truncation_marker(max_bytes: int) -> str:
    """The in-band line both ledgers emit when the log budget runs out (dsh's text, byte for byte)."""
    return f"[dsh-code-runtime-python] log capture truncated at {max_bytes} bytes"


class _NegativeZero(float):
    """What ``-0`` parses to, so the losslessness walk sees the sign a JavaScript peer would keep."""


def _parse_int(token: str) -> Any:
    return _NegativeZero(-0.0) if token == "-0" else int(token)


def _refuse_constant(token: str) -> Any:
    raise ValueError(f"{token} is not JSON")


_DECODER = json.JSONDecoder(parse_int=_parse_int, parse_constant=_refuse_constant)


def parse_frame(line: bytes) -> Any:
    """One raw line -> a JSON value, or ``None`` for anything that is not strict JSON."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return None
    try:
        return _DECODER.decode(text)
    except (ValueError, RecursionError):
        return None


def number_is_lossless(value: Any) -> bool:
    if isinstance(value, bool):
        return True
    if isinstance(value, int):
        if -(2 ** 53) <= value <= 2 ** 53:
            return True
        try:
            return int(float(value)) == value
        except OverflowError:
            return False
    if isinstance(value, float):
        return math.isfinite(value) and not (value == 0.0 and math.copysign(1.0, value) < 0)
    return True


def _string_is_lossless(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:      # a lone surrogate: the session log is UTF-8, it cannot carry one
        return False
    return True


def lossless_violation(value: Any) -> str | None:
    """Why ``value`` is not lossless JSON, or ``None``. Iterative, so depth costs no stack."""
    stack = [(value, 0)]
    while stack:
        current, depth = stack.pop()
        if depth > MAX_NESTING:
            return f"value nests deeper than {MAX_NESTING} levels"
        if current is None or isinstance(current, bool):
            continue
        if isinstance(current, (int, float)):
            if not number_is_lossless(current):
                return f"number {current!r} is not lossless JSON"
        elif isinstance(current, str):
            if not _string_is_lossless(current):
                return "a string holds a lone surrogate"
        elif isinstance(current, list):
            stack.extend((item, depth + 1) for item in current)
        elif isinstance(current, dict):
            for key, item in current.items():
                if not isinstance(key, str) or not _string_is_lossless(key):
                    return "an object key is not a UTF-8 string"
                stack.append((item, depth + 1))
        else:
            return f"{type(current).__name__} is not a JSON value"
    return None


def _string_bytes(text: str) -> int:
    return len(json.dumps(text, ensure_ascii=False).encode("utf-8", "surrogatepass"))


def check_done_value(value: Any, max_bytes: int) -> str | None:
    """``None`` when ``value`` is lossless and its compact JSON fits ``max_bytes``; else ``"over-budget"``
    or ``"non-lossless"``. Over budget wins wherever each violation sits (as dsh's ``checkDoneValue``)."""
    size, lossy = 0, False
    stack = [(value, 0)]
    while stack:
        current, depth = stack.pop()
        lossy = lossy or depth > MAX_NESTING
        if current is None:
            size += 4
        elif isinstance(current, bool):
            size += 4 if current else 5
        elif isinstance(current, (int, float)):
            lossy = lossy or not number_is_lossless(current)
            size += len(encode_scalar(current))
        elif isinstance(current, str):
            lossy = lossy or not _string_is_lossless(current)
            size += _string_bytes(current)
        elif isinstance(current, list):
            size += 2 + max(len(current) - 1, 0)
            if size + len(current) > max_bytes:
                return "over-budget"
            stack.extend((item, depth + 1) for item in current)
        elif isinstance(current, dict):
            size += 2 + max(len(current) - 1, 0)
            if size + 4 * len(current) > max_bytes:
                return "over-budget"
            for key, item in current.items():
                size += _string_bytes(key) + 1
                stack.append((item, depth + 1))
        else:
            lossy = True
        if size > max_bytes:
            return "over-budget"
    return "non-lossless" if lossy else None


def encode_scalar(value: Any) -> str:
    # Python's float repr is the shortest text that reads back as the same double, so unlike a
    # JavaScript host (which prints 2**60 rounded) no integral double needs special digits here.
    return json.dumps(value)


def encode_frame(frame: dict) -> bytes:
    """One host -> worker line. Values are already lossless JSON (the pipeline's results are)."""
    return json.dumps(frame, ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False).encode("utf-8", "surrogatepass") + b"\n"


def _plain_id(value: Any) -> bool:
    return type(value) is int and value >= 0 and number_is_lossless(value)


def rebuild_frame(raw: Any) -> dict | None:
    """Validate one parsed inbound frame and return a fresh copy holding only known fields."""
    if type(raw) is not dict:
        return None
    kind = raw.get("type")
    if kind == "boot-ack":
        return {"type": "boot-ack"}
    if kind == "log":
        text = raw.get("text")
        if type(text) is not str or not _string_is_lossless(text):
            return None
        frame = {"type": "log", "text": text}
        if raw.get("truncated") is True:    # only the literal true; a truthy forgery must not silence capture
            frame["truncated"] = True
        return frame
    if kind == "call":
        call_id, namespace, member = raw.get("id"), raw.get("global"), raw.get("name")
        if not _plain_id(call_id) or type(namespace) is not str or type(member) is not str:
            return None
        if "args" not in raw or lossless_violation(raw["args"]) is not None:
            return None
        return {"type": "call", "id": call_id, "global": namespace, "name": member, "args": raw["args"]}
    if kind == "done":
        frame: dict = {"type": "done"}
        error = raw.get("error")
        if error is not None:
            if type(error) is not dict or type(error.get("message")) is not str \
                    or error.get("kind") not in DONE_ERROR_KINDS:
                return None
            frame["error"] = {"kind": error["kind"], "message": error["message"]}
        if "value" in raw:
            frame["value"] = raw["value"]     # metered later by check_done_value, bounded by the frame cap
        return frame
    return None
