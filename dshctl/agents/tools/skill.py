"""``@dshctl/tool-skill``: dsh's ``skill`` tool and its session skill catalog (SKILL.md files from skill roots).

Roots, in dsh's precedence (the first root naming a skill wins): the project's ``.dsh/skills`` and
``.agents/skills`` (the project is the nearest ancestor of the session's cwd holding ``.git``, else the cwd),
the row's ``customSkillDirs``, then ``$DSH_HOME/skills`` (default ``~/.dsh``; its ``.system`` is skipped) and
``$DSH_AGENTS_HOME/skills`` (default ``~/.agents``). A skill is ``<root>/<name>/SKILL.md`` or
``<root>/<file>.md`` with YAML frontmatter naming ``name`` (kebab-case) and ``description``;
``disable-model-invocation: true`` hides it from the model, ``user-invocable: false`` from a user's ``/name``
gesture (a user message naming ``/name`` loads that skill as ``skill-invocation`` instructions after the
step's input, as dsh does). Files without usable frontmatter are skipped.

Confinement: project roots live in the workspace, so a project skill whose real path leaves the project
(a symlink out) is skipped, as is anything that is not UTF-8 text. User and custom roots are the user's own
configuration and are read where they are.

Before each step the catalog (dsh's ``<system-reminder>`` text, ``source.kind: skill-catalog``) is added when
it differs from the last one this session published (only to a step that carries input: a catalog
alone must not open a step of its own); the tool's result is dsh's ``<skill_content>`` block.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import uuid
from dataclasses import dataclass
from pathlib import Path

from .definition import Tool, error_result, text_result
from .fsbase import session_cwd
from .schemas import SKILL_PARAMETERS

name = "@dshctl/tool-skill"
inject = ["tools"]
schema = {"type": "object", "default": {}, "properties": {
    "catalogDescriptionMaxLength": {"type": "integer", "minimum": 3, "default": 500},
    "customSkillDirs": {"type": "array", "items": {"type": "string"}, "default": []},
    "includeDefaultRoots": {"type": "boolean", "default": True},
    "dshHome": {"type": "string"},
    "agentsHome": {"type": "string"},
}}

SKILL_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
GESTURE = re.compile(r"(?:^|(?<=\s))/([a-z0-9]+(?:-[a-z0-9]+)*)(?=\s|$)")
TRUE_WORDS, FALSE_WORDS = {"true", "yes", "on", "1"}, {"false", "no", "off", "0"}


@dataclass(frozen=True)
class Root:
    path: Path
    confine: Path | None = None     # a project root: the skill's real path must stay inside it
    skip_system: bool = False


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    content: str
    directory: str
    model_invocable: bool
    user_invocable: bool = True


def escape_text(value: str) -> str:
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def render_skill(skill: Skill) -> str:
    """dsh's ``<skill_content>`` block (the tool result and a user's ``/name`` injection share it)."""
    attr = skill.name.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
    return "\n".join([
        f'<skill_content name="{attr}">', "<skill_resources>",
        f"Base directory for this skill: {escape_text(skill.directory)}",
        "Resolve relative paths mentioned by this skill against the base directory before using them. "
        "Load referenced resources only as needed.",
        "</skill_resources>", "", "<skill_instructions>", skill.content, "</skill_instructions>", "</skill_content>"])


def _frontmatter(raw: str) -> tuple[dict, str] | None:
    lines = raw.split("\n")
    if not lines or lines[0].rstrip("\r") != "---" or len(lines) < 2:
        return None
    for index in range(1, len(lines)):
        if lines[index].rstrip("\r") == "---":
            from ruamel.yaml import YAML   # lazy: only when skills are read
            try:
                data = YAML(typ="safe", pure=True).load("\n".join(lines[1:index]))
            except Exception:  # noqa: BLE001 - invalid YAML: the file is not a skill
                return None
            return (data, "\n".join(lines[index + 1:])) if isinstance(data, dict) else None
    return None


def _flag(data: dict, key: str) -> bool | None:
    if key not in data:
        return None
    value = data[key]
    if isinstance(value, bool):
        return value
    word = str(value).lower() if isinstance(value, (str, int)) else ""
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise ValueError(key)


def parse_skill(raw: str, directory: str) -> Skill | None:
    parsed = _frontmatter(raw)
    if parsed is None:
        return None
    data, body = parsed
    skill_name, description = data.get("name"), data.get("description")
    if not (isinstance(skill_name, str) and isinstance(description, str) and description and
            SKILL_NAME.match(skill_name)):
        return None
    if any(k in data for k in ("disableModelInvocation", "modelInvocable", "userInvocable")):
        return None   # dsh refuses the legacy spellings
    try:
        hidden = _flag(data, "disable-model-invocation") is True
        user = _flag(data, "user-invocable") is not False
    except ValueError:
        return None
    return Skill(skill_name, description, body.strip(), directory, not hidden, user)


def project_root(cwd: Path) -> Path:
    for candidate in (cwd, *cwd.parents):
        if (candidate / ".git").exists():
            return candidate
    return cwd


class SkillRoots:
    def __init__(self, config: dict):
        self.custom = [Path(os.path.expanduser(p)).absolute() for p in config.get("customSkillDirs") or []]
        self.defaults = config.get("includeDefaultRoots", True)
        self.dsh_home = Path(os.path.expanduser(config.get("dshHome") or os.environ.get("DSH_HOME") or "~/.dsh"))
        self.agents_home = Path(os.path.expanduser(config.get("agentsHome") or os.environ.get("DSH_AGENTS_HOME")
                                                   or "~/.agents"))

    def roots(self, cwd: str | None) -> list[Root]:
        out: list[Root] = []
        if self.defaults and cwd:
            project = project_root(Path(cwd))
            real = project.resolve()
            out += [Root(project / ".dsh" / "skills", real), Root(project / ".agents" / "skills", real)]
        out += [Root(p) for p in self.custom]
        if self.defaults:
            out += [Root(self.dsh_home / "skills", skip_system=True), Root(self.agents_home / "skills")]
        return out

    def discover(self, cwd: str | None) -> list[Skill]:
        """Every usable skill, the first root's winning a duplicate name, sorted by name."""
        found: dict[str, Skill] = {}
        for root in self.roots(cwd):
            for skill in _root_skills(root):
                found.setdefault(skill.name, skill)
        return [found[k] for k in sorted(found)]


