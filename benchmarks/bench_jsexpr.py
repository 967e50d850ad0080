"""Figures for the !!js subset: parse and evaluate cost per expression, and evaluating the configs of
a large profile. Run on demand: `.venv/bin/python benchmarks/bench_jsexpr.py`."""
from __future__ import annotations

import time
from pathlib import Path

from dshctl.core.jsexpr import JsEnv, evaluate, evaluate_config, parse
from dshctl.core.jsexpr.parser import _Parser
from dshctl.core.yaml.nodes import JsExpr

EXPRESSIONS = [
    "process.platform === 'win32'",
    "process.env.DSH_CWD ?? process.cwd()",
    "dshHomePath('sessions')",
    "ctx.webStartup.port ?? 3080",
    "process.platform === 'win32' ? 'never' : ((process.env.DSH_PERMISSION_MODE ?? "
    "'workspace-write') === 'danger-full-access' ? 'never' : 'ask')",
]
ENV = JsEnv({"DSH_CWD": "/w"}, "/cwd", "linux", Path("/home/u/.dsh"),
            get_service={}.get, injected={"webStartup": {"port": 4000}})


def per_call_us(fn, repeat: int) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - start) / repeat * 1e6


def main() -> None:
    for expr in EXPRESSIONS:
        tree = parse(expr)
        uncached = per_call_us(lambda: _Parser(expr).parse_all(), 5000)
        cached = per_call_us(lambda: parse(expr), 50000)
        ev = per_call_us(lambda: evaluate(tree, ENV), 50000)
        print(f"{len(expr):4d} chars  parse {uncached:7.1f} us  cached {cached:5.2f} us  "
              f"evaluate {ev:5.2f} us  {expr[:48]}")
    for rows in (100, 1000, 10000):
        configs = [{"port": JsExpr(EXPRESSIONS[3]), "root": JsExpr(EXPRESSIONS[2]),
                    "mode": JsExpr(EXPRESSIONS[4]), "static": {"a": [1, 2, 3], "b": "x"}}
                   for _ in range(rows)]
        start = time.perf_counter()
        for i, config in enumerate(configs):
            evaluate_config(config, ENV, full_id=f"row-{i}", name="pkg")
        ms = (time.perf_counter() - start) * 1e3
        print(f"evaluate_config over {rows:6d} rows (3 expressions each): {ms:8.1f} ms "
              f"({ms * 1e3 / rows:.1f} us/row)")


if __name__ == "__main__":
    main()
