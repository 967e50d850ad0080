"""Property tests of the Team message content check (``teams/content.py``): any content built from
dsh's block union is accepted, at any nesting depth; breaking one field of one core block anywhere in
it (dropping it, giving it a value of another kind, or adding a key the variant does not have) makes the
whole message refused by the fold, with dsh's wording."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from dshctl.agents.teams.content import CORE_TYPES, valid_blocks
from dshctl.agents.teams.fold import TeamLogError, fold_team

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
