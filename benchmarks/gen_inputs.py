"""Deterministic benchmark inputs (issue 13): the same bytes on every run and every machine.

- ``presets(dir, n)``: n presets of 20-60 rows each, with nested config and ``!!js`` (seeded RNG);
- the 10,000-preset roots are ``bench_presets.build``; the 20-bundle home is ``bench_compose.build_home``.
"""
from __future__ import annotations

import random
from pathlib import Path


def presets(base: Path, count: int, seed: int = 1000) -> list[Path]:
    rng = random.Random(seed)
    files = []
    for i in range(count):
        d = base / f"preset-{i:04d}"
        d.mkdir(parents=True, exist_ok=True)
        lines = []
        for r in range(rng.randrange(20, 61)):
            lines += [f"- id: row-{r}", f"  name: '@dshctl/plugin-{rng.randrange(30)}'"]
            if r % 5 == 0:
                lines.append("  disabled: !!js process.env.DSH_OFF === '1'")
            lines += ["  config:", f"    port: {3000 + r}", "    nested:",
                      f"      level: {rng.choice(['info', 'warn'])}", f"      tags: [a, b, {r}]",
                      "      deep:", f"        x: {rng.random():.3f}"]
        (d / "agent.cordis.yml").write_text("\n".join(lines) + "\n")
        (d / "preset.yml").write_text(f"name: Preset {i}\norder: {i % 9}\n")
        files.append(d / "agent.cordis.yml")
    return files


_WORDS = ("agent tool shell read write the a of to and in session plan review code file test model "
          "context prompt user output result error patch step turn cache host preset config").split()


def _sentence(rng: random.Random, low: int = 6, high: int = 16) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randrange(low, high))).capitalize() + "."


def _real_row(rng: random.Random, r: int) -> list[str]:
    """One row in the shapes the shared corpus's presets use (issue 30): block-scalar prompts
    (``|``, ``|-``, ``>-``), ``!!js`` one-line and ``>-``, flow sequences with quoted items,
    one-line flow mappings, comments, groups."""
    lines = [f"# {_sentence(rng, 4, 9)}", f"- id: row-{r}", f"  name: '@dshctl/plugin-{rng.randrange(40)}'"]
    shape = r % 6
    if shape == 0:
        lines += ["  config:", f"    text: {rng.choice(['|', '|-', '>-'])}"]
        for p in range(rng.randrange(1, 4)):
            if p:
                lines.append("")
            lines += [f"      {_sentence(rng)}" for _ in range(rng.randrange(1, 4))]
    elif shape == 1:
        lines += ["  disabled: !!js process.env.DSH_OFF === '1'", "  config:",
                  f"    port: !!js process.env.PORT ?? {3000 + r}",
                  "    cwd: !!js >-", f"      process.env.DSH_CWD_{r} ??",
                  "      process.cwd()"]
    elif shape == 2:
        lines += ["  config:", "    command: npx",
                  f"    args: ['-y', '@scope/server-{rng.randrange(99)}', \"--port\", '{4000 + r}']",
                  f"    roots: ['.', 'src/{rng.choice(_WORDS)}']"]
    elif shape == 3:
        lines += ["  config:", f"    engines: {{node: '>={rng.randrange(16, 24)}'}}",
                  f"    limits: {{maxBytes: {rng.randrange(1, 9) * 1024}, retries: {rng.randrange(5)}}}"]
    elif shape == 4:
        lines += ["  group: true", "  isolate:", "    logger: true", "  config:",
                  f"    - id: child-{r}", "      name: \"@dshctl/logger\"",
                  f"      config: {{level: {rng.choice(['info', 'warn'])}}}"]
    else:
        lines += ["  config:", f"    port: {3000 + r}", "    nested:",
                  f"      level: {rng.choice(['info', 'warn'])}", f"      tags: [a, b, {r}]",
                  f"      x: {rng.random():.3f}"]
    return lines


def real_presets(base: Path, count: int, seed: int = 1030) -> list[Path]:
    """``count`` presets of 12-36 rows written the way the corpus's real presets are (issue 30's
    1,000-preset set: block scalars, ``!!js``, flow collections), seeded: the same bytes every run."""
    rng = random.Random(seed)
    files = []
    for i in range(count):
        d = base / f"preset-{i:04d}"
        d.mkdir(parents=True, exist_ok=True)
        lines = [f"# Preset {i}: {_sentence(rng)}", ""]
        for r in range(rng.randrange(12, 37)):
            lines += _real_row(rng, r) + [""]
        (d / "agent.cordis.yml").write_text("\n".join(lines))
        (d / "preset.yml").write_text(f"name: Preset {i}\ndescription: {_sentence(rng)}\norder: {i % 9}\n")
        files.append(d / "agent.cordis.yml")
    return files