def _root_skills(root: Root) -> list[Skill]:
    try:
        entries = sorted(os.scandir(root.path), key=lambda e: e.name)
    except OSError:
        return []
    out = []
    for entry in entries:
        if root.skip_system and entry.name == ".system":
            continue
        path = Path(entry.path)
        if path.is_dir():
            file, directory = path / "SKILL.md", path
        elif path.is_file() and entry.name.endswith(".md"):
            file, directory = path, root.path
        else:
            continue
        if root.confine is not None and not file.resolve().is_relative_to(root.confine):
            continue   # a link out of the workspace
        try:
            raw = file.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        skill = parse_skill(raw, str(directory))
        if skill is not None:
            out.append(skill)
    return out


def _description(value: str, limit: int) -> str:
    normalized = " ".join(value.split())
    return normalized if len(normalized) <= limit else normalized[:limit - 3] + "..."


def catalog_text(entries: list[dict], update: bool) -> str:
    lines = [f"- `{e['name']}`: {escape_text(e['description'])}" for e in entries]
    if not update:
        head = ["A skill is a reusable set of task-specific instructions. The following skills are available in "
                "this session:"]
        tail = ["If the user names a skill, or the task clearly matches a skill's description, call the `skill` "
                "tool with the exact skill name before taking task actions. Load all applicable skills, then follow "
                "their full instructions. This catalog contains summaries only; do not infer or follow a skill's "
                "instructions until it has been loaded.", _DIRECT]
    elif entries:
        head = [_CHANGED]
        tail = ["Use only names in this replacement catalog. If the user names a listed skill, or the task clearly "
                "matches its description, call the `skill` tool with the exact name before acting.", _DIRECT]
    else:
        head = [_CHANGED]
        tail = ["No skills are currently available through the `skill` tool. Do not use names from earlier skill "
                "catalogs.", "A user may still invoke a skill directly; its <skill_content> block then appears in "
                "this conversation. Follow it, and do not call the `skill` tool for it."]
    return "\n".join(["<system-reminder>", *head, "", "<available_skills>", *lines, "</available_skills>", "",
                      *tail, "</system-reminder>"])


_DIRECT = ("A user may also invoke a skill directly; its <skill_content> block then appears in this conversation. "
           "Follow it, and do not call the `skill` tool again for that skill.")
_CHANGED = ("The available skill catalog changed. This complete catalog replaces every earlier available-skills "
            "list in this session:")


