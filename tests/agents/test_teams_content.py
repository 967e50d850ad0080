"""Property tests of the Team message content check (``teams/content.py``): any content built from
dsh's block union is accepted, at any nesting depth; breaking one field of one core block anywhere in
it (dropping it, giving it a value of another kind, or adding a key the variant does not have) makes the
whole message refused by the fold, with dsh's wording. Sending measures a message's size as dsh does
(UTF-8 of the compact JSON) and refuses, before anything is logged, content the fold would refuse."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from dshctl.agents.teams.content import CORE_TYPES, valid_blocks
from dshctl.agents.teams.board import TeamError
from dshctl.agents.teams.fold import TeamLogError, fold_team
from tests.agents.team_helpers import team_home
from tests.host.helpers import InProcess, run_async

text = st.text(max_size=8)
non_empty = st.text(min_size=1, max_size=8)
attachment = st.fixed_dictionaries(
    {"attachmentId": non_empty, "mediaType": st.sampled_from(["image/png", "image/jpeg", "image/webp", "image/gif"]),
     "bytes": st.integers(0, 2 ** 53 - 1), "width": st.integers(1, 4096), "height": st.integers(1, 4096)},
    optional={"name": text})
leaf = st.one_of(
    st.fixed_dictionaries({"type": st.sampled_from(["text", "reasoning"]), "text": text}),
    st.fixed_dictionaries({"type": st.just("image"), "attachment": attachment}),
    st.fixed_dictionaries({"type": st.just("tool-call"), "id": non_empty, "name": text, "arguments": text}),
    st.builds(lambda kind, extra: {**extra, "type": kind},
              non_empty.filter(lambda t: t not in CORE_TYPES), st.dictionaries(text, st.integers(), max_size=2)))
blocks = st.recursive(st.lists(leaf, max_size=3), lambda inner: st.lists(st.one_of(leaf, st.fixed_dictionaries(
    {"type": st.just("tool-result"), "toolCallId": non_empty, "content": inner},
    optional={"isError": st.booleans()})), max_size=3), max_leaves=8)


def queued(content) -> list[dict]:
    return [{"seq": 1, "type": "team/message/queued", "data": {"version": 1, "teamId": "lead", "message": {
        "id": "m-1", "senderId": "lead", "senderName": "lead", "targetId": "t-1", "delivery": "quiet",
        "content": content}}}]


def core_blocks(content, path=()):
    """Paths (list indexes and ``content`` steps) of every core block in ``content``."""
    for i, block in enumerate(content):
        if block["type"] in CORE_TYPES:
            yield (*path, i)
        if block["type"] == "tool-result":
            yield from core_blocks(block["content"], (*path, i, "content"))


def at(content, path):
    node = content
    for step in path:
        node = node[step]
    return node


WRONG = [None, True, 1.5, -1, [], {}, ""]


@settings(max_examples=200, deadline=None)
@given(blocks)
def test_any_content_of_the_block_union_is_accepted(content):
    assert valid_blocks(content)
    fold_team("lead", queued(content))


@settings(max_examples=300, deadline=None)
@given(blocks, st.data())
def test_one_broken_field_of_one_core_block_refuses_the_message(content, data):
    paths = list(core_blocks(content))
    if not paths:
        content, paths = [*content, {"type": "text", "text": "x"}], [(len(content),)]
    block = at(content, data.draw(st.sampled_from(paths)))
    fields = sorted(set(block) - {"type"})
    how = data.draw(st.sampled_from(["drop", "extra", "retype"]))
    key = data.draw(st.sampled_from(fields))
    if how == "drop" and key != "isError":          # isError is optional: dropping it is fine
        del block[key]
    elif how == "retype":
        fits = {"text": str, "name": str, "arguments": str, "isError": bool, "content": list}
        block[key] = data.draw(st.sampled_from([w for w in WRONG if not isinstance(w, fits.get(key, ()))]))
    else:
        block["surplus"] = 1
    assert not valid_blocks(content)
    with pytest.raises(TeamLogError, match="^persisted Agent Teams team/message/queued payload is invalid$"):
        fold_team("lead", queued(content))


@run_async()
async def test_sending_measures_bytes_as_dsh_and_refuses_blocks_the_fold_would_refuse(tmp_path):
    limit = 2000
    replies = [{"when": "stand by", "text": "standing by"}, *({"text": "ok"} for _ in range(4))]
    async with InProcess(team_home(tmp_path, replies, team_config={"maxMessageBytes": limit})) as host:
        lead = await host.root.get("agents").open()
        teams = host.root.get("agentTeams")
        await teams.spawn_teammate(lead, {"name": "gamma", "description": "helper", "provider": "spawn",
                                          "prompt": [{"type": "text", "text": "stand by"}]})
        frame = {"type": "text", "text": f"Team message team-message-{'0' * 36} from lead:"}
        room = limit - len(json.dumps([frame, {"type": "text", "text": ""}], separators=(",", ":"),
                                      ensure_ascii=False).encode())

        async def send(content):
            return await teams.send_message(lead, {"target": "gamma", "delivery": "quiet", "content": content})
        fits = "é" * (room // 2) + "e" * (room % 2)             # exactly the limit, in UTF-8
        sent = await send([{"type": "text", "text": fits}])
        assert sent["status"] in ("accepted", "queued")
        with pytest.raises(TeamError, match=f"^team message exceeds {limit} bytes$"):
            await send([{"type": "text", "text": fits + "e"}])
        def queued_count():
            return sum(e["type"] == "team/message/queued" for e in lead.session.events)
        before = queued_count()
        for bad in ([{"type": "text", "text": "x", "extra": 1}], [{"type": "image"}], "text"):
            with pytest.raises(TeamError, match="content must be a list of valid content blocks"):
                await send(bad)
        assert queued_count() == before == 1           # nothing more was queued
        fold_team(lead.id, lead.session.events)         # and the Lead's log still folds
