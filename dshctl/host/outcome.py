"""The verdict of one reload, as the control socket, ``dshctl reload``, ``status`` and the log show it."""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from dshctl.errors import DshctlError

APPLIED, UNCHANGED, REJECTED, ROLLED_BACK, ROLLBACK_FAILED = (
    "applied", "unchanged", "rejected", "rolled-back", "rollback-failed")
# trials (trial.py): a confirmation, nothing to confirm, and what the timer did
CONFIRMED, NO_TRIAL, REVERTED, REVERT_FAILED = ("confirmed", "no-trial", "reverted", "revert-failed")

# `dshctl reload` exit codes (docs/host.md); 6 (no host) is decided by the client.
EXIT_CODES = {APPLIED: 0, UNCHANGED: 0, REJECTED: 4, ROLLED_BACK: 5, ROLLBACK_FAILED: 1,
              CONFIRMED: 0, NO_TRIAL: 4, REVERTED: 0, REVERT_FAILED: 1}
EXIT_NO_HOST = 6
CHANGES = ("started", "restarted", "updated", "stopped", "disabled")


def error_json(err: BaseException) -> dict:
    if isinstance(err, DshctlError):
        return {"message": err.message, "loc": str(err.loc) if err.loc else None, "hint": err.hint}
    return {"message": f"{type(err).__name__}: {err}", "loc": None, "hint": None}


@dataclass
class ReloadOutcome:
    verdict: str
    trigger: str
    files: list = field(default_factory=list)
    rows: list = field(default_factory=list)      # RowOutcome.to_json() of the loader, per row
    errors: list = field(default_factory=list)    # error_json(...) items
    warnings: list = field(default_factory=list)
    at: float = field(default_factory=time.time)
    duration_ms: float = 0.0
    digest: str | None = None                     # of the tree running afterwards
    note: str | None = None                       # context for the summary, e.g. who applied it first
    trial: dict | None = None                     # a trial this reload started (trial.PendingTrial)

    @property
    def ok(self) -> bool:
        return self.verdict in (APPLIED, UNCHANGED, CONFIRMED, REVERTED)

    def summary(self) -> str:
        clock = time.strftime("%H:%M", time.localtime(self.at))
        if self.verdict == APPLIED:
            changed = [r for r in self.rows if r.get("action") in CHANGES]
            if self.trial is not None:
                until = self.trial["deadline"][11:19]
                return (f"reload applied on trial at {clock}: {len(changed)} row(s) changed; it reverts at "
                        f"{until} unless `dshctl reload --confirm` comes first")
            return f"reload applied at {clock}: {len(changed)} row(s) changed"
        if self.verdict == CONFIRMED:
            return f"trial confirmed at {clock}: the running tree is now the last-good record"
        if self.verdict == NO_TRIAL:
            return f"nothing to confirm at {clock}: no trial is pending"
        if self.verdict == REVERTED:
            return f"trial reverted at {clock} ({self.note}): the previous tree runs again"
        if self.verdict == REVERT_FAILED:
            return f"trial revert failed at {clock}: the trial tree is still running"
        if self.verdict == UNCHANGED:
            return f"reload at {clock}: nothing changed" + (f" ({self.note})" if self.note else "")
        if self.verdict == ROLLBACK_FAILED:
            return f"reload failed at {clock} and its rollback failed: the tree may be partly changed"
        how = "rolled back" if self.verdict == ROLLED_BACK else "rejected"
        return f"reload failed at {clock} ({how}): old tree still running"

    def to_json(self) -> dict:
        return {"verdict": self.verdict, "exit_code": EXIT_CODES[self.verdict], "summary": self.summary(),
                "trigger": self.trigger, "at": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(self.at)),
                "duration_ms": round(self.duration_ms, 2), "files": [str(f) for f in self.files],
                "rows": self.rows, "errors": self.errors, "warnings": self.warnings, "digest": self.digest,
                "note": self.note, "trial": self.trial}
