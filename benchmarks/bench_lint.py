"""Foundation figures: lint throughput, round-trip edits, hostile inputs, CLI start-up (run on demand).

    .venv/bin/python benchmarks/bench_lint.py [CORPUS_DIR]
"""
from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dshctl.core.yaml.dialect import load_yaml
from dshctl.core.yaml.emit import dump
from dshctl.errors import ParseError
from dshctl.core.yaml.roundtrip import EditableYaml
from dshctl.lint import lint_paths, lint_text

CORPUS = Path(sys.argv[1] if len(sys.argv) > 1 else "/work/shared/corpus")


def timed(fn, runs: int = 5) -> list[float]:
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


def show(label: str, runs: list[float]) -> None:
    print(f"{label}: median {statistics.median(runs):.1f} ms  runs {', '.join(f'{r:.0f}' for r in runs)}")


def big_patch(rows: int) -> str:
    return dump([{"insert": [{"id": f"row-{i}", "name": f"dsh-plugin-{i}",
                              "config": {"port": 3000 + i, "hosts": ["a", "b"], "on": True}}]}
                 for i in range(rows)])


def main() -> None:
    lint_paths([CORPUS])  # warm imports and schema compilation
    files = lint_paths([CORPUS])[1]
    show(f"lint corpus ({files} files)", timed(lambda: lint_paths([CORPUS])))
    text = big_patch(1000)
    print(f"generated patch list: 1,000 rows, {len(text):,} chars")
    show("lint 1,000-row patch list", timed(lambda: lint_text(text, "cordis.patch.yml")))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cordis.patch.yml"
        path.write_text(text)

        def edit() -> None:
            doc = EditableYaml.read(path)
            doc.set_key((500, "insert", 0), "disabled", True)
            doc.write(expect_sha256=doc.sha256)
            path.write_text(text)

        show("round-trip read + set_key + atomic write, 1,000 rows", timed(edit))


def refused(text: str) -> None:
    try:
        load_yaml(text, "hostile.yml")
    except ParseError:
        return
    raise AssertionError("hostile input was accepted")


def hostile() -> None:
    bomb = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    bomb += [f"l{i}: &l{i} [" + ", ".join([f"*{'a' if i == 1 else f'l{i - 1}'}"] * 10) + "]" for i in range(1, 9)]
    show("refuse a billion-laughs alias bomb (10^9 nodes)", timed(lambda: refused("\n".join(bomb) + "\n")))
    deep = "[" * 100_000 + "]" * 100_000 + "\n"
    show("refuse 100,000 nested flow sequences", timed(lambda: refused(deep)))


def start_up() -> None:
    dshctl = str(Path(sys.executable).parent / "dshctl")
    for args in (["--version"], ["--help"]):
        show(f"dshctl {args[0]} (process start to exit)",
             timed(lambda: subprocess.run([dshctl, *args], stdout=subprocess.DEVNULL, check=True), runs=11))


if __name__ == "__main__":
    main()
    hostile()
    start_up()
