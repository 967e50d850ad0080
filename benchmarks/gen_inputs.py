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
