"""``@dshctl/code-mode`` on a real host with the scripted model: run_code offered through the tools
registry (only this plugin may register it), the SDK in the logged system prompt, sub-calls through the
same pipeline as direct calls (logged as tool/code-dispatch-start / tool/code-dispatch, out of the
model's history), parallel-safe sub-calls overlapping, and unload of the row killing a live run."""
import asyncio
import contextlib
import json

import pytest

from dshctl.agents.session.history import derive_history
from dshctl.host.plugins.tools import ToolError, ToolRegistry
from dshctl.runtime import Context
from tests.agents.loop_rows import PROBE, agent_rows
from tests.agents.codemode_helpers import live_descendants
from tests.host.helpers import InProcess, bundle_dir, make_home, run_async, write

GATE = '''
name = "gate"
schema = {"type": "object", "default": {}}
SEEN = []

def apply(ctx, config):
    async def pre(exec_, next_):
        SEEN.append((exec_["name"], exec_["origin"], exec_["callId"]))
        if exec_["name"] == "sleep_ex" and exec_["arguments"].get("tag") == "denied":
            return {"kind": "deny", "reason": "gate says no"}
        return await next_()
    ctx.on("tools/pre-execute", pre)
    ctx.provide("gate", SEEN)
'''


def code_home(tmp_path, replies, code_mode=None):
    rows = agent_rows(replies, probe={}, loop={"system": "Be brief."})
    rows += f'    - {json.dumps({"id": "code-mode", "name": "@dshctl/code-mode", "config": code_mode or {"wallSeconds": 20}})}\n'
    rows += '    - {"id": "gate", "name": "./plugins/gate.py"}\n'
    home = make_home(tmp_path, rows)
    write(bundle_dir(home) / "plugins" / "probe.py", PROBE.lstrip())
    write(bundle_dir(home) / "plugins" / "gate.py", GATE.lstrip())
    return home


def run_code(code: str) -> dict:
    return {"name": "run_code", "arguments": {"code": code, "description": "Probe the tools"}}


PROGRAM = """import asyncio
a, b = await asyncio.gather(tools.sleep_par({"tag": "a", "ms": 300}), tools.sleep_par({"tag": "b", "ms": 300}))
try:
    await tools.sleep_ex({"tag": "denied"})
except ToolCallError as e:
    print("refused:", e.toolName)
print(a, b)
return {"done": True}"""


@contextlib.asynccontextmanager
async def spinning(tmp_path):
    """A host whose agent is inside a run_code that never ends; yields (host, agent, the worker's pids)."""
    home = code_home(tmp_path, [{"toolCalls": [run_code("import time\nwhile True:\n    time.sleep(0.05)")]},
                                {"text": "after"}])
    async with InProcess(home) as host:
        agent = await host.root.get("agents").open(None)
        agent.followup("spin")
        running: set = set()
        for _ in range(1000):
            running = set(live_descendants()) - pool_of(host).idle_pids()
            if running and any(e["type"] == "tool/call" for e in agent.session.events):
                break
            await asyncio.sleep(0.02)
        assert running, "the worker should be running"
        yield host, agent, running


def pool_of(host):
    return host.root.get("tools").view()["run_code"]["pool"]


async def one_turn(host, prompt):
    agent = await host.root.get("agents").open(None)
    agent.followup(prompt)
    await agent.when_idle()
    return agent


@run_async()
async def test_run_code_end_to_end_on_the_scripted_model(tmp_path):
    home = code_home(tmp_path, [{"toolCalls": [run_code(PROGRAM)]}, {"text": "All done."}])
    async with InProcess(home) as host:
        agent = await one_turn(host, "probe twice in parallel")
        events = agent.session.events
        header = next(e for e in events if e["type"] == "request/header")["data"]["header"]
        assert "run_code" in [t["name"] for t in header["tools"]]
        assert "async def sleep_par(self, args: SleepParArgs) -> str:" in header["system"]
        assert "class SleepParArgs(TypedDict):" in header["system"]
        requests = host.root.get("llm").requests
        assert requests[0].system == header["system"]      # the model saw exactly what the log holds
        assert header["system"].startswith("Be brief.\n\n## Writing code for run_code\n")
        assert [r.system for r in requests] == [header["system"]] * 2     # replaced per step, never stacked

        result = next(e for e in events if e["type"] == "tool/result")["data"]["message"]["content"][0]
        text = result["content"][0]["text"]
        lines = text.split("\n")
        assert lines[0] == "refused: sleep_ex" and lines[1].startswith("slept a") and " slept b" in lines[1]
        assert lines[2:] == ["{", '  "done": true', "}"], text
        starts = [e["data"] for e in events if e["type"] == "tool/code-dispatch-start"]
        settles = [e["data"] for e in events if e["type"] == "tool/code-dispatch"]
        outer = next(e for e in events if e["type"] == "tool/call")["data"]["callId"]
        assert [s["subCallId"] for s in starts] == [f"{outer}:code:{n}" for n in (1, 2, 3)]
        assert {s["subCallId"] for s in settles} == {s["subCallId"] for s in starts}
        denied = next(s for s in settles if s["name"] == "sleep_ex")
        assert denied["isError"] is True and "gate says no" in denied["content"][0]["text"]
        assert all(s["rootCallId"] == s["parentCallId"] == outer for s in starts + settles)
        # The same pipeline as direct calls: the gate saw each sub-call, with origin "code".
        seen = host.root.get("gate")
        assert [(n, o) for n, o, _ in seen] == [("run_code", "model"), ("sleep_par", "code"),
                                                ("sleep_par", "code"), ("sleep_ex", "code")]
        spans = host.root.get("probe")
        (s1, e1), (s2, e2) = spans["a"], spans["b"]
        assert s1 < e2 and s2 < e1                          # parallel-safe sub-calls overlapped
        # Only the outer result is history: no sub-call output reaches the model.
        history = json.dumps(derive_history(events))
        assert "code-dispatch" not in history and history.count("slept a") == 1
        assert [e["data"]["reason"] for e in events if e["type"] == "turn/end"] == [{"kind": "completed"}]


