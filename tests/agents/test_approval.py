"""Approvals on a real host with the scripted model: dsh's ``ask`` decision through ``ctx.approval``,
the session's policy (``ask`` / ``never``) pinned and switched as events, the audit pair, an answerer
plugin, the front end attached to the turn, fail-closed with nobody there, permission presets and the
runtime-context snapshot the model reads."""
import json

from tests.agents.loop_rows import PROBE, agent_rows
from tests.host.helpers import InProcess, bundle_dir, make_home, run_async, write

CALL = [{"toolCalls": [{"name": "sleep_ex", "arguments": {"tag": "gated", "ms": 1}}]}, {"text": "ok"}]

ANSWERER = '''
name = "answerer"
schema = {"type": "object", "default": {}}
SEEN = []

def apply(ctx, config):
    async def answer(req, next_):
        SEEN.append({k: req.get(k) for k in ("toolName", "callId", "reason", "arguments")})
        return config["outcome"]
    ctx.on("approval/request", answer)
    ctx.provide("answerer", SEEN)
'''


def home_for(tmp_path, approval: dict, answerer: str | None = None, sandbox: dict | None = None):
    rows = agent_rows(CALL, probe={})
    rows += f'    - {json.dumps({"id": "approval", "name": "@dshctl/approval", "config": approval})}\n'
    if sandbox is not None:
        rows += f'    - {json.dumps({"id": "sandbox", "name": "@dshctl/sandbox", "config": sandbox})}\n'
    if answerer is not None:
        rows += f'    - {json.dumps({"id": "answerer", "name": "./plugins/answerer.py", "config": {"outcome": answerer}})}\n'
    home = make_home(tmp_path, rows)
    write(bundle_dir(home) / "plugins" / "probe.py", PROBE.lstrip())
    write(bundle_dir(home) / "plugins" / "answerer.py", ANSWERER.lstrip())
    return home


async def one_turn(host, prompt="go", ask_user=None):
    agent = await host.root.get("agents").open(None)
    if ask_user is not None:
        agent.ask_user = ask_user
    agent.followup(prompt)
    await agent.when_idle()
    return agent


def tool_text(agent) -> str:
    result = next(e for e in agent.session.events if e["type"] == "tool/result")["data"]["message"]["content"][0]
    return result["content"][0]["text"]


def of(agent, kind):
    return [e["data"] for e in agent.session.events if e["type"] == kind]


@run_async()
async def test_ask_with_nobody_answering_fails_closed(tmp_path):
    async with InProcess(home_for(tmp_path, {"ask": ["sleep_*"]})) as host:
        agent = await one_turn(host)
        assert tool_text(agent) == 'Error: tool "sleep_ex" requires approval, but no approval channel is available'
        assert "gated" not in host.root.get("probe")                   # the tool never ran
        asked, decided = of(agent, "approval/asked"), of(agent, "approval/decided")
        assert len(asked) == 1 and asked[0]["toolName"] == "sleep_ex" and asked[0]["callId"]
        assert decided == [{"id": asked[0]["id"], "outcome": "unavailable"}]
        assert of(agent, "approval/policy") == [{"policy": "ask"}]   # pinned before the first request


@run_async()
async def test_never_rejects_without_asking_anyone(tmp_path):
    async with InProcess(home_for(tmp_path, {"ask": ["sleep_*"], "policy": "never"}, answerer="allowed-once")) as host:
        agent = await one_turn(host)
        assert tool_text(agent) == 'Error: the user rejected tool "sleep_ex"'
        assert host.root.get("answerer") == [] and "gated" not in host.root.get("probe")
        assert [d["outcome"] for d in of(agent, "approval/decided")] == ["rejected"]


@run_async()
async def test_an_answerer_plugin_grants_one_call(tmp_path):
    async with InProcess(home_for(tmp_path, {"ask": ["sleep_ex"]}, answerer="allowed-once")) as host:
        agent = await one_turn(host)
        assert tool_text(agent) == "slept gated" and "gated" in host.root.get("probe")
        seen = host.root.get("answerer")
        assert seen[0]["toolName"] == "sleep_ex" and seen[0]["arguments"] == {"tag": "gated", "ms": 1}


