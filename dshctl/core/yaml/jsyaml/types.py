"""The types of dsh's two js-yaml schemas, and the error and date values the port hands back.

``ENTRY_LIST`` is dsh's ``entryListSchema`` (``JSON_SCHEMA`` + ``!!js``), ``DEFAULT`` what
``yaml.load`` uses without a schema (``preset.yml``). Implicit resolution reuses the dialect's
JSON-schema scalar rules (``scalars.resolve_plain``), which are js-yaml's.
"""
from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from typing import Any

from dshctl.core.yaml.jsvalue import number_text
from dshctl.core.yaml.scalars import resolve_plain
from dshctl.core.yaml.utf16 import from_utf16

STD = "tag:yaml.org,2002:"
MAX_DEPTH = 100  # js-yaml's default; dsh passes none
MAX_MERGE_SEQ = 20

DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})\Z")
TIMESTAMP = re.compile(r"([0-9]{4})-([0-9][0-9]?)-([0-9][0-9]?)(?:[Tt]|[ \t]+)([0-9][0-9]?):([0-9]{2})"
                        r":([0-9]{2})(?:\.([0-9]*))?(?:[ \t]*(Z|([-+])([0-9][0-9]?)(?::([0-9]{2}))?))?\Z")
_BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=\n\r"


class JsYamlError(Exception):
    """A YAMLException: ``reason`` and, when js-yaml gives one, a 1-based ``line``/``column``.

    ``where`` is a position js-yaml knows but does not print (the start of a second document): it
    never enters ``message``, and dshctl uses it only for its own file:line:col."""

    def __init__(self, reason: str, line: int | None = None, column: int | None = None, *,
                 where: tuple[int, int] | None = None):
        super().__init__(reason)
        self.reason, self.line, self.column = reason, line, column
        self.where = where

    @property
    def message(self) -> str:
        """The first line of js-yaml's ``error.message``."""
        return self.reason if self.line is None else f"{self.reason} ({self.line}:{self.column})"


@dataclass(frozen=True)
class JsBinary:
    """A ``!!binary`` (a Uint8Array in JavaScript, so never a string to dsh): its base64 text is kept."""

    text: str


@dataclass(frozen=True)
class JsDate:
    """A ``!!timestamp`` (a JavaScript Date): only its source text is kept."""

    text: str


@dataclass(frozen=True)
class Schema:
    js: bool  # the entry-list dialect's `!!js`
    default: bool  # js-yaml's DEFAULT_SCHEMA (timestamps, merge keys, binary, omap, pairs, set)


ENTRY_LIST = Schema(js=True, default=False)  # dsh's entryListSchema: JSON_SCHEMA + !!js
JSON = Schema(js=False, default=False)
DEFAULT = Schema(js=False, default=True)  # yaml.load without a schema (preset.yml)

_SCALAR_TAGS = {"str", "null", "bool", "int", "float"}
_KIND = {"str": "scalar", "null": "scalar", "bool": "scalar", "int": "scalar", "float": "scalar",
         "seq": "sequence", "map": "mapping", "js": "scalar", "timestamp": "scalar", "merge": "scalar",
         "binary": "scalar", "omap": "sequence", "pairs": "sequence", "set": "mapping"}