def _digest(entries: list[dict]) -> str:
    canonical = "\n".join(json.dumps([e["name"], e["description"]], ensure_ascii=False) for e in entries)
    return hashlib.sha256(canonical.encode()).hexdigest()


def last_catalog(events: list[dict]) -> list[dict] | None:
    for event in reversed(events):
        data = event.get("data") if event.get("type") == "user/message" else None
        source = data.get("source") if isinstance(data, dict) else None
        if isinstance(source, dict) and source.get("kind") == "skill-catalog" and isinstance(source.get("entries"),
                                                                                               list):
            return source["entries"]
    return None


class SkillTool:
    def __init__(self, config: dict):
        self.roots = SkillRoots(config)
        self.limit = config.get("catalogDescriptionMaxLength", 500)

    async def execute(self, args, run):
        wanted = args["name"]
        if not SKILL_NAME.match(wanted):
            return error_result(f'invalid skill name "{wanted}"', "TOOL_FAILED")
        skill = next((s for s in self.roots.discover(session_cwd(run)) if s.name == wanted), None)
        if skill is None:
            return error_result(f'skill "{wanted}" is unknown or no longer available', "TOOL_FAILED")
        if not skill.model_invocable:
            return error_result(f'skill "{wanted}" is not available for model invocation', "TOOL_FAILED")
        return text_result(render_skill(skill))

    def definition(self) -> Tool:
        return Tool("skill", "Load the full instructions of one skill named in the session's skill catalog; do "
                    "this before acting on a task that names or matches that skill.", self.execute, SKILL_PARAMETERS,
                    is_concurrency_safe=lambda _args: True, dsh_arguments=True)

    def invocations(self, agent, messages: list) -> list[dict]:
        """dsh's ``/name`` gesture: each user-invocable skill a user's message names (a whitespace-bounded
        ``/name`` token), loaded as ``instructions`` context after the step's input."""
        names: list[str] = []
        for message in messages:
            if not isinstance(message, dict) or (message.get("source") or {}).get("kind") != "user":
                continue
            for block in message.get("content") or []:
                if block.get("type") == "text":
                    names += [n for n in GESTURE.findall(block.get("text", "")) if n not in names]
        if not names:
            return []
        header = getattr(getattr(agent, "session", None), "header", None) or {}
        found = {s.name: s for s in self.roots.discover(header.get("cwd") if isinstance(header.get("cwd"), str)
                                                         else None)}
        return [{"id": str(uuid.uuid4()), "role": "user",
                 "source": {"kind": "skill-invocation", "name": n, "form": "instructions"},
                 "content": [{"type": "text", "text": render_skill(found[n])}]}
                for n in names if n in found and found[n].user_invocable]

    def catalog_message(self, agent) -> dict | None:
        """The catalog to add before this step, or None when the session's last one is current."""
        session = getattr(agent, "session", None)
        header = getattr(session, "header", None) or {}
        cwd = header.get("cwd") if isinstance(header.get("cwd"), str) else None
        skills = [s for s in self.roots.discover(cwd) if s.model_invocable]
        entries = [{"name": s.name, "description": _description(s.description, self.limit)} for s in skills]
        previous = last_catalog(list(getattr(session, "events", None) or []))
        if previous is None and not entries:
            return None
        if previous is not None and _digest(previous) == _digest(entries):
            return None
        source = {"kind": "skill-catalog", "form": "catalog", **({"update": True} if previous is not None else {}),
                  "entries": entries}
        return {"id": str(uuid.uuid4()), "role": "user", "source": source,
                "content": [{"type": "text", "text": catalog_text(entries, previous is not None)}]}


def apply(ctx, config):
    skills = SkillTool(config)
    tool = skills.definition()
    ctx.tools.register(ctx, tool.name, tool, ctx.get("toolScope") or "global")

    async def pre_step(payload, next_):
        decision = await next_()
        if not isinstance(decision, dict) or decision.get("kind") != "enter" or not decision.get("messages"):
            return decision   # a step with no input of its own would keep a finished turn going
        catalog = skills.catalog_message(payload["agent"])
        invoked = skills.invocations(payload["agent"], decision["messages"])
        if catalog is None and not invoked:
            return decision
        # background first (the catalog), the instructions the user asked for last, nearest the answer
        return {**decision, "messages": [*decision["messages"], *([catalog] if catalog else []), *invoked]}
    ctx.on("agent/pre-step", pre_step)
