"""The Team lives in the Lead's log as dsh keeps it: after dshctl's end-to-end team of two (roster,
board, mailbox), dsh's own JSONL persistence reads the Lead's session and dsh's ``foldTeam`` replays it
without complaint into the same members, tasks, messages and acknowledgements as dshctl's fold."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

from dshctl.agents.session.store import SessionStore
from dshctl.agents.teams.fold import fold_team
from tests.agents.team_helpers import team_home
from tests.agents.test_teams import REPLIES, build_the_thing
from tests.host.helpers import InProcess

DRIVER = Path(__file__).with_name("team_fold_driver.mts")


async def lead_of_a_team(home) -> str:
    async with InProcess(home) as host:
        return (await build_the_thing(host)).id


def test_dsh_folds_the_team_dshctl_wrote_into_the_same_state(real_dsh, tmp_path):
    home = team_home(tmp_path, REPLIES)
    lead = asyncio.run(asyncio.wait_for(lead_of_a_team(home), 60))
    store = SessionStore(home)
    done = real_dsh.node_script(DRIVER, str(store.root), lead)
    assert done.returncode == 0, done.stderr[-3000:]
    theirs = json.loads(done.stdout)
    assert "error" not in theirs, theirs
    ours = fold_team(lead, store.read(lead).events)
    assert theirs["members"] == list(ours.members.values())
    assert theirs["tasks"] == list(ours.tasks.values())
    assert theirs["messages"] == list(ours.messages.values())
    assert sorted(theirs["delivered"]) == sorted(ours.delivered)
    assert theirs["nextTaskNumber"] == ours.next_task == 3
    assert [m["phase"] for m in theirs["members"]] == ["active", "active"]
    assert [t["status"] for t in theirs["tasks"]] == ["completed", "completed"] and len(theirs["delivered"]) == 2
