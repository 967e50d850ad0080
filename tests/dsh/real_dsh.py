"""The real dsh 0.1.1-rc.2, set up from ``shared/dsh`` and run as a user runs it.

``shared/dsh/setup.sh`` builds a runnable dsh from its source once per machine (Node 24 and pnpm
11.7.0 from the npm registry; about a minute). Its cache lives outside the clone
(``$DSH_REF_DIR``, else ``~/.cache/dsh-ref/0.1.1-rc.2``), so a fresh clone in CI pays the set-up
once and every later run finds it ready. A set-up that fails fails the suite with its last lines:
the differential tests are part of what CI proves, never a reason to skip.
"""
from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

SETUP_TIMEOUT_S = 900


def find_setup_script() -> Path:
    """``shared/dsh/setup.sh`` beside the checkout (as on the dev machines and in CI)."""
    candidates = [os.environ.get("DSHCTL_DSH_SETUP", ""),
                  Path(__file__).resolve().parents[2].parent / "shared" / "dsh" / "setup.sh",
                  "/work/shared/dsh/setup.sh"]
    for candidate in candidates:
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    raise RuntimeError("shared/dsh/setup.sh is not beside this checkout; set DSHCTL_DSH_SETUP to its path")


def set_up() -> Path:
    """Run the set-up (instant once done) and return the path of the ``dsh`` wrapper it prints."""
    script = find_setup_script()
    done = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=SETUP_TIMEOUT_S,
                          stdin=subprocess.DEVNULL)
    wrapper = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    if done.returncode != 0 or not wrapper or not Path(wrapper).is_file():
        tail = "\n".join((done.stderr or "").splitlines()[-25:])
        raise RuntimeError(f"the real dsh could not be set up ({script}, exit {done.returncode}):\n{tail}")
    return Path(wrapper)


@dataclass(frozen=True)
class RealDsh:
    """The wrapper and the files beside it (node, pnpm, the no-typert patch, dsh's source tree)."""
    wrapper: Path

    @property
    def bin_dir(self) -> Path:
        return self.wrapper.parent

    @property
    def ref_dir(self) -> Path:
        return self.wrapper.parent.parent

    @property
    def source(self) -> Path:
        return self.ref_dir / "dsh-src"

    @property
    def no_typert_patch(self) -> Path:
        return self.ref_dir / "no-typert.cordis.patch.yml"

    @property
    def node(self) -> Path:
        return self.bin_dir / "node"

    def env(self, home: Path, **extra: str) -> dict[str, str]:
        """A clean environment for one dsh run on ``home``: no user npm/pnpm config leaks in."""
        env = {k: v for k, v in os.environ.items()
               if not k.lower().startswith(("npm_config_", "pnpm_config_", "dsh_"))}
        env.update(DSH_HOME=str(home), DSH_TELEMETRY_DISABLED="1", NO_COLOR="1", FORCE_COLOR="0")
        env.update(extra)
        return env

    def run(self, home: Path, *args: str, cwd: Path | None = None, timeout: float = 300,
            env: dict[str, str] | None = None, check: bool = False) -> subprocess.CompletedProcess:
        """``dsh ARGS…`` with ``DSH_HOME=home``; stdout and stderr as text."""
        done = subprocess.run([str(self.wrapper), *args], cwd=cwd, env=env or self.env(home),
                              capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        if check and done.returncode != 0:
            raise AssertionError(f"dsh {' '.join(args)} exited {done.returncode}:\n{done.stderr[-3000:]}")
        return done

    def node_script(self, script: Path, *args: str, cwd: Path | None = None, timeout: float = 120,
                    env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        """Run a TypeScript/JS file under dsh's own Node and tsx, with dsh's packages importable."""
        run_env = dict(env or os.environ)
        run_env["TSX_TSCONFIG_PATH"] = str(self.source / "tsconfig.json")
        tsx = self.source / "node_modules" / "tsx" / "dist" / "esm" / "index.mjs"
        return subprocess.run([str(self.node), "--import", str(tsx), str(script), *args], cwd=cwd,
                              env=run_env, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