@run_async()
async def test_a_rogue_answer_is_unavailable(tmp_path):
    async with InProcess(home_for(tmp_path, {"ask": ["sleep_ex"]}, answerer="yes please")) as host:
        agent = await one_turn(host)
        assert [d["outcome"] for d in of(agent, "approval/decided")] == ["unavailable"]


@run_async()
async def test_the_front_end_answers_deny_and_the_model_is_told(tmp_path):
    questions = []

    async def user(question):
        questions.append(question)
        return {"option": "deny"}
    async with InProcess(home_for(tmp_path, {"ask": ["sleep_ex"]})) as host:
        agent = await one_turn(host, ask_user=user)
        assert tool_text(agent) == 'Error: the user rejected tool "sleep_ex"'
        assert "gated" not in host.root.get("probe")
        assert questions[0]["question"].startswith('Allow the call sleep_ex({"ms": 1, "tag": "gated"})?')
        assert [o["label"] for o in questions[0]["options"]] == ["allow once", "deny"]
        # the model's next request carried the refusal
        request = host.root.get("llm").requests[-1]
        assert 'the user rejected tool \\"sleep_ex\\"' in json.dumps(request.messages)


@run_async()
async def test_a_preset_pins_both_knobs_and_the_model_reads_the_policy(tmp_path):
    home = home_for(tmp_path, {"defaultPreset": "workspace-write"}, sandbox={"mode": "read-only"})
    async with InProcess(home) as host:
        agent = await one_turn(host)
        assert of(agent, "permission/preset") == [{"preset": "workspace-write"}]
        assert of(agent, "sandbox/mode") == [{"mode": "workspace-write"}]
        assert of(agent, "approval/policy") == [{"policy": "ask"}]
        snapshot = [m for m in of(agent, "user/message")
                    if m["source"].get("plugin") == "@deepseek-ai/dsh-system-prompt"]
        assert len(snapshot) == 1                          # two requests, one unchanged snapshot
        text = snapshot[0]["content"][0]["text"]
        assert text.startswith("Current runtime context. This snapshot supersedes earlier runtime-context "
                               "snapshots.\n\nCurrent DSH file policy: workspace-write.")
        assert text.endswith("Approval policy: ask. Operations that require approval may ask through the "
                             "configured answerers; without an available answerer, the request fails closed.")
        first = host.root.get("llm").requests[0]
        assert any("Current DSH file policy: workspace-write" in json.dumps(m) for m in first.messages)

        approval = host.root.get("approval")
        approval.set_policy(agent, "never")
        agent.followup("again")
        await agent.when_idle()
        notices = [m["content"][0]["text"] for m in of(agent, "user/message")]
        assert 'The approval policy changed from "ask" to "never" (changed by the user).' in notices
        assert any(t.endswith("do not request sandbox escalation (do not set `sandbox_permissions`).")
                   for t in notices)


@run_async()
async def test_the_permission_command_switches_the_preset_and_never_reaches_the_model(tmp_path):
    home = home_for(tmp_path, {"defaultPreset": "workspace-write", "ask": ["sleep_ex"]}, sandbox={})
    async with InProcess(home) as host:
        agent = await one_turn(host)                           # asks: nobody there, refused
        agent.followup("/permission danger-full-access")
        await agent.when_idle()
        assert of(agent, "permission/preset")[-1] == {"preset": "danger-full-access"}
        assert of(agent, "sandbox/mode")[-1] == {"mode": "danger-full-access"}
        assert of(agent, "approval/policy")[-1] == {"policy": "never"}
        texts = [b.get("text", "") for m in of(agent, "user/message") for b in m["content"]]
        assert not any(t.startswith("/permission") for t in texts)
