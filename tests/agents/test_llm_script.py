"""The scripted model and the assembler: replies replayed in order, as a real model streams them."""
from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import given, strategies as st

from dshctl.agents.llm.api import GenerateOptions
from dshctl.agents.llm.assemble import assemble
from dshctl.agents.llm.script import EXHAUSTED, ScriptError, ScriptedModel, load_script
from dshctl.loader import Loader

from tests.agents.llm_helpers import collect_aborting_at_first_delta


def _options(**kw):
    return GenerateOptions(provider="script", model="m", messages=[], **kw)


async def _collect(model, **kw):
    return [c async for c in model.stream(_options(**kw))]


def test_replies_in_order_then_exhausted():
    model = ScriptedModel([
        {"text": "let me look", "reasoning": "think", "toolCalls": [{"name": "read_file", "arguments": {"path": "a"}}]},
        {"text": "done", "finish": "length"},
    ])

    async def run():
        return [await _collect(model) for _ in range(3)]
    first, second, third = asyncio.run(run())
    reply = assemble(first)
    assert [b["type"] for b in reply.blocks] == ["reasoning", "text", "tool-call"]
    assert reply.tool_calls[0]["name"] == "read_file"
    assert json.loads(reply.tool_calls[0]["arguments"]) == {"path": "a"}
    assert reply.finish == {"kind": "tool-calls"}
    assert assemble(second).finish == {"kind": "max-tokens"}
    assert assemble(third).text == EXHAUSTED
    # usage comes before the terminal finish, and nothing follows it
    assert [c["type"] for c in first][-2:] == ["usage", "finish"]


def test_abort_ends_with_an_aborted_finish():
    model = ScriptedModel([{"text": "a long answer " * 5, "delayMs": 400}])
    abort = asyncio.Event()
    chunks = asyncio.run(collect_aborting_at_first_delta(model.stream(_options(abort=abort)), abort))
    assert chunks[-1]["type"] == "finish" and chunks[-1]["reason"]["kind"] == "aborted"
    assert chunks[-1]["reason"]["failure"]["code"] == "ABORTED"


def test_assembler_block_end_wins_and_max_tokens_drops_calls():
    chunks = [
        {"type": "block-start", "index": 0, "blockType": "text"},
        {"type": "text-delta", "index": 0, "text": "par"},
        {"type": "block-end", "index": 0, "block": {"type": "text", "text": "final"}},
        {"type": "text-delta", "index": 0, "text": "straggler"},
        {"type": "tool-call-delta", "index": 1, "id": "c", "name": "x", "argumentsDelta": '{"a":'},
        {"type": "finish", "reason": {"kind": "max-tokens"}},
    ]
    reply = assemble(chunks)
    assert reply.blocks == [{"type": "text", "text": "final"}]
    assert assemble(chunks[:-1]).blocks[1] == {"type": "tool-call", "id": "c", "name": "x", "arguments": '{"a":'}
    assert assemble([]).finish == {"kind": "stop"}


@given(st.lists(st.text(max_size=8), min_size=1, max_size=12), st.lists(st.text(max_size=6), max_size=8))
def test_assembled_text_and_arguments_are_the_concatenated_deltas(texts, args):
    chunks = [{"type": "text-delta", "index": 0, "text": t} for t in texts]
    chunks += [{"type": "tool-call-delta", "index": 1, "id": "c", "argumentsDelta": a} for a in args]
    reply = assemble(chunks)
    assert reply.blocks[0]["text"] == "".join(texts)
    if args:
        assert reply.blocks[1]["arguments"] == "".join(args)


def test_script_file_relative_to_the_declaring_file(tmp_path):
    (tmp_path / "replies.yml").write_text("- text: hello from the file\n- toolCalls: [{name: t, arguments: '{}'}]\n")
    (tmp_path / "cordis.yml").write_text("- id: llm\n  name: '@dshctl/llm-script'\n  config: {script: replies.yml}\n")
    from dshctl.core.yaml.dialect import load_yaml

    async def run():
        loader = Loader(home=tmp_path)
        rows = load_yaml((tmp_path / "cordis.yml").read_text(), str(tmp_path / "cordis.yml")).value
        await loader.start(rows, base_dir=tmp_path)
        llm = loader.root_ctx.get("llm")
        first = assemble(await _collect(llm))
        await loader.stop()
        return llm, first
    llm, first = asyncio.run(run())
    assert llm.provider == "script" and first.text == "hello from the file"


def test_a_bad_script_is_a_located_error(tmp_path):
    bad = tmp_path / "s.yml"
    bad.write_text("- text: ok\n- toolCalls: [{arguments: {}}]\n")
    with pytest.raises(ScriptError, match=r"s.yml:2:\d+: reply 2: 'name' is a required property"):
        load_script(bad)
    bad.write_text("text: not a list\n")
    with pytest.raises(ScriptError, match="a script is a list of replies"):
        load_script(bad)
