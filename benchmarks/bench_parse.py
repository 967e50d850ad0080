"""Cold parsing against the libyaml floor (issue 30), on the 1,000-preset set as users run it.

    .venv/bin/python benchmarks/bench_parse.py [--runs 5] [--presets 1000] [--source DIR] [--list 10000]

The set is ``gen_inputs.real_presets``: presets written the way the shared corpus's real ones are
(block-scalar prompts, ``!!js`` one-line and ``>-``, flow sequences with quoted items, one-line flow
mappings), seeded, so every run reads the same bytes. Every figure is CPU time (user + sys):

- floor: libyaml's events through Python (ruamel's ``CParser``, an event loop doing nothing), one
  process, the files already in memory, per core;
- parse: ``dialect.load_yaml`` of the same texts in the same process (the tree every command reads);
- the CLI in fresh processes, interleaved: ``dshctl --no-cache lint -j 1 DIR``, a cold
  ``dshctl --no-cache preset list --root DIR -f json`` and a warm ``dshctl lint DIR`` (cache filled);
- ``--list N``: a cold ``preset list`` of N presets of the same kind (issue 30: <= 4 s CPU at 10,000).

``--source DIR`` runs the CLI rows from another checkout too (``git archive`` of a commit extracted
to DIR, run with the same venv), interleaved with this one: the "before" column.
Prints each target line with met / NOT MET and the load average before and after.
"""
from __future__ import annotations

import argparse
import gc
import io
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import gen_inputs  # noqa: E402

PARSE_RATIO, LINT_COLD_S, LINT_WARM_S, LIST_COLD_S = 2.0, 4.0, 0.3, 4.0


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def floor_s(texts: list[str]) -> float:
    from ruamel.yaml.cyaml import CParser
    from ruamel.yaml.events import StreamEndEvent

    started = time.process_time()
    for text in texts:
        parser = CParser(io.StringIO(text))
        while type(parser.get_event()) is not StreamEndEvent:
            pass
        parser.dispose()
    return time.process_time() - started


def parse_s(items: list[tuple[str, str]]) -> float:
    from dshctl.core.yaml import blockscan
    from dshctl.core.yaml.dialect import load_yaml

    for remembered in (getattr(blockscan, name, None) for name in ("_PLAIN", "_KEYS", "_FLOWS", "_LINES")):
        if remembered is not None:
            remembered.clear()  # cold: what a new process knows of these lines (nothing)
    started = time.process_time()
    for path, text in items:
        load_yaml(text, path)
    return time.process_time() - started


def shape_s(items: list[tuple[str, str]]) -> float:
    """The position-free reader a preset scan uses (``blockshape``), cold as ``parse_s``."""
    from dshctl.core.yaml import blockscan, blockshape

    for remembered in (blockscan._PLAIN, blockscan._KEYS, blockscan._FLOWS, blockscan._LINES, blockshape._HEADERS):
        remembered.clear()
    started = time.process_time()
    for path, text in items:
        blockshape.scan_values(text, path)
    return time.process_time() - started


def in_process(files: list[Path], runs: int) -> tuple[float, float, float]:
    items = [(str(p), p.read_text(encoding="utf-8")) for p in files]
    texts = [t for _, t in items]
    floors, parses, shapes = [], [], []
    gc.disable()
    for _ in range(runs):
        floors.append(floor_s(texts))
        parses.append(parse_s(items))
        shapes.append(shape_s(items))
        gc.collect()
    gc.enable()
    return statistics.median(floors), statistics.median(parses), statistics.median(shapes)


