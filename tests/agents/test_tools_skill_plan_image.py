"""skill, exit_plan_mode / plan mode and read_image: end to end from `dshctl agent run` on a running host,
and the bad input a model can send (links out of the workspace, binary files, wrong formats, huge images)."""
import asyncio
import json
import os
import struct
import subprocess
from types import SimpleNamespace

from dshctl.agents.llm.openai import OpenAiModel
from dshctl.agents.tools.fsbase import Roots
from dshctl.agents.tools.image import ReadImage, sniff
from dshctl.agents.tools.plan import APPROVED_TEXT, DEFAULT_SECTION, PlanMode, fold_plan_mode
from dshctl.agents.tools.skill import SkillTool
from tests.agents.dsh_tools_helpers import Caller, agent_with, text
from tests.dsh.test_dsh_tools_skill_plan_image import png, skill_file
from tests.host.helpers import DSHCTL, WAIT_S, HostProcess, make_home, write


def home_with(tmp_path, replies):
    rows = [{"id": "tools", "name": "@dshctl/tools"}, {"id": "agents", "name": "@dshctl/agents"},
            {"id": "llm", "name": "@dshctl/llm-script", "config": {"replies": replies}},
            {"id": "agent-loop", "name": "@dshctl/agent-loop"}, {"id": "approval", "name": "@dshctl/approval"},
            {"id": "tool-fs", "name": "@dshctl/tool-fs"},
            {"id": "tool-skill", "name": "@dshctl/tool-skill",
             "config": {"dshHome": str(tmp_path / "nohome"), "agentsHome": str(tmp_path / "noagents")}},
            {"id": "plan-mode", "name": "@dshctl/plan-mode"}]
    return make_home(tmp_path, "".join(f"    - {json.dumps(row)}\n" for row in rows))


def test_agent_run_plans_loads_a_skill_and_is_told_it_plans(tmp_path):
    ws = tmp_path / "project"
    write(ws / ".dsh" / "skills" / "deploy" / "SKILL.md", skill_file("deploy", "Ships the app.", "Run make ship."))
    (ws / ".git").mkdir()
    replies = [{"toolCalls": [{"name": "skill", "arguments": {"name": "deploy"}}]},
               {"toolCalls": [{"name": "exit_plan_mode", "arguments": {"plan": "no heading"}}]},
               {"toolCalls": [{"name": "read_image", "arguments": {"file_path": "x.png"}}]},
               {"text": "Planned."}]
    home = home_with(tmp_path, replies)
    with HostProcess(home):
        done = subprocess.run([DSHCTL, "--home", str(home), "agent", "run", "--profile", "p", "--format", "json",
                               "/plan Plan the release."], cwd=ws, capture_output=True, text=True, timeout=WAIT_S)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert {"active": True} in [e["data"] for e in events if e.get("type") == "plan/mode"]
    users = [e["data"] for e in events if e.get("type") == "user/message"]
    texts = ["".join(b.get("text", "") for b in m["content"]) for m in users]
    assert "Plan the release." in texts and "/plan Plan the release." not in texts
    assert any("- `deploy`: Ships the app." in t for t in texts)
    assert any(DEFAULT_SECTION in t for t in texts)          # the runtime context carries the plan rules
    results = [e["data"]["message"]["content"][0]["content"][0]["text"] for e in events
               if e.get("type") == "tool/result"]
    assert "<skill_instructions>\nRun make ship.\n</skill_instructions>" in results[0]
    assert f"Base directory for this skill: {ws}/.dsh/skills/deploy" in results[0]
    assert results[1] == "Error: exit_plan_mode requires a non-empty markdown plan starting with a # heading"
    assert results[2].startswith('Error: cannot read "x.png" as an image: the current model route')


def run(coro):
    return asyncio.run(coro)


def test_skills_behind_links_out_of_the_workspace_or_not_text_are_not_offered(tmp_path):
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / ".git").mkdir(parents=True)
    write(outside / "evil" / "SKILL.md", skill_file("evil", "Outside.", "read ~/.ssh"))
    skills = ws / ".dsh" / "skills"
    skills.mkdir(parents=True)
    os.symlink(outside / "evil", skills / "evil")
    (skills / "bin").mkdir()
    (skills / "bin" / "SKILL.md").write_bytes(b"---\nname: bin\ndescription: \xff\xfe\n---\nx\n")
    write(skills / "ok.md", skill_file("ok", "Fine.", "ok"))
    tool = SkillTool({"dshHome": str(tmp_path / "h"), "agentsHome": str(tmp_path / "a")})
    agent = agent_with(ws, [tool.definition()])
    agent.session.events = []
    ask = Caller(agent)
    assert run(ask.text("skill", {"name": "evil"})) == 'Error: skill "evil" is unknown or no longer available'
    assert run(ask.text("skill", {"name": "bin"})) == 'Error: skill "bin" is unknown or no longer available'
    catalog = tool.catalog_message(agent)
    assert [e["name"] for e in catalog["source"]["entries"]] == ["ok"]
    agent.session.events.append({"type": "user/message", "data": catalog})
    assert tool.catalog_message(agent) is None             # published once, not every step
    write(skills / "new.md", skill_file("new", "Added.", "n"))
    update = tool.catalog_message(agent)
    assert update["source"]["update"] is True and "catalog changed" in text(update)
    assert [e["name"] for e in update["source"]["entries"]] == ["new", "ok"]