@run_async()
async def test_a_failing_program_is_an_error_result_the_model_sees(tmp_path):
    home = code_home(tmp_path, [{"toolCalls": [run_code("print('before')\nx = 1 / 0")]}, {"text": "oops"}])
    async with InProcess(home) as host:
        agent = await one_turn(host, "go")
        result = next(e for e in agent.session.events if e["type"] == "tool/result")["data"]["message"]["content"][0]
        assert result["isError"] is True
        text = result["content"][0]["text"]
        assert text.startswith("code run failed (exception): Traceback")
        assert 'File "<run_code>", line 2' in text and text.endswith("Captured output:\nbefore")


@run_async()
async def test_abort_of_the_turn_kills_the_worker(tmp_path):
    async with spinning(tmp_path) as (host, agent, running):
        agent.abort()
        await agent.when_idle()
        assert running and not running & set(live_descendants())
        assert set(live_descendants()) == pool_of(host).idle_pids()      # only the next run's worker waits
        assert [e["data"]["reason"]["kind"] for e in agent.session.events if e["type"] == "turn/end"] == ["aborted"]


@run_async()
async def test_unloading_the_row_stops_a_live_run(tmp_path):
    async with spinning(tmp_path) as (host, agent, running):
        import dshctl.agents.codemode.plugin as module
        code_mode = next(iter(host.root.registry.get(module).fibers))
        pool = pool_of(host)
        await code_mode.dispose()
        await agent.when_idle()
        assert live_descendants() == [] and pool.idle == []      # the waiting worker went too
        result = next(e for e in agent.session.events if e["type"] == "tool/result")["data"]["message"]["content"][0]
        assert "code run failed (abort): Code Mode was unloaded" in result["content"][0]["text"]
        assert "run_code" not in agent.tool_view()


def test_only_the_code_mode_plugin_may_register_run_code():
    async def main():
        ctx = Context()
        registry = ToolRegistry()
        with pytest.raises(ToolError, match="reserved"):
            registry.register(ctx, "run_code", {"execute": lambda a, r: "x"})
        with pytest.raises(ToolError, match="reserved for the Code Mode transport"):
            registry.register_transport(ctx, "run_code", {"execute": lambda a, r: "x"})
        import dshctl.agents.codemode.plugin as code_mode
        fake = type(code_mode)("dshctl.agents.codemode.plugin")
        fake.apply = lambda ctx, config: registry.register_transport(ctx, "run_code", {})
        fiber = ctx.plugin(fake)
        await asyncio.sleep(0.05)
        assert fiber.error is not None and "reserved" in str(fiber.error)
    asyncio.run(main())


CODER_PRESET = """\
- id: tools
  name: "@dshctl/tools"
- id: code-mode
  name: "@dshctl/code-mode"
  config: {wallSeconds: 20, prestart: 0}
"""


@run_async()
async def test_a_preset_row_offers_code_mode_to_that_presets_agents_only(tmp_path):
    rows = agent_rows([{"toolCalls": [run_code("return await tools.sleep_par({'tag': 'p', 'ms': 1})")]},
                       {"text": "ok"}], probe={}) + \
        '    - {"id": "agent-presets", "name": "@dshctl/agent-presets", "config": {"default": "standard"}}\n'
    home = make_home(tmp_path, rows)
    write(bundle_dir(home) / "plugins" / "probe.py", PROBE.lstrip())
    write(home / ".agent-presets" / "coder" / "agent.cordis.yml", CODER_PRESET)
    async with InProcess(home) as host:
        agents = host.root.get("agents")
        coder = await agents.open(preset="coder")
        plain = await agents.open()
        assert "run_code" in coder.tool_view() and "run_code" not in plain.tool_view()
        coder.followup("go")
        await coder.when_idle()
        header = next(e for e in coder.session.events if e["type"] == "request/header")["data"]["header"]
        assert header["system"].count("## Writing code for run_code") == 1
        result = next(e for e in coder.session.events if e["type"] == "tool/result")["data"]["message"]["content"][0]
        assert result.get("isError") is not True and result["content"][0]["text"].startswith("slept p")
        plain.followup("hello")
        await plain.when_idle()
        plain_header = next(e for e in plain.session.events if e["type"] == "request/header")["data"]["header"]
        assert "run_code" not in (plain_header.get("system") or "")
        assert "run_code" not in [t["name"] for t in plain_header.get("tools", [])]
