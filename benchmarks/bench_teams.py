"""Agent Teams: folding a Lead log into its Team, dshctl against dsh's own ``foldTeam``, and the cost of
one Team change as the log grows.

    .venv/bin/python benchmarks/bench_teams.py [--tasks 500] [--messages 500] [--rounds 5]

The log: 8 members (provisioning, active), ``--tasks`` tasks with four revisions each (create, claim,
edit, complete) and ``--messages`` messages (queued, delivered), interleaved as a busy Team writes
them. 1. A full fold: dshctl's ``fold_team`` (CPU time, ``time.process_time``) and dsh's ``foldTeam``
under dsh's own Node (``process.cpuUsage`` inside the process, so Node's start is not counted), in
interleaved rounds on the same events. 2. One change: ``TeamService.state`` after each appended
event, which is what every Team tool call reads. dshctl applies only the new events; refolding the
whole log per call (dsh's way) is timed beside it on the same Python fold.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dshctl.agents.teams.fold import fold_team  # noqa: E402
from dshctl.agents.teams.service import TeamService  # noqa: E402

LEAD = "session-00000000-0000-4000-8000-000000000000"
DRIVER = Path(__file__).with_name("team_fold_bench.mts")


def event(seq: int, kind: str, data: dict) -> dict:
    return {"type": kind, "seq": seq, "time": 1_700_000_000_000 + seq, "data": {"version": 1, "teamId": LEAD, **data}}


def lead_log(tasks: int, messages: int) -> list[dict]:
    out: list[dict] = []
    members = [f"0000000{n}-0000-4000-8000-000000000000" for n in range(8)]
    for n, mid in enumerate(members):
        member = {"id": mid, "name": f"member-{n}", "description": "d", "provider": "spawn", "context": "fresh"}
        for phase in ("provisioning", "active"):
            out.append(event(len(out), "team/member", {"member": {**member, "phase": phase}}))
    for n in range(1, max(tasks, messages) + 1):
        if n <= tasks:
            owner = members[n % 8]
            base = {"id": f"task-{n}", "subject": f"task {n}", "description": "work " * 20,
                    "blockedBy": [f"task-{n - 1}"] if n > 1 and n % 3 else [], "writeScopes": [f"src/m{n % 17}"]}
            for revision, status, extra in ((1, "pending", {}), (2, "in_progress", {"ownerId": owner}),
                                            (3, "in_progress", {"ownerId": owner}),
                                            (4, "completed", {"ownerId": owner})):
                out.append(event(len(out), "team/task", {"task": {**base, "revision": revision, "status": status,
                                                                  **extra}}))
        if n <= messages:
            message = {"id": f"team-message-{n}", "senderId": members[n % 8], "senderName": f"member-{n % 8}",
                       "targetId": LEAD, "delivery": "wakeup", "content": [{"type": "text", "text": "report " * 10}]}
            out.append(event(len(out), "team/message/queued", {"message": message}))
            out.append(event(len(out), "team/message/delivered", {"messageId": message["id"], "targetId": LEAD}))
    return out


def python_fold_ms(events: list[dict]) -> float:
    began = time.process_time()
    state = fold_team(LEAD, events)
    spent = (time.process_time() - began) * 1000
    assert state.tasks
    return spent


class _Session:
    def __init__(self):
        self.events: list[dict] = []


class _Root:
    def __init__(self):
        self.id, self.session = LEAD, _Session()


def per_change_ms(events: list[dict]) -> tuple[float, float]:
    """CPU ms for reading the Team after every appended event: incremental, then full refolds."""
    service = TeamService.__new__(TeamService)
    service.folds = {}
    root = _Root()
    began = time.process_time()
    for item in events:
        root.session.events.append(item)
        service.state(root)
    incremental = (time.process_time() - began) * 1000
    began = time.process_time()
    for n in range(1, len(events) + 1, 10):          # every tenth event, scaled up by ten
        fold_team(LEAD, events[:n])
    refold = (time.process_time() - began) * 1000 * 10
    return incremental, refold


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--messages", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    from tests.dsh.real_dsh import RealDsh, set_up
    dsh = RealDsh(set_up())
    events = lead_log(args.tasks, args.messages)
    ours, theirs = [], []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "events.json"
        path.write_text(json.dumps(events))
        python_fold_ms(events)                                       # warm-up
        for _ in range(args.rounds):                                 # interleaved: one of each per round
            ours.append(python_fold_ms(events))
            done = dsh.node_script(DRIVER, str(path), LEAD, "1")
            assert done.returncode == 0, done.stderr[-2000:]
            theirs.extend(json.loads(done.stdout)["cpuMs"])
    incremental, refold = per_change_ms(events)
    print(f"log: {len(events)} Team events ({args.tasks} tasks x 4 revisions, {args.messages} messages, 8 members)")
    print(f"full fold, CPU ms (median of {args.rounds}): dshctl {statistics.median(ours):.1f}  "
          f"dsh foldTeam {statistics.median(theirs):.1f}")
    print(f"reading the Team after each of the {len(events)} appends, CPU ms total: incremental {incremental:.0f}  "
          f"full refold each time {refold:.0f}  (per change at the end: "
          f"{incremental / len(events):.3f} vs {statistics.median(ours):.1f})")


if __name__ == "__main__":
    main()