class PlanAgent(SimpleNamespace):
    def append(self, kind, data, **_):
        self.session.events.append({"type": kind, "data": data})


def plan_agent(answer):
    async def ask_user(question):
        ask_user.asked = question
        return answer
    return PlanAgent(session=SimpleNamespace(events=[]), ask_user=ask_user)


def test_exit_plan_mode_approval_leaves_plan_mode_at_the_next_step_and_feedback_keeps_it():
    mode = PlanMode(DEFAULT_SECTION)
    agent = plan_agent({"option": "Approve"})
    run_ = SimpleNamespace(agent=agent)
    assert mode.set(agent, True) == "committed" and fold_plan_mode(agent.session.events)
    assert mode.context_text(agent.session) == DEFAULT_SECTION
    out = run(mode.exit_plan_mode({"plan": "# Ship\n- build"}, run_))
    assert text(out) == APPROVED_TEXT and agent.ask_user.asked["detail"] == "# Ship\n- build"
    assert fold_plan_mode(agent.session.events)           # still planning until the next step begins
    mode.at_step(agent)
    assert not fold_plan_mode(agent.session.events) and mode.context_text(agent.session) is None
    again = run(mode.exit_plan_mode({"plan": "# Ship"}, run_))
    assert text(again) == "Error: exit_plan_mode is only available in plan mode"

    agent = plan_agent({"text": "add tests"})
    mode.set(agent, True)
    out = run(mode.exit_plan_mode({"plan": "# Ship"}, SimpleNamespace(agent=agent)))
    assert text(out) == "Error: The user chose to keep planning; their feedback: add tests"
    mode.at_step(agent)
    assert fold_plan_mode(agent.session.events)
    nobody = PlanAgent(session=SimpleNamespace(events=[{"type": "plan/mode", "data": {"active": True}}]))
    out = run(mode.exit_plan_mode({"plan": "# Ship"}, SimpleNamespace(agent=nobody)))
    assert "no user-questions channel" in text(out) and out["isError"]


def gif(w, h):
    return b"GIF89a" + struct.pack("<HH", w, h) + b"\0\0\0;"


def jpeg(w, h):
    return b"\xff\xd8\xff\xe0" + struct.pack(">H", 16) + b"JFIF\0" + b"\0" * 9 + \
        b"\xff\xc0" + struct.pack(">HBHH", 17, 8, h, w) + b"\x03" + b"\0" * 9 + b"\xff\xd9"


def webp(w, h):
    bits = (w - 1) | ((h - 1) << 14)
    return b"RIFF" + struct.pack("<I", 30) + b"WEBPVP8L" + struct.pack("<I", 10) + b"\x2f" + \
        struct.pack("<I", bits) + b"\0" * 8


def test_image_headers_give_type_and_size():
    assert sniff(png(3, 2)) == ("image/png", 3, 2)
    assert sniff(gif(7, 5)) == ("image/gif", 7, 5)
    assert sniff(jpeg(640, 480)) == ("image/jpeg", 640, 480)
    assert sniff(webp(33, 44)) == ("image/webp", 33, 44)
    assert sniff(b"hello") is None and sniff(b"\xff\xd8garbage") is None


def test_read_image_on_an_image_model_and_its_refusals(tmp_path):
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (ws / "pic.png").write_bytes(png(3, 2))
    (ws / "fake.gif").write_bytes(png(3, 2))
    (ws / "huge.gif").write_bytes(gif(9000, 10))
    (ws / "dir.png").mkdir()
    (outside / "secret.png").write_bytes(png(1, 1))
    os.symlink(outside / "secret.png", ws / "link.png")
    llm = OpenAiModel({"model": "deepseek-v4-flash-vision-exp"})
    tool = ReadImage(Roots(None), SimpleNamespace(get=lambda n: llm if n == "llm" else None)).definition()
    outs = run(_calls(Caller(agent_with(ws, [tool])), ["pic.png", *CASES, 7]))
    out = outs[0]
    assert text(out) == (f"<path>{ws}/pic.png</path>\n<type>image</type>\n<content>\n"
                         f"image/png image, 3x2 px, {len(png(3, 2))} bytes\n</content>")
    assert out["content"][1]["type"] == "image" and out["content"][1]["width"] == 3
    for (path, expected), out in zip(CASES.items(), outs[1:]):
        expected = expected.replace("WS", str(ws))
        assert out.get("isError") and expected in text(out), (path, text(out))
    assert text(outs[-1]) == 'Error: invalid arguments: "file_path" must be a string'


CASES = {"fake.gif": "the .gif extension declares image/gif, but the bytes use a different image format",
         "huge.gif": "exceeds the 8000px limit", "dir.png": "not a regular file",
         "none.png": 'cannot read "WS/none.png": not found', "link.png": "outside the workspace",
         "../outside/secret.png": "outside the workspace"}


async def _calls(ask, paths):
    return [await ask("read_image", {"file_path": p}) for p in paths]
