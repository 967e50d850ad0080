"""The emitter at scale: ``emit.dump_rows`` over generated entry lists, and js-yaml's own dump in Node.

    .venv/bin/python benchmarks/bench_emit.py [--rows N] [--repeat R] [--js-yaml DIR]

Rows mix what real compositions hold: plugin names that need quotes ('@scope/x'), `!!js`, long
descriptions that fold, multi-line prompts, nested config. Prints the median CPU time of dumping them
with dshctl and, when ``--js-yaml`` names a directory whose node_modules holds js-yaml (the test cache,
``~/.cache/dshctl-test-node``), of ``yaml.dump`` with dsh's options on the same rows in one Node process.
Not part of the tests (the differential test checks the bytes are equal).
"""
from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import time
from pathlib import Path

from dshctl.core.yaml.emit import dump_rows
from dshctl.core.yaml.nodes import JsExpr

NODE = r"""
const { createRequire } = require('node:module');
const path = require('node:path');
const yaml = createRequire(path.join(process.argv[1], 'noop.js'))('js-yaml');
const JsExpr = new yaml.Type('tag:yaml.org,2002:js', { kind: 'scalar', resolve: (d) => typeof d === 'string',
  construct: (d) => ({ __jsExpr: d }), predicate: (v) => v instanceof Object && '__jsExpr' in v,
  represent: (v) => v.__jsExpr });
const schema = yaml.JSON_SCHEMA.extend(JsExpr);
const rows = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
const times = [];
for (let r = 0; r < Number(process.argv[2]); r++) {
  const start = process.cpuUsage();
  yaml.dump(rows, { schema, noRefs: true });
  const used = process.cpuUsage(start);
  times.push((used.user + used.system) / 1000);
}
console.log(JSON.stringify(times));
"""


def rows(n: int) -> list[dict]:
    out = []
    for i in range(n):
        out.append({
            "id": f"row-{i}", "name": "@deepseek-ai/dsh-llm" if i % 2 else f"./plugins/p{i}.py",
            "disabled": JsExpr("process.env.DSH_OFF === 'yes'") if i % 5 == 0 else False,
            "config": {"description": ("a long description of what this plugin row does " * 3).strip(),
                       "prompt": "line one\nline two: with a colon\n", "port": 3000 + i, "ratio": i / 7,
                       "tags": ["a", "yes", "1e5", "x#y"], "nested": {"k": None, "empty": {}, "list": []}},
        })
    return out


def cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--js-yaml", type=Path, default=None)
    args = parser.parse_args()
    data = rows(args.rows)
    times = []
    for _ in range(args.repeat):
        start = cpu()
        text = dump_rows(data)
        times.append((cpu() - start) * 1000)
    ours = statistics.median(times)
    print(f"rows: {args.rows}, text: {len(text):,} chars")
    print(f"dshctl emit.dump_rows   median CPU {ours:8.1f} ms  (runs: {', '.join(f'{t:.0f}' for t in times)})")
    if args.js_yaml:
        wire = json.dumps([{**r, "disabled": {"__jsExpr": r["disabled"].expr}} if isinstance(r["disabled"], JsExpr)
                           else r for r in data])
        proc = subprocess.run(["node", "-e", NODE, str(args.js_yaml), str(args.repeat)], input=wire,
                              capture_output=True, text=True, check=True)
        js = statistics.median(json.loads(proc.stdout))
        print(f"js-yaml 4.2.0 yaml.dump  median CPU {js:8.1f} ms  -> dshctl / js-yaml = {ours / js:.1f}x")


if __name__ == "__main__":
    main()
