"""dsh's ``skill``, ``exit_plan_mode`` and ``read_image``, differentially: one headless turn of the real dsh
against a scripted server on 127.0.0.1 calls them on a prepared workspace, and dshctl's tools get the same
calls on the same files. Equal: the parameter schemas (descriptions aside), every result text, and the
skill catalog message dsh puts before the first request.
"""
from __future__ import annotations

import asyncio
import shutil
import struct
import zlib
from types import SimpleNamespace

from dshctl.agents.llm.openai import OpenAiModel
from dshctl.agents.tools.fsbase import Roots
from dshctl.agents.tools.image import ReadImage
from dshctl.agents.tools.plan import DEFAULT_SECTION, PlanMode
from dshctl.agents.tools.definition import Tool
from dshctl.agents.tools.editor import Editor
from dshctl.agents.tools.file_tools import FileTools
from dshctl.agents.tools.schemas import (EXIT_PLAN_MODE_PARAMETERS, READ_IMAGE_PARAMETERS, SKILL_PARAMETERS,
                                         STR_REPLACE_EDITOR_PARAMETERS, TODO_WRITE_PARAMETERS)
from dshctl.agents.tools.search import SearchTools
from dshctl.agents.tools.todo import TodoLists
from dshctl.agents.tools.skill import SkillTool
from tests.agents.dsh_tools_helpers import FILE_CONFIG, SEARCH_CONFIG, Caller, agent_with
from tests.agents.sse_server import SseServer
from tests.dsh.test_dsh_tools import Router, without_descriptions

OURS = {"skill": SKILL_PARAMETERS, "exit_plan_mode": EXIT_PLAN_MODE_PARAMETERS, "read_image": READ_IMAGE_PARAMETERS}

CALLS = [
    ("skill", {"name": "hello"}),
    ("skill", {"name": "notes"}),
    ("skill", {"name": "Bad Name"}),
    ("skill", {"name": "nope"}),
    ("skill", {"name": "hidden"}),
    ("skill", {"name": "broken"}),
    ("skill", {"name": "badyaml"}),
    ("skill", {}),
    ("skill", {"name": "notes", "extra": 1}),
    ("exit_plan_mode", {"plan": "# Plan\n- do it"}),
    ("exit_plan_mode", {"plan": 3}),
    ("read_image", {"file_path": "pic.png"}),
    ("read_image", {"file_path": "a.txt"}),
    ("read_image", {"file_path": "  "}),
    ("read_image", {"file_path": "pic.png", "extra": True}),
    ("read_image", {"path": "pic.png"}),
    ("read", {}),
    ("read", {"file_path": 3, "offset": "x"}),
    ("edit", {"file_path": "a.txt"}),
    ("grep", {"pattern": ["x"], "include": 1}),
    ("todo_write", {"todos": [{"content": "a", "status": "bogus"}, {"content": "b"}]}),
    ("todo_write", {"todos": [{"content": "a", "status": "pending", "extra": 1}]}),
    ("str_replace_editor", {"command": "delete", "path": "/x"}),
]


