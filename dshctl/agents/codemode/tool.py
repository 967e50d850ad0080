"""The ``run_code`` tool (dsh's Python flavor): two required arguments, ``code`` and ``description``.

``code`` runs as the body of an async function in a fresh worker (``runtime.run_program``) with one
global, ``tools``, whose members are the calling agent's visible tools (``run_code`` itself excluded),
bridged through the tool pipeline (``bridge.py``). The result the model sees is what the program printed
and returned; a failed run is an error result ``code run failed (<kind>): <message>`` followed by the
captured output, so the model can correct itself.
"""
from __future__ import annotations

import json
from typing import Any, Callable

from dshctl.agents.sandbox.policy import SANDBOX_UNAVAILABLE, SandboxUnavailableError
from dshctl.agents.tools.definition import as_tool, error_result

from .bridge import SubCallBridge
from .runtime import Limits, Namespace, RunResult, run_program
from .sdk import render_sdk

RUN_CODE = "run_code"
DESCRIPTION = (
    "Run a Python program against the available tools. Two required arguments: `code`, the BODY of an "
    "async function (top-level `await` and `return` work), and `description`, a short summary of what "
    "the program does. Call tools as `await tools.name(args)` as declared in the system prompt. Use "
    "`print(...)` and/or `return <value>` for the program's output, and keep it to what you need.")
PARAMETERS = {
    "type": "object",
    "required": ["code", "description"],
    "additionalProperties": False,
    "properties": {
        "code": {"type": "string", "description": "The program: the body of an async Python function."},
        "description": {"type": "string", "description": "What the program does, in 5-10 words (shown in UIs)."},
    },
}
NO_OUTPUT = "(run_code completed with no output)"
MAX_INDENT = 10                 # deeper structures are rendered compact, so text stays linear in size


def render_value(value: Any, depth: int = 0) -> str:
    """A completion value as the model reads it: strings as they are, the rest as 2-space JSON."""
    if isinstance(value, str) and depth == 0:
        return value
    if (depth + 1) * 2 > MAX_INDENT or not isinstance(value, (dict, list)) or not value:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":") if depth else None)
    pad, inner = "  " * depth, "  " * (depth + 1)
    if isinstance(value, list):
        items = [inner + render_value(item, depth + 1) for item in value]
        return "[\n" + ",\n".join(items) + f"\n{pad}]"
    items = [f"{inner}{json.dumps(k, ensure_ascii=False)}: {render_value(v, depth + 1)}" for k, v in value.items()]
    return "{\n" + ",\n".join(items) + f"\n{pad}}}"


def outer_result(result: RunResult) -> dict:
    """The curated ``run_code`` result: the only part of the run that enters the model's history."""
    if result.error is not None:
        captured = "\nCaptured output:\n" + "\n".join(result.logs) if result.logs else ""
        message = f"code run failed ({result.error['kind']}): {result.error['message']}{captured}"
        return {"content": [{"type": "text", "text": message}], "isError": True,
                "error": {"message": message, "code": "CODE_RUN_FAILED"}}
    parts = ["\n".join(result.logs)] if result.logs else []
    if result.has_value:
        parts.append(render_value(result.value))
    text = "\n".join(p for p in parts if p) or NO_OUTPUT
    out: dict = {"content": [{"type": "text", "text": text}], "meta": {"logs": result.logs}}
    if result.has_value:
        out["meta"]["result"] = result.value
    return out


def sdk_schemas(view: dict) -> list[dict]:
    """The SDK generator's input: each visible tool's name, description, input and output schema."""
    out = []
    for name, definition in view.items():
        if name == RUN_CODE:
            continue
        try:
            tool = as_tool(name, definition)
        except TypeError:
            continue
        entry = {"name": name, "description": tool.description, "parameters": tool.parameters}
        output = definition.get("output_schema", definition.get("outputSchema")) if isinstance(definition, dict) else None
        if output is not None:
            entry["output"] = output
        out.append(entry)
    return out


def sdk_for(agent) -> str:
    return render_sdk(sdk_schemas(agent.tool_view()))


def _classifier(agent) -> Callable[[str, Any], tuple[bool, list]]:
    def classify(name: str, args: Any) -> tuple[bool, list]:
        definition = agent.tool_view().get(name)
        try:
            tool = as_tool(name, definition)
        except TypeError:
            return False, []
        return tool.parallel_safe(args), tool.touches(args)
    return classify


def make_run_code(limits: Callable[[], Limits], *, max_parallel: Callable[[], int],
                  take_worker: Callable[[], Any], after_run: Callable[[], None], live: set,
                  dispatch=None) -> dict:
    """The registry definition. Knobs are read per run, so a config update applies to the next run."""
    async def execute(args: dict, run) -> dict:
        if not str(args.get("description", "")).strip():
            return {"content": [{"type": "text", "text": "Error: invalid description: expected a non-empty string"}],
                    "isError": True, "error": {"message": "invalid description", "code": "TOOL_ARGUMENTS_SCHEMA"}}
        agent = run.agent
        if dispatch is None:
            from dshctl.agents.tools.pipeline import dispatch as pipeline_dispatch
        bridge = SubCallBridge(agent, run.call_id, turn=run.turn, step=run.step,
                               dispatch=dispatch or pipeline_dispatch, classify=_classifier(agent),
                               max_parallel=max_parallel())
        names = sorted(n for n in agent.tool_view() if n != RUN_CODE)
        namespace = Namespace("tools", {n: bridge.binding(n) for n in names})
        try:
            try:
                worker = take_worker()
            except SandboxUnavailableError as exc:      # fail closed: nothing ran
                return error_result(exc.message, SANDBOX_UNAVAILABLE)
            result = await run_program(args["code"], [namespace], limits(), abort=run.abort,
                                       worker=worker, on_start=live.add, on_end=live.discard)
        finally:
            await bridge.close()
            after_run()
        return outer_result(result)

    return {"description": DESCRIPTION, "parameters": PARAMETERS, "execute": execute}
