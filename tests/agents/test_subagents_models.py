"""Two models in one delegation: a second delegation tool row (``@dshctl/subagent-tool``, dsh's
``tool-subagent`` loaded once more under its own ``toolName``) carries its own child model. The parent,
served over real HTTP by an OpenAI-compatible server on 127.0.0.1, starts five background children in one
step, three on one model and two on the other; each child's request names its model, each child's log
records it, and the parent answers from the five notices. With a routed llm row (``provider: pro``,
``route: true``) the ``pro`` children reach their own model server. ``subagent_fork`` in the background
settles the same way."""
from __future__ import annotations

import json
import time

import pytest

from tests.agents.sse_server import Sse, SseServer, chunk
from tests.agents.subagent_helpers import notices
from tests.host.helpers import InProcess, make_home, run_async, until


def rows(server, pro_server=None, pro_adapter="@dshctl/llm-openai") -> str:
    """``pro_server``: the ``pro`` children's own model server (a routed llm row, provider ``pro``);
    without it they reach the default row's server under their model name."""
    pro_options = {"model": "pro", **({"provider": "pro"} if pro_server else {})}
    out = [{"id": "tools", "name": "@dshctl/tools"},
           {"id": "agents", "name": "@dshctl/agents"},
           {"id": "llm", "name": "@dshctl/llm-openai",
            "config": {"baseUrl": server.base_url, "model": "flash", "apiKey": "sk-test"}},
           {"id": "agent-loop", "name": "@dshctl/agent-loop"},
           {"id": "subagents", "name": "@dshctl/subagents"},
           {"id": "subagent-tools", "name": "@dshctl/subagent-tools", "config": {"agentOptions": {"model": "flash"}}},
           {"id": "subagent-pro", "name": "@dshctl/subagent-tool",
            "config": {"toolName": "subagent_pro", "agentOptions": pro_options}}]
    if pro_server is not None:
        out.append({"id": "llm-pro", "name": pro_adapter, "config": {
            "baseUrl": pro_server.base_url, "model": "pro", "apiKey": "sk-test", "provider": "pro", "route": True}})
    return "".join(f"    - {json.dumps(row)}\n" for row in out)


def text(content: str, delay: float = 0.0) -> Sse:
    return Sse([chunk({"role": "assistant", "content": content}), chunk(finish="stop"), "[DONE]"], delay=delay)


def tool_calls(calls: list[tuple[str, dict]]) -> Sse:
    deltas = [{"index": i, "id": f"call_{i}", "type": "function",
               "function": {"name": name, "arguments": json.dumps(args)}} for i, (name, args) in enumerate(calls)]
    return Sse([chunk({"role": "assistant", "tool_calls": deltas}), chunk(finish="tool_calls"), "[DONE]"])


def last_text(request: dict) -> str:
    content = request["body"]["messages"][-1].get("content") or ""
    return content if isinstance(content, str) else json.dumps(content)


def router(tasks: list[tuple[str, str]], parent_prompt: str):
    def route(request):
        body, last = request["body"], last_text(request)
        if not body.get("tools"):
            return text("Title")
        if last == parent_prompt:
            return tool_calls([(tool, {"description": f"job {t}", "prompt": t}) for tool, t in tasks])
        for _tool, task in tasks:
            if last.endswith(task):
                return text(f"answer to {task} from {body['model']}", delay=0.2)   # 0.6 s a child (three payloads)
        if "Background subagent" in last:
            return text("all answered")
        return text("noted")
    return route


TASKS = [("subagent", "task-a1"), ("subagent", "task-a2"), ("subagent", "task-a3"),
         ("subagent_pro", "task-b1"), ("subagent_pro", "task-b2")]


@pytest.mark.parametrize("pro_adapter", ["@dshctl/llm-openai", "@dshctl/llm-deepseek"])
@run_async()
async def test_five_children_on_two_models_each_reach_their_own_model_server(tmp_path, pro_adapter):
    with SseServer() as server, SseServer() as pro_server:
        server.route = pro_server.route = router(TASKS, "delegate five")
        home = make_home(tmp_path, rows(server, pro_server, pro_adapter))
        async with InProcess(home) as host:
            agent = await host.root.get("agents").open()
            agent.followup("delegate five")
            await until(lambda: len(notices(agent)) == 5 and agent.status == "idle", what="five notices", timeout=30)
            store = host.root.get("agents").store
            children = [i for i in store.list() if i.header.get("parentSession") == agent.id]
            models = sorted(next(e["data"]["header"]["config"]["model"] for e in store.read(i.id).events
                                 if e["type"] == "request/header") for i in children)
        flash = [last_text(r) for r in server.requests if r["body"].get("tools")]
        pro = [last_text(r) for r in pro_server.requests if r["body"].get("tools")]
        pro_models = {r["body"]["model"] for r in pro_server.requests}
    assert models == ["flash", "flash", "flash", "pro", "pro"]
    assert sorted(t for t in pro if t.startswith("task-")) == ["task-b1", "task-b2"] and pro_models == {"pro"}
    assert sorted(t for t in flash if t.startswith("task-")) == ["task-a1", "task-a2", "task-a3"]
    assert "delegate five" in flash and "delegate five" not in pro      # the parent stays on its own row