def child_cpu(cmd: list[str], env: dict) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def runner(source: Path | None) -> tuple[list[str], dict]:
    """How to start the CLI of this checkout, or of ``source`` with the same interpreter (its
    directory first on the path: ``python -c`` puts the working directory there, so that is not
    left to chance either)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if source is None:
        return [str(ROOT / ".venv" / "bin" / "dshctl")], env
    env["PYTHONPATH"] = str(source)
    boot = f"import sys; sys.path.insert(0, {str(source)!r}); from dshctl.cli.app import main; sys.exit(main())"
    return [sys.executable, "-c", boot], env


def cli_rows(base: Path, sources: dict[str, Path | None], runs: int) -> dict[str, dict[str, float]]:
    presets = base / "presets"
    out: dict[str, dict[str, list[float]]] = {name: {} for name in sources}
    for name, source in sources.items():  # warm-up: bytecode written, the warm lint's cache filled
        cmd, env = runner(source)
        env["XDG_CACHE_HOME"] = str(base / f"cache-{name}")
        subprocess.run([*cmd, "lint", str(presets)], env=env, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    for run in range(runs + 1):  # the first round is not counted: every module's bytecode written
        for name, source in sources.items():
            cmd, env = runner(source)
            env["XDG_CACHE_HOME"] = str(base / f"cache-{name}")
            rows = {
                "lint cold (-j 1)": [*cmd, "--no-cache", "lint", "-j", "1", str(presets)],
                "lint warm": [*cmd, "lint", str(presets)],
                "preset list cold": [*cmd, "--no-cache", "preset", "list", "--home", str(base / "home"),
                                     "--no-user-root", "--root", str(presets), "-f", "json"],
            }
            for label, row in rows.items():
                cpu = child_cpu(row, env)
                if run:
                    out[name].setdefault(label, []).append(cpu)
    return {name: {k: statistics.median(v) for k, v in rows.items()} for name, rows in out.items()}


def list_rows(count: int, sources: dict[str, Path | None], runs: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="bench-parse-list-") as tmp:
        base = Path(tmp)
        gen_inputs.real_presets(base / "presets", count)
        times: dict[str, list[float]] = {name: [] for name in sources}
        for _ in range(runs):
            for name, source in sources.items():
                cmd, env = runner(source)
                times[name].append(child_cpu([*cmd, "--no-cache", "preset", "list", "--home", str(base / "home"),
                                              "--no-user-root", "--root", str(base / "presets"), "-f", "json"], env))
        return {name: statistics.median(t) for name, t in times.items()}


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT MET"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--presets", type=int, default=1000)
    parser.add_argument("--source", type=Path, help="another checkout to run interleaved (before)")
    parser.add_argument("--list", type=int, default=0, help="also a cold preset list of N presets")
    args = parser.parse_args()
    print(f"load average {load()} on {os.cpu_count()} cores")
    sources: dict[str, Path | None] = {"after": None}
    if args.source:
        sources = {"before": args.source.resolve(), "after": None}
    with tempfile.TemporaryDirectory(prefix="bench-parse-") as tmp:
        base = Path(tmp)
        files = gen_inputs.real_presets(base / "presets", args.presets)
        size = sum(p.stat().st_size for p in files)
        print(f"{args.presets:,} presets, {size / 1e6:.1f} MB of agent.cordis.yml")
        floor, parse, shape = in_process(files, args.runs)
        print(f"in process: libyaml floor {floor:.3f} s, load_yaml {parse:.3f} s: {parse / floor:.2f}x the floor; "
              f"target <= {PARSE_RATIO:.0f}x: {verdict(parse <= PARSE_RATIO * floor)}; "
              f"the preset scan's position-free reader {shape:.3f} s ({shape / floor:.2f}x)")
        figures = cli_rows(base, sources, args.runs)
    for name, rows in figures.items():
        for label, cpu in rows.items():
            print(f"{name:>6}  {label:<18} median CPU {cpu:6.2f} s  ({cpu / floor:4.1f}x the floor)")
    after = figures["after"]
    print(f"target: lint cold <= {LINT_COLD_S} s: {after['lint cold (-j 1)']:.2f} s: "
          f"{verdict(after['lint cold (-j 1)'] <= LINT_COLD_S)}")
    print(f"target: lint warm <= {LINT_WARM_S} s: {after['lint warm']:.3f} s: {verdict(after['lint warm'] <= LINT_WARM_S)}")
    print(f"target: cold parse (lint, preset scan) <= {PARSE_RATIO:.0f}x the floor: lint "
          f"{after['lint cold (-j 1)'] / floor:.1f}x, preset list {after['preset list cold'] / floor:.1f}x")
    if args.list:
        listed = list_rows(args.list, sources, max(1, args.runs // 2))
        for name, cpu in listed.items():
            print(f"{name:>6}  preset list cold, {args.list:,} presets: median CPU {cpu:.2f} s")
        print(f"target: cold preset list of {args.list:,} <= {LIST_COLD_S} s: {listed['after']:.2f} s: "
              f"{verdict(listed['after'] <= LIST_COLD_S)}")
    print(f"load average {load()}")


if __name__ == "__main__":
    main()