def png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    raw = b"".join(b"\0" + b"\xff\0\0" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def skill_file(name: str, description: str, body: str, extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n\n{body}\n"


def workspace(root, agents_home):
    for path in (root, agents_home):
        if path.exists():
            shutil.rmtree(path)
    (root / ".git").mkdir(parents=True)
    skills = root / ".dsh" / "skills"
    (skills / "hello").mkdir(parents=True)
    (skills / "hello" / "SKILL.md").write_text(skill_file("hello", "Greets   the\n  user <warmly> & well.",
                                                          "Say hello.\nThen stop."))
    (skills / "notes.md").write_text(skill_file("notes", "Takes notes.", "Write notes/notes.md."))
    (skills / "hidden").mkdir()
    (skills / "hidden" / "SKILL.md").write_text(skill_file("hidden", "Hidden.", "x",
                                                           "disable-model-invocation: true\n"))
    (skills / "mine").mkdir()
    (skills / "mine" / "SKILL.md").write_text(skill_file("mine", "Model only.", "m", "user-invocable: no\n"))
    (skills / "broken").mkdir()
    (skills / "broken" / "SKILL.md").write_text("no frontmatter here\n")
    (skills / "badyaml").mkdir()
    (skills / "badyaml" / "SKILL.md").write_text(skill_file("badyaml", "a\nb: [", "x"))
    shadow = root / ".agents" / "skills" / "hello"
    shadow.mkdir(parents=True)
    (shadow / "SKILL.md").write_text(skill_file("hello", "The losing duplicate.", "Never shown."))
    (agents_home / "skills" / "user-one").mkdir(parents=True)
    (agents_home / "skills" / "user-one" / "SKILL.md").write_text(skill_file("user-one", "From the user.", "u"))
    (root / "pic.png").write_bytes(png(3, 2))
    (root / "a.txt").write_text("text\n")


def our_tools(ws, home, agents_home):
    skills = SkillTool({"dshHome": str(home), "agentsHome": str(agents_home)})
    plan = PlanMode(DEFAULT_SECTION)
    llm = OpenAiModel({"model": "deepseek-v4-flash"})
    ctx = SimpleNamespace(get=lambda name: llm if name == "llm" else None)
    tools = [skills.definition(), plan.definition(), ReadImage(Roots(None), ctx).definition(),
             *FileTools(Roots(None), FILE_CONFIG).definitions(), *SearchTools(Roots(None), SEARCH_CONFIG).definitions(),
             Tool("todo_write", "", TodoLists().todo_write, TODO_WRITE_PARAMETERS),
             Tool("str_replace_editor", "", Editor(Roots(None), {"maxOutputChars": 16000}).execute,
                  STR_REPLACE_EDITOR_PARAMETERS)]
    return skills, tools


def dsh_turn(real_dsh, home, agents_home, ws, calls, prompt="Work."):
    with SseServer() as server:
        server.script = Router(server, calls)
        env = real_dsh.env(home, DEEPSEEK_BASE_URL=f"http://127.0.0.1:{server.port}", DEEPSEEK_API_KEY="sk-test",
                           DSH_AGENTS_HOME=str(agents_home), DSH_PERMISSION_MODE="danger-full-access")
        done = real_dsh.run(home, "--profile", "headless", "--patch", str(real_dsh.no_typert_patch), prompt,
                            cwd=ws, env=env)
        assert done.returncode == 0, done.stderr[-3000:]
        return [r["body"] for r in server.requests if r["body"].get("tools")]


def test_skill_plan_and_image_tools_match_dsh(real_dsh, tmp_path):
    ws, home, agents_home = tmp_path / "ws", tmp_path / "home", tmp_path / "agents"
    workspace(ws, agents_home)
    requests = dsh_turn(real_dsh, home, agents_home, ws, CALLS)
    offered = {t["function"]["name"]: t["function"]["parameters"] for t in requests[0]["tools"]}
    for name, parameters in OURS.items():
        assert without_descriptions(parameters) == without_descriptions(offered[name]), name
    messages = requests[-1]["messages"]
    theirs = {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}
    assert len(theirs) == len(CALLS)
    assert "<skill_instructions>\nSay hello.\nThen stop.\n</skill_instructions>" in theirs["call_1"]

    skills, tools = our_tools(ws, home, agents_home)
    agent = agent_with(ws, tools, session_id=str(ws))
    agent.session.events = []
    ask = Caller(agent)
    ours = asyncio.run(_texts(ask, CALLS))
    for n, (call, text) in enumerate(zip(CALLS, ours), 1):
        assert text == theirs[f"call_{n}"], call

    their_catalog = [m["content"] for m in requests[0]["messages"]
                     if m["role"] == "user" and "<available_skills>" in str(m["content"])]
    assert len(their_catalog) == 1
    catalog = skills.catalog_message(agent)
    assert catalog is not None and catalog["content"][0]["text"] == _text(their_catalog[0])
    assert [e["name"] for e in catalog["source"]["entries"]] == ["hello", "mine", "notes", "user-one"]


def _text(content) -> str:
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


async def _texts(ask, calls):
    return [await ask.text(name, args) for name, args in calls]


def test_a_users_slash_name_loads_the_skill_as_dsh_does(real_dsh, tmp_path):
    ws, home, agents_home = tmp_path / "ws", tmp_path / "home", tmp_path / "agents"
    workspace(ws, agents_home)
    prompt = "Please /notes then /hidden and /notes, not /mine, /nope or /usr/bin."
    requests = dsh_turn(real_dsh, home, agents_home, ws, [], prompt=prompt)
    theirs = [_text(m["content"]) for m in requests[0]["messages"] if m["role"] == "user"]
    skills, _tools = our_tools(ws, home, agents_home)
    agent = agent_with(ws, [], session_id=str(ws))
    agent.session.events = []
    user = {"id": "u", "role": "user", "content": [{"type": "text", "text": prompt}], "source": {"kind": "user"}}
    catalog = skills.catalog_message(agent)
    ours = [prompt, _text(catalog["content"]), *(_text(m["content"]) for m in skills.invocations(agent, [user]))]
    assert theirs[0] == prompt and theirs[-3:] == ours[1:]            # after dsh's runtime context
    assert [m["source"]["name"] for m in skills.invocations(agent, [user])] == ["notes", "hidden"]
