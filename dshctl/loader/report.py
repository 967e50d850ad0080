"""What one mount or update did to each row: the data ``dshctl reload`` renders."""
from __future__ import annotations

from dataclasses import dataclass, field

from dshctl.errors import Loc

ACTIONS = ("started", "restarted", "updated", "stopped", "unchanged", "disabled", "failed",
           "skipped", "rolled-back")


@dataclass
class RowOutcome:
    full_id: str
    name: str
    action: str
    reason: str | None = None
    loc: Loc | None = None

    def to_json(self) -> dict:
        out = {"id": self.full_id, "name": self.name, "action": self.action}
        if self.reason is not None:
            out["reason"] = self.reason
        if self.loc is not None:
            out["loc"] = str(self.loc)
        return out


@dataclass
class UpdateReport:
    rows: list[RowOutcome] = field(default_factory=list)   # every row the update acted on
    error: str | None = None
    unchanged: list[str] = field(default_factory=list)    # full ids of rows left as they were

    @property
    def ok(self) -> bool:
        return self.error is None and not any(r.action == "failed" for r in self.rows)

    def add(self, outcome: RowOutcome) -> None:
        self.rows.append(outcome)

    def by_action(self, action: str) -> list[RowOutcome]:
        return [r for r in self.rows if r.action == action]

    def action_of(self, full_id: str) -> str | None:
        for r in self.rows:
            if r.full_id == full_id:
                return r.action
        return "unchanged" if full_id in self.unchanged else None

    def to_json(self) -> dict:
        return {"ok": self.ok, "error": self.error, "rows": [r.to_json() for r in self.rows],
                "unchanged": list(self.unchanged)}
