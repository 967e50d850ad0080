"""dshctl's thinking / reasoning_effort / max_tokens against dsh's own serializer
(``packages/llm/llm-deepseek/src/serialize.ts``), for every combination of the row's defaults and a
request's effort."""
from __future__ import annotations

import itertools
import json

from dshctl.agents.llm.api import GenerateOptions
from dshctl.agents.llm.openai_wire import request_body

SCRIPT = """
import { serializeRequest } from '%s/packages/llm/llm-deepseek/src/serialize.ts'
const cases = JSON.parse(process.argv[2])
const out = cases.map(([thinking, effort, requestEffort, maxTokens]) => {
  const options = { provider: 'deepseek', model: 'm', messages: [],
    ...(requestEffort === null ? {} : { reasoningEffort: requestEffort }),
    ...(maxTokens === null ? {} : { maxTokens }) }
  const defaults = { ...(thinking === null ? {} : { thinking }), ...(effort === null ? {} : { reasoningEffort: effort }) }
  try {
    const body = serializeRequest(options, defaults)
    return { thinking: body.thinking ?? null, reasoning_effort: body.reasoning_effort ?? null, max_tokens: body.max_tokens ?? null }
  } catch (error) { return { error: true } }
})
console.log(JSON.stringify(out))
"""

EFFORTS = [None, "off", "low", "high", "max"]
CASES = [list(c) for c in itertools.product([None, "enabled", "disabled"], EFFORTS, EFFORTS, [None, 4096])]


def ours(thinking, effort, request_effort, max_tokens):
    extra = {} if request_effort is None else {"reasoningEffort": request_effort}
    options = GenerateOptions(provider="deepseek", model="m", messages=[], max_tokens=max_tokens, extra=extra)
    try:
        body = request_body(options, effort=effort, thinking=thinking)
    except ValueError:
        return {"error": True}
    return {k: body.get(k) for k in ("thinking", "reasoning_effort", "max_tokens")}


def test_wire_settings_equal_dshs_serializer(real_dsh, tmp_path):
    script = tmp_path / "serialize.ts"
    script.write_text(SCRIPT % real_dsh.source)
    done = real_dsh.node_script(script, json.dumps(CASES), cwd=real_dsh.source)
    assert done.returncode == 0, done.stderr[-2000:]
    theirs = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(theirs) == len(CASES)
    assert any(t.get("error") for t in theirs) and any(t.get("reasoning_effort") for t in theirs)
    for case, expected in zip(CASES, theirs):
        assert ours(*case) == expected, case