@run_async()
async def test_a_provider_no_llm_row_serves_fails_that_child_and_says_which_row_is_missing(tmp_path):
    with SseServer() as server:
        server.route = router([("subagent_pro", "task-b1")], "delegate one")
        text_rows = rows(server).replace('"agentOptions": {"model": "pro"}', '"agentOptions": {"model": "pro", "provider": "gone"}')
        async with InProcess(make_home(tmp_path, text_rows)) as host:
            agent = await host.root.get("agents").open()
            agent.followup("delegate one")
            await until(lambda: len(notices(agent)) == 1 and agent.status == "idle", what="the failed child's notice")
            child = notices(agent)[0]["source"]["senderSessionId"]
            logged = json.dumps(host.root.get("agents").store.read(child).events)
    assert 'no llm row serves provider \\"gone\\"' in logged
    texts = [b["text"] for b in notices(agent)[0]["content"]]
    assert texts[0].endswith("failed before it finished.")
    assert not any(last_text(r).endswith("task-b1") for r in server.requests)


@run_async()
async def test_five_children_on_two_models_reach_the_server_under_their_models(tmp_path):
    tasks = TASKS
    with SseServer() as server:
        server.route = router(tasks, "delegate five")
        home = make_home(tmp_path, rows(server))
        async with InProcess(home) as host:
            agent = await host.root.get("agents").open()
            began = time.monotonic()
            agent.followup("delegate five")
            await until(lambda: len(notices(agent)) == 5 and agent.status == "idle", what="five notices", timeout=30)
            wall = time.monotonic() - began
            store = host.root.get("agents").store
            children = [i for i in store.list() if i.header.get("parentSession") == agent.id]
            models = {}
            for info in children:
                requests = [e for e in store.read(info.id).events if e["type"] == "request/header"]
                models[info.id] = requests[-1]["data"]["header"]["config"]["model"]
        served = [(r["body"]["model"], last_text(r)) for r in server.requests if r["body"].get("tools")]
    assert sorted(models.values()) == ["flash", "flash", "flash", "pro", "pro"]
    for _tool, task in tasks:
        model = "pro" if task.startswith("task-b") else "flash"
        assert [m for m, last in served if last.endswith(task)] == [model], task
    answers = sorted(b["text"] for n in notices(agent) for b in n["content"] if b["text"].startswith("answer to"))
    assert answers == sorted(f"answer to {t} from {'pro' if t.startswith('task-b') else 'flash'}" for _x, t in tasks)
    assert wall < 2.4, wall       # five children in a row would take 3 s


@run_async()
async def test_a_background_fork_settles_with_a_notice_and_sees_the_parents_turns(tmp_path):
    with SseServer() as server:
        def route(request):
            body, last = request["body"], last_text(request)
            if not body.get("tools"):
                return text("Title")
            if last == "first":
                return text("first answer")
            if last == "second":
                return tool_calls([("subagent_fork", {"description": "fk", "prompt": "fork-q",
                                                      "run_in_background": True})])
            if last.endswith("fork-q"):
                seen = json.dumps(body["messages"])
                return text("fork saw first answer" if "first answer" in seen else "fork saw nothing")
            return text("parent done")
        server.route = route
        home = make_home(tmp_path, rows(server))
        async with InProcess(home) as host:
            agent = await host.root.get("agents").open()
            agent.followup("first")
            await agent.when_idle()
            agent.followup("second")
            await until(lambda: len(notices(agent)) == 1 and agent.status == "idle", what="the fork's notice")
            results = [b["text"] for e in agent.session.events if e["type"] == "tool/result"
                       for r in e["data"]["message"]["content"] for b in r["content"]]
            child = notices(agent)[0]["source"]["senderSessionId"]
            header = host.root.get("agents").store.read(child).header
    assert results == [f"started subagent {child}"]
    texts = [b["text"] for b in notices(agent)[0]["content"]]
    assert texts[0] == f"Background subagent {child} finished and will do no further work unless you send it more."
    assert texts[2] == "fork saw first answer"
    assert header["parentSession"] == agent.id and header.get("seedLength")
