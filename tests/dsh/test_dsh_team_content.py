"""A queued Team message's content blocks are checked as dsh's fold checks them. Every core block
variant, valid and then with each field removed, doubled by an extra key, or replaced by each value of
the wrong kind, nested inside a ``tool-result`` too, goes through real dsh's ``foldTeam`` and through
dshctl's fold: both accept the same ones, and a refusal is worded the same."""
from __future__ import annotations

import copy
import json
from pathlib import Path

from dshctl.agents.teams.fold import TeamLogError, fold_team

DRIVER = Path(__file__).with_name("team_content_driver.mts")
LEAD = "lead-session"

IMAGE = {"attachmentId": "att-1", "mediaType": "image/png", "bytes": 10, "width": 2, "height": 3, "name": "a.png"}
VALID = [
    {"type": "text", "text": "hi"},
    {"type": "reasoning", "text": ""},
    {"type": "image", "attachment": IMAGE},
    {"type": "tool-call", "id": "c1", "name": "", "arguments": "{}"},
    {"type": "tool-result", "toolCallId": "c1", "content": [{"type": "text", "text": "out"}], "isError": True},
    {"type": "plugin-widget", "anything": [1, {"x": None}]},
]
ODD_VALUES = [None, True, 0, -1, 1, 2.0, 2.5, 2 ** 53, "", "x", "image/bmp", [], {}, [{"type": "text"}]]


def mutants(block: dict) -> list:
    out = [block, {**block, "extra": 1}]
    for key in block:
        out.append({k: v for k, v in block.items() if k != key})
        out.extend({**block, key: odd} for odd in ODD_VALUES)
    if "attachment" in block:
        out.extend({**block, "attachment": sub} for sub in mutants(block["attachment"])[1:])
    return out


def cases() -> list:
    out = [[], [VALID[0], VALID[2]], "text", None, [None], [[]], [{"type": ""}], [{"type": 3}], [{}]]
    for block in VALID:
        out.extend([m] for m in mutants(block))
    for inner in mutants(VALID[3])[:20]:           # a bad block nested in a tool result is refused too
        out.append([{"type": "tool-result", "toolCallId": "c1", "content": [inner]}])
    return out


def ours(content) -> str | None:
    event = {"seq": 1, "type": "team/message/queued", "data": {"version": 1, "teamId": LEAD, "message": {
        "id": "team-message-0", "senderId": LEAD, "senderName": "lead", "targetId": "member-session",
        "delivery": "quiet", "content": copy.deepcopy(content)}}}
    try:
        fold_team(LEAD, [event])
    except TeamLogError as exc:
        return str(exc)
    return None


def test_content_blocks_are_accepted_and_refused_exactly_as_dsh_does(real_dsh, tmp_path):
    candidates = cases()
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(candidates))
    done = real_dsh.node_script(DRIVER, str(path))
    assert done.returncode == 0, done.stderr[-3000:]
    theirs = json.loads(done.stdout)
    mine = [ours(c) for c in candidates]
    differ = [(c, t, m) for c, t, m in zip(candidates, theirs, mine) if t != m]
    assert differ == []
    accepted = sum(t is None for t in theirs)
    assert 10 <= accepted < len(candidates) - 100     # both outcomes are well represented
    assert set(theirs) - {None} == {"persisted Agent Teams team/message/queued payload is invalid"}
