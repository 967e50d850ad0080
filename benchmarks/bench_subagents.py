"""Parallel sub-agents: the wall time of one parent delegating N background children, against one child.

    .venv/bin/python benchmarks/bench_subagents.py [--children 5] [--model-ms 1000] [--runs 3]

A host boots in process on the scripted model (``@dshctl/llm-script``). The parent's first reply
starts ``--children`` continuable children with ``subagent``. Each child answers once after
``--model-ms``, and the parent answers the settlement notices. The time runs from the prompt to the
parent being idle with every notice taken. The baseline is the same run with one child. Overhead per
child = (N-child wall − one-child wall) / (N − 1): what delegation adds beyond the model's own time
(child sessions created, logs committed, notices delivered, the parent's extra steps).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.agents.subagent_helpers import call, subagent_home  # noqa: E402
from tests.host.helpers import InProcess  # noqa: E402


def replies(children: int, model_ms: int) -> list[dict]:
    tasks = [f"task-{n}" for n in range(children)]
    return [{"toolCalls": [call("subagent", {"description": t, "prompt": t}) for t in tasks]},
            {"when": "started subagent", "text": "waiting"},
            *({"when": t, "text": f"{t} done", "delayMs": model_ms} for t in tasks),
            *({"when": "Background subagent", "text": "noted"} for _ in tasks)]


async def one_run(children: int, model_ms: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        home = subagent_home(Path(tmp), replies(children, model_ms),
                             subagents_config={"maxConcurrent": max(children, 1)})
        async with InProcess(home) as host:
            agent = await host.root.get("agents").open()
            subagents = host.root.get("subagents")
            began = time.perf_counter()
            agent.followup("delegate")
            await subagents.until_quiet(agent)
            wall = time.perf_counter() - began
            notices = sum(1 for e in agent.session.events if e["type"] == "user/message"
                          and e["data"]["source"]["kind"] == "subagent-settled")
            assert notices == children, notices
            return wall


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--children", type=int, default=5)
    parser.add_argument("--model-ms", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    one = [asyncio.run(one_run(1, args.model_ms)) for _ in range(args.runs)]
    many = [asyncio.run(one_run(args.children, args.model_ms)) for _ in range(args.runs)]
    m1, mn = statistics.median(one), statistics.median(many)
    print(json.dumps({"children": args.children, "model_ms": args.model_ms, "runs": args.runs,
                      "one_child_wall_ms": round(m1 * 1000, 1), "n_children_wall_ms": round(mn * 1000, 1),
                      "sequential_would_be_ms": round(m1 * 1000 * args.children, 1),
                      "overhead_per_extra_child_ms": round((mn - m1) * 1000 / max(args.children - 1, 1), 1)}))


if __name__ == "__main__":
    main()
