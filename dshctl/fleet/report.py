"""What a fleet host writes under ``<prefix>/hosts/<ID>``: the verdict of the revision it last tried."""
from __future__ import annotations

import os

from dshctl.host.outcome import APPLIED, UNCHANGED

from .revision import now_iso

BOOTED, FAILED_ROWS, LAST_GOOD = "applied", "failed", "last-good"


def failed_rows(rows: list) -> list[dict]:
    return [{"id": r.get("id"), "name": r.get("name"), "loc": r.get("loc"), "config_loc": r.get("config_loc"),
             "reason": r.get("reason")} for r in rows if r.get("action") == "failed"]


def fleet_verdict(verdict: str) -> str:
    """``unchanged`` means the running tree already is this revision's composition: applied."""
    return APPLIED if verdict in (APPLIED, UNCHANGED) else verdict


def report_doc(host_id: str, profile: str, *, revision: int | None, running: int | None, verdict: str,
               rows: list = (), errors: list = (), note: str | None = None, source: str = "etcd",
               digest: str | None = None) -> dict:
    return {"host_id": host_id, "profile": profile, "revision": revision, "running_revision": running,
            "verdict": verdict, "failed_rows": failed_rows(list(rows)),
            "errors": [{"message": e.get("message"), "loc": e.get("loc"), "hint": e.get("hint")} for e in errors],
            "note": note, "source": source, "digest": digest, "at": now_iso(), "pid": os.getpid(),
            "node": os.uname().nodename}