def js_string(value: Any) -> str:
    """JavaScript's ``String(value)`` for a mapping key."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return number_text(value)
    if isinstance(value, list):
        return ",".join("" if v is None else js_string(v) for v in value)
    if isinstance(value, dict):
        return "[object Object]"
    if isinstance(value, JsDate):
        return date_string(value.text)
    return str(value)


def resolve_explicit(name: str, data: Any) -> tuple[bool, Any]:
    if name == "str":
        return True, "" if data is None else data
    if _KIND[name] == "scalar" and data is not None and not isinstance(data, str):
        # `!!int \n1` hands the resolver an already-built number: JavaScript's resolvers then fail
        # (no `.length`), except the float one, which passes it and throws in its constructor.
        if name == "float" and isinstance(data, (int, float)) and not isinstance(data, bool):
            raise JsYamlError("data.toLowerCase is not a function")
        return False, None
    if name == "seq":
        return True, [] if data is None else data
    if name in ("map", "set"):
        if name == "set" and data is not None and any(v is not None for v in data.values()):
            return False, None
        return True, {} if data is None else data
    if name == "js":
        return (True, {"__jsExpr": from_utf16(data)}) if isinstance(data, str) else (False, None)
    if name == "null":
        return (data is None or data in ("~", "null", "Null", "NULL")), None
    if name in ("bool", "int", "float"):
        if data is None:
            return False, None
        value = resolve_plain(from_utf16(data))
        want = {"bool": bool, "int": int, "float": float}[name]
        if name == "float" and isinstance(value, int) and not isinstance(value, bool) and \
                re.fullmatch(r"[-+]?[0-9]+", data):
            return True, float(value)
        ok = isinstance(value, want) and not (name == "int" and isinstance(value, bool))
        return ok, value if ok else None
    if name == "timestamp":
        ok = data is not None and bool(DATE.match(data) or TIMESTAMP.match(data))
        return ok, JsDate(from_utf16(data)) if ok else None
    if name == "merge":
        return data == "<<" or data is None, data
    if name == "binary":
        if data is None:
            return False, None
        bits = 0
        for ch in data:
            code = _BASE64.find(ch)
            if code > 64:
                continue
            if code < 0:
                return False, None
            bits += 6
        return bits % 8 == 0, JsBinary(from_utf16(data))
    if name in ("omap", "pairs"):
        if data is None:
            return True, []
        seen: list = []
        for pair in data:
            if not isinstance(pair, dict) or len(pair) != 1:
                return False, None
            (key,) = pair
            if name == "omap":
                if key in seen:
                    return False, None
                seen.append(key)
        return True, data if name == "omap" else [[next(iter(p)), next(iter(p.values()))] for p in data]
    return False, None


def resolve_implicit(text: Any, default: bool) -> tuple[Any, str | None]:
    """The implicit types in schema order: null, bool, int, float (then timestamp, merge)."""
    if text is None:
        return None, STD + "null"  # js-yaml's null type resolves null first
    value = resolve_plain(from_utf16(text))
    if not isinstance(value, str):
        kind = "null" if value is None else "bool" if isinstance(value, bool) else \
            "int" if isinstance(value, int) else "float"
        return value, STD + kind
    if default:
        if DATE.match(text) or TIMESTAMP.match(text):
            return JsDate(from_utf16(text)), STD + "timestamp"
        if text == "<<":
            return text, STD + "merge"
    return text, None


_DAYS = ("Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def date_ms(text: str) -> int:
    """Milliseconds since the epoch of a timestamp, as js-yaml builds it with ``Date.UTC`` (which
    carries an out-of-range month, day or hour over instead of failing)."""
    m = DATE.match(text) or TIMESTAMP.match(text)
    year, month, day = int(m.group(1)), int(m.group(2)) - 1, int(m.group(3))
    if 0 <= year <= 99:
        year += 1900  # Date.UTC's two-digit-year rule
    year, month = year + month // 12, month % 12
    days = (datetime.date(year, month + 1, 1) - datetime.date(1970, 1, 1)).days + day - 1
    if m.lastindex is None or m.lastindex < 4:
        return days * 86_400_000
    fraction = int((m.group(7) or "")[:3].ljust(3, "0")) if m.group(7) else 0
    ms = ((days * 24 + int(m.group(4))) * 60 + int(m.group(5))) * 60_000 + int(m.group(6)) * 1000 + fraction
    if m.group(9):
        delta = (int(m.group(10)) * 60 + int(m.group(11) or 0)) * 60_000
        ms -= delta if m.group(9) == "+" else -delta
    return ms


def date_string(text: str) -> str:
    """``String(date)`` in Node: local time, e.g. ``Mon Jan 01 2024 00:00:00 GMT+0000 (Coordinated
    Universal Time)``. The zone's long name is ICU's; outside UTC the local abbreviation stands in."""
    local = datetime.datetime.fromtimestamp(date_ms(text) / 1000, datetime.timezone.utc).astimezone()
    offset = local.utcoffset() or datetime.timedelta(0)
    minutes = int(offset.total_seconds() // 60)
    sign, minutes = ("+", minutes) if minutes >= 0 else ("-", -minutes)
    name = "Coordinated Universal Time" if local.tzname() in ("UTC", "GMT") and not minutes else local.tzname()
    return (f"{_DAYS[(local.weekday() + 1) % 7]} {_MONTHS[local.month - 1]} {local.day:02d} {local.year:04d} "
            f"{local:%H:%M:%S} GMT{sign}{minutes // 60:02d}{minutes % 60:02d} ({name})")
