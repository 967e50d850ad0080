"""``@dshctl/code-mode``: offers ``run_code`` to the agents that see this row, and its SDK in their prompt.

A row in the host's tree registers ``run_code`` in the global tool layer (every agent); a row in a
preset's ``agent.cordis.yml`` registers it in that preset's layer, so only agents of that preset get
Code Mode. The tools registry refuses the name to every other plugin. Each request of an agent that
sees ``run_code`` carries the generated SDK at the end of its system prompt (an ``agent/request``
listener; the request header logs it). Unloading the row stops every live run — its worker is killed.
"""
from __future__ import annotations

import weakref

from .pool import WorkerPool
from .runtime import Limits
from .tool import RUN_CODE, make_run_code, sdk_for

name = "@dshctl/code-mode"
inject = ["tools"]
schema = {"type": "object", "default": {}, "additionalProperties": False, "properties": {
    "cpuSeconds": {"type": "integer", "minimum": 1, "default": 30},
    "memoryMb": {"type": "integer", "minimum": 64, "default": 1024},
    "wallSeconds": {"type": "number", "exclusiveMinimum": 0, "default": 120},
    "maxLogBytes": {"type": "integer", "minimum": 64, "default": 65536},
    "maxValueBytes": {"type": "integer", "minimum": 64, "default": 65536},
    "maxFrameBytes": {"type": "integer", "minimum": 4096, "default": 16777216},
    "maxCallsInFlight": {"type": "integer", "minimum": 1, "default": 64},
    "maxParallelSubCalls": {"type": "integer", "minimum": 1, "default": 10},
    "python": {"type": "string"},
    "prestart": {"type": "integer", "minimum": 0, "maximum": 4, "default": 1},
    "sandbox": {"enum": ["read-only", "workspace-write", "danger-full-access"], "default": "workspace-write"},
    "network": {"type": "boolean", "default": False},
}}


def limits_of(config: dict) -> Limits:
    return Limits(cpu_seconds=config["cpuSeconds"], address_space_bytes=config["memoryMb"] << 20,
                  wall_seconds=float(config["wallSeconds"]), max_log_bytes=config["maxLogBytes"],
                  max_value_bytes=config["maxValueBytes"], max_frame_bytes=config["maxFrameBytes"],
                  max_calls_in_flight=config["maxCallsInFlight"])


class SystemPrompts:
    """Per agent: the system prompt it was given and the one we composed from it, so the SDK section is
    replaced (never stacked) from one request to the next, and a prompt changed meanwhile becomes the
    new base."""

    def __init__(self):
        self.seen: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def compose(self, agent, system: str | None, sdk: str | None) -> str | None:
        base, composed = self.seen.get(agent, (None, None))
        if system != composed or composed is None:
            base = system
        if sdk is None:
            self.seen.pop(agent, None)
            return base
        composed = f"{base}\n\n{sdk}" if base else sdk
        self.seen[agent] = (base, composed)
        return composed


PROMPTS = SystemPrompts()     # shared by every code-mode row (a global one and a preset's see one agent)


def apply(ctx, config):
    live: set = set()
    def confinement() -> dict:
        # ctx.sandbox when a @dshctl/sandbox row provides one, else the process's own provider
        return {"sandbox": ctx.get("sandbox"), "mode": config["sandbox"], "network": config["network"]}
    pool = WorkerPool(config["prestart"], config.get("python"), confinement)
    definition = make_run_code(lambda: limits_of(config), max_parallel=lambda: config["maxParallelSubCalls"],
                               take_worker=pool.take, after_run=pool.prestart, live=live)
    definition["pool"] = pool           # not read by the pipeline; lets a host (and tests) see idle workers
    scope = ctx.get("toolScope") or "global"
    ctx.tools.register_transport(ctx, RUN_CODE, definition, scope)

    async def on_request(payload, next_):
        agent = payload.get("agent") if isinstance(payload, dict) else None
        options = getattr(agent, "options", None)
        if isinstance(options, dict):
            sees = RUN_CODE in agent.tool_view()   # only this plugin can have registered it
            options["system"] = PROMPTS.compose(agent, options.get("system"), sdk_for(agent) if sees else None)
            if options["system"] is None:
                options.pop("system")
        return await next_()
    ctx.on("agent/request", on_request)

    def workers():
        pool.prestart()                 # the first run finds a worker waiting
        def stop():
            pool.close()
            for run in list(live):
                run.stop("abort", "Code Mode was unloaded")
        return stop
    ctx.effect(workers, "code-mode.workers")

