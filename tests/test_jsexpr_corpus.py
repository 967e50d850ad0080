"""Coverage of the !!js subset over the real dsh files in /work/shared/corpus.

Every `!!js` expression in the corpus is listed here by hand, as supported (with its value in a sample
environment) or unsupported (with the reason). The first test fails when the corpus holds an
expression this file does not list, so nothing is skipped silently.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from dshctl.core.yaml.dialect import load_file
from dshctl.core.jsexpr import UNDEFINED, JsEnv, JsSyntaxError, check_expressions, evaluate, parse
from dshctl.core.yaml.nodes import JsExpr

from corpus_files import CORPUS  # noqa: E402
OFFICIAL = "deepseek-ai__deepseek-harness/"

WIN_EQ = "process.platform === 'win32'"
WIN_NE = "process.platform !== 'win32'"
CWD = "process.cwd()"
DSH_CWD = "process.env.DSH_CWD ?? process.cwd()"
APPROVAL = ("process.platform === 'win32' ? 'never' : ((process.env.DSH_PERMISSION_MODE ?? "
            "'workspace-write') === 'danger-full-access' ? 'never' : 'ask')")
RESUME = "process.env.DSH_TUI_RESUME_SESSION ?? process.env.DSH_CC_RESUME_SESSION ?? undefined"
SESSIONS_ROOT = "process.env.DSH_SESSION_ROOT ?? './.sessions'"
SNAPSHOT = "process.env.DSH_SNAPSHOT === undefined ? 'zstd' : 'none'"

# file -> the expressions it holds that the subset covers (dsh's bundles and presets must all be here)
SUPPORTED = {
    "DKSRch__dsh-minimal-two-stage/agent.cordis.yml": [WIN_NE],
    "JNNarrator__jn-deepseek-harness/custom/dsh-home/.agent-presets/router-standard/agent.cordis.yml":
        [WIN_EQ, WIN_NE],
    "Lurongshika__dsh-auto-mode-preset/agent.cordis.yml": [WIN_EQ, WIN_NE],
    "XMoon__dsh-pi-tui/cordis.patch.yml": ["ctx.tuiStartup.shippedPresetRoot"],
    "ccch1mneyyy__dsh-TUI/cordis.patch.yml": [
        "process.env.DSH_TUI_PERSONA ?? 'You are a coding agent.'",
        "process.env.DEEPSEEK_BASE_URL",
        "process.platform === 'win32' ? 'danger-full-access' : (process.env.DSH_PERMISSION_MODE ?? "
        "'workspace-write')",
        CWD, APPROVAL,
        "process.env.DSH_TUI_SESSION_ROOT ?? dshHomePath('sessions')",
        "dshHomePath('storages')",
        "process.env.DSH_TUI_PRESET ?? undefined",
        "process.env.DSH_TUI_WORKSPACE_TARGET ?? undefined",
        RESUME,
    ],
    "ccch1mneyyy__dsh-TUI/cordis.yml": [
        APPROVAL, RESUME, "process.env.DSH_TUI_WORKSPACE_TARGET ?? undefined",
        "process.env.DEEPSEEK_BASE_URL", CWD,
        "process.env.DSH_TUI_PERSONA ?? 'You are a coding agent.'",
    ],
    "ccch1mneyyy__dsh-TUI/presets/liangshen/agent.cordis.yml": [WIN_NE, WIN_EQ, DSH_CWD],
    OFFICIAL + "apps/cli/config/agent-presets/code/agent.cordis.yml": [WIN_EQ, WIN_NE],
    OFFICIAL + "apps/cli/config/agent-presets/cordis/agent.cordis.yml": [WIN_EQ, WIN_NE],
    OFFICIAL + "apps/cli/config/agent-presets/minimal/agent.cordis.yml": [WIN_EQ, WIN_NE, DSH_CWD],
    OFFICIAL + "apps/cli/config/agent-presets/standard/agent.cordis.yml": [WIN_EQ, WIN_NE],
    OFFICIAL + "examples/acp-agent/cordis.yml": [
        "process.env.DSH_PERMISSION_MODE ?? (process.env.DSH_SNAPSHOT === undefined ? "
        "'workspace-write' : 'danger-full-access')",
        CWD,
        "(process.env.DSH_PERMISSION_MODE ?? (process.env.DSH_SNAPSHOT === undefined ? "
        "'workspace-write' : 'danger-full-access')) === 'danger-full-access' ? 'never' : 'ask'",
        "process.env.DSH_SNAPSHOT_SESSIONS_ROOT ?? './.sessions'",
        SNAPSHOT,
    ],
    OFFICIAL + "examples/headless-agent/cordis.yml": [CWD, SNAPSHOT],
    OFFICIAL + "examples/jsonrpc-agent/minimal.cordis.yml": [
        "process.env.DSH_MODEL ?? 'deepseek-v4-flash'", DSH_CWD,
        "process.env.DSH_SYSTEM_PROMPT ?? 'You are a helpful software engineer assistant.'",
        SESSIONS_ROOT,
    ],
    OFFICIAL + "examples/mcp-memory/engram.cordis.yml": [CWD],
    OFFICIAL + "examples/mcp-memory/mcp-reference-memory.cordis.yml": [CWD],
    OFFICIAL + "examples/mcp-memory/memorix.cordis.yml": [CWD],
    OFFICIAL + "packages/bundle/base/cordis.patch.yml": [
        "dshHomePath('sessions')",
        "process.env.DSH_TELEMETRY_MODE || 'DISABLED'",
        "process.env.DSH_TELEMETRY_OTLP_URL ?? 'https://harness-telemetry.deepseeksvc.com/v1/logs'",
        "process.env.DSH_PERMISSION_MODE ?? 'workspace-write'",
        CWD, WIN_EQ, WIN_NE,
        "(process.env.DSH_PERMISSION_MODE ?? 'workspace-write') === 'danger-full-access' ? 'never' : 'ask'",
    ],
    OFFICIAL + "packages/bundle/headless/cordis.patch.yml": [
        "process.env.DSH_TOOLS_MODE", "ctx.headlessStartup.task"],
    OFFICIAL + "packages/bundle/web-app/cordis.patch.yml": [
        "process.env.DSH_TOOLS_MODE", "dshHomePath('storages')",
        "ctx.webStartup.host ?? '127.0.0.1'", "ctx.webStartup.port ?? 3080",
        "ctx.webStartup.openBrowser", "ctx.webStartup.trustedHosts", "ctx.webRuntime.trustedHosts",
    ],
    OFFICIAL + "python/sdk-runtime/src/deepseek_harness_runtime/runtime/cordis.yml": [
        SESSIONS_ROOT, DSH_CWD],
    "ihuajiu__dsh-code-security/agent.cordis.yml": [WIN_EQ, WIN_NE],
    "kaijia323__dsh-preset-router-standard/agent.cordis.yml": [WIN_EQ, WIN_NE],
    "mayf3__dsh-config/agents/cordis-smart/agent.cordis.yml": [WIN_EQ, WIN_NE],
}

SKILLS = "process.getBuiltinModule('node:url').fileURLToPath(new URL('skills/', baseUrl))"
GETBUILTIN = "process.getBuiltinModule is not supported"


def _entry_check(row_id):
    return (f"[...ctx.loader.entries()].some(entry => entry.options.id === '{row_id}' && "
            f"entry.options.name === '@deepseek-ai/dsh-{row_id}' && !entry.disabled)")


# (file, expression) -> the reason the subset gives. Outside the subset by design (§12.5).
UNSUPPORTED = {
    (OFFICIAL + "apps/cli/config/agent-presets/cordis/agent.cordis.yml", SKILLS): GETBUILTIN,
    ("Lurongshika__dsh-auto-mode-preset/agent.cordis.yml", SKILLS): GETBUILTIN,
    ("ihuajiu__dsh-code-security/agent.cordis.yml", SKILLS): GETBUILTIN,
    ("ihuajiu__dsh-code-security/agent.cordis.yml",
     "process.getBuiltinModule('node:url').fileURLToPath(new URL('bundled/skills/', baseUrl))"):
        GETBUILTIN,
    ("mayf3__dsh-config/agents/cordis-smart/agent.cordis.yml", SKILLS): GETBUILTIN,
    **{("ccch1mneyyy__dsh-TUI/cordis.patch.yml", _entry_check(row)): "array literals are not supported"
       for row in ("storage", "storage-json", "storage-domain", "workspace", "agent-presets",
                   "cordis-host-runner")},
    ("ccch1mneyyy__dsh-TUI/cordis.patch.yml",
     "(() => {\n  const base = ctx.baseUrl\n  if (!base) return undefined\n  const root = new URL("
     "'../node_modules/@deepseek-ai/dsh/config/agent-presets/', base)\n  let path = "
     "decodeURIComponent(root.pathname)\n  if (/^\\/[A-Za-z]:/.test(path)) path = path.slice(1)\n"
     "  return [{ path, trust: 'system' }]\n})()"): "expected an expression, found ')'",
    ("ccch1mneyyy__dsh-TUI/cordis.yml",
     "process.env.DSH_TUI_SESSION_ROOT ?? (process.env.USERPROFILE ?? process.env.HOME) + "
     "'/.dsh-tui/sessions'"): "operator '+' is not supported",
    ("ccch1mneyyy__dsh-TUI/cordis.yml", "parseFloat(process.env.DSH_TUI_COMPACT_RATIO ?? '0.2')"):
        "unsupported identifier 'parseFloat'",
    ("ccch1mneyyy__dsh-TUI/cordis.yml", "parseFloat(process.env.DSH_TUI_COMPACT_RETAIN ?? '0.05')"):
        "unsupported identifier 'parseFloat'",
    (OFFICIAL + "examples/jsonrpc-agent/minimal.cordis.yml",
     "Number(process.env.DSH_CONTEXT_WINDOW ?? 1000000)"): "unsupported identifier 'Number'",
    (OFFICIAL + "examples/mcp-memory/mcp-reference-memory.cordis.yml",
     "process.env.MEMORY_FILE_PATH?.trim() || process.getBuiltinModule('node:path').join("
     "process.getBuiltinModule('node:os').homedir(), '.dsh-mcp-reference-memory.jsonl')"):
        "'?.' is not supported here: property access is only supported after ctx.get",
}

# The value of each supported expression in SAMPLE_ENV (linux; DSH_CWD and DEEPSEEK_BASE_URL set).
EXPECTED = {
    WIN_EQ: False, WIN_NE: True, CWD: "/work/project", DSH_CWD: "/elsewhere", APPROVAL: "ask",
    RESUME: UNDEFINED, SESSIONS_ROOT: "./.sessions", SNAPSHOT: "zstd",
    "ctx.tuiStartup.shippedPresetRoot": "/opt/presets",
    "process.env.DSH_TUI_PERSONA ?? 'You are a coding agent.'": "You are a coding agent.",
    "process.env.DEEPSEEK_BASE_URL": "https://api.example.test",
    "process.platform === 'win32' ? 'danger-full-access' : (process.env.DSH_PERMISSION_MODE ?? "
    "'workspace-write')": "workspace-write",
    "process.env.DSH_TUI_SESSION_ROOT ?? dshHomePath('sessions')": "/home/u/.dsh/sessions",
    "dshHomePath('storages')": "/home/u/.dsh/storages",
    "dshHomePath('sessions')": "/home/u/.dsh/sessions",
    "process.env.DSH_TUI_PRESET ?? undefined": UNDEFINED,
    "process.env.DSH_TUI_WORKSPACE_TARGET ?? undefined": UNDEFINED,
    "process.env.DSH_PERMISSION_MODE ?? (process.env.DSH_SNAPSHOT === undefined ? "
    "'workspace-write' : 'danger-full-access')": "workspace-write",
    "(process.env.DSH_PERMISSION_MODE ?? (process.env.DSH_SNAPSHOT === undefined ? "
    "'workspace-write' : 'danger-full-access')) === 'danger-full-access' ? 'never' : 'ask'": "ask",
    "process.env.DSH_SNAPSHOT_SESSIONS_ROOT ?? './.sessions'": "./.sessions",
    "process.env.DSH_MODEL ?? 'deepseek-v4-flash'": "deepseek-v4-flash",
    "process.env.DSH_SYSTEM_PROMPT ?? 'You are a helpful software engineer assistant.'":
        "You are a helpful software engineer assistant.",
    "process.env.DSH_TELEMETRY_MODE || 'DISABLED'": "DISABLED",
    "process.env.DSH_TELEMETRY_OTLP_URL ?? 'https://harness-telemetry.deepseeksvc.com/v1/logs'":
        "https://harness-telemetry.deepseeksvc.com/v1/logs",
    "process.env.DSH_PERMISSION_MODE ?? 'workspace-write'": "workspace-write",
    "(process.env.DSH_PERMISSION_MODE ?? 'workspace-write') === 'danger-full-access' ? 'never' : 'ask'":
        "ask",
    "process.env.DSH_TOOLS_MODE": UNDEFINED,
    "ctx.headlessStartup.task": "summarize",
    "ctx.webStartup.host ?? '127.0.0.1'": "127.0.0.1",
    "ctx.webStartup.port ?? 3080": 4000,
    "ctx.webStartup.openBrowser": False,
    "ctx.webStartup.trustedHosts": ["a.test"],
    "ctx.webRuntime.trustedHosts": [],
}

SERVICES = {
    "webStartup": {"host": None, "port": 4000, "openBrowser": False, "trustedHosts": ["a.test"]},
    "webRuntime": {"trustedHosts": []},
    "headlessStartup": {"task": "summarize"},
    "tuiStartup": {"shippedPresetRoot": "/opt/presets"},
}
SAMPLE_ENVIRON = {"DSH_CWD": "/elsewhere", "DEEPSEEK_BASE_URL": "https://api.example.test"}


def sample_env(injected):
    return JsEnv(SAMPLE_ENVIRON, "/work/project", "linux", Path("/home/u/.dsh"),
                 get_service=SERVICES.get, injected=injected)


def _walk(value, row, path):
    """(row mapping, path within the row, expression) for every JsExpr. The row is the innermost
    mapping with an `id` or `name` whose `config` or `disabled` holds the expression (patch entries
    may carry only an id; configs may hold mappings with an `id` of their own)."""
    if isinstance(value, JsExpr):
        yield row, path, value
    elif isinstance(value, dict):
        is_row = isinstance(value.get("name"), str) or isinstance(value.get("id"), str)
        for key, item in value.items():
            if is_row and key in ("config", "disabled"):
                yield from _walk(item, value, [key])
            else:
                yield from _walk(item, row, path + [key])
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(item, row, path + [index])


def corpus_expressions():
    found = []
    for file in sorted(CORPUS.rglob("*.y*ml")):
        for row, path, node in _walk(load_file(file).value, None, []):
            found.append((str(file.relative_to(CORPUS)), row, path, node))
    return found


FOUND = corpus_expressions()


def test_every_corpus_expression_is_listed_exactly_once():
    in_corpus = {(file, node.expr) for file, _, _, node in FOUND}
    listed_ok = {(file, expr) for file, exprs in SUPPORTED.items() for expr in exprs}
    assert not listed_ok & set(UNSUPPORTED)
    assert in_corpus == listed_ok | set(UNSUPPORTED)
    assert len(FOUND) == 100  # occurrences, so a file that gains a copy of a known expression shows


def test_the_claimed_coverage_includes_dsh_bundles_and_presets():
    claimed = [f for f in SUPPORTED if f.startswith(OFFICIAL + "packages/bundle/")
               or any(f"agent-presets/{p}/" in f for p in ("standard", "code", "minimal"))]
    assert len(claimed) == 6
    assert not [key for key in UNSUPPORTED if key[0] in claimed]


@pytest.mark.parametrize("file, row, path, node", [f for f in FOUND if (f[0], f[3].expr) not in
                                                     UNSUPPORTED],
                         ids=lambda v: v if isinstance(v, str) else "")
def test_supported_expression_parses_and_evaluates(file, row, path, node):
    tree = parse(node.expr)
    assert path[0] in ("config", "disabled")
    # config sees the row's injected services; disabled is evaluated without a fiber
    injected = None if path[0] == "disabled" else {
        svc: SERVICES[svc] for svc in (row.get("inject") or []) if svc in SERVICES}
    assert evaluate(tree, sample_env(injected)) == EXPECTED[node.expr]


@pytest.mark.parametrize("key", sorted(UNSUPPORTED), ids=lambda k: k[0] + ":" + k[1][:30])
def test_unsupported_expression_is_refused_with_the_row_message(key):
    file, expr = key
    row, path, node = next((r, p, n) for f, r, p, n in FOUND if f == file and n.expr == expr)
    with pytest.raises(JsSyntaxError) as info:
        parse(expr)
    assert UNSUPPORTED[key] in info.value.reason
    dotted = ".".join(str(part) for part in path)
    full_id, name = row.get("id", "?"), row.get("name", "?")
    found = check_expressions(row[path[0]], full_id=full_id, name=name, base_path=path[0])
    match = [err for p, n, err in found if p == dotted]
    assert [err.message for err in match] == [
        f'unsupported !!js expression in row "{full_id}" ({name}) at {dotted}: '
        + " ".join(line.strip() for line in expr.strip().splitlines())]
    assert match[0].loc == node.loc
