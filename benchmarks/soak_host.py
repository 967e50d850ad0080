"""Soak test of config hot reload: N random edits of a live host's user layer (default 1,000).

    .venv/bin/python benchmarks/soak_host.py [--edits 1000] [--seed 1]

Boots a real host in process (real loader, runtime, files and control socket) on a 10-row profile.
Each step saves a random edit — a valid config change, disable/enable, an inserted row, a YAML syntax
error, a row whose apply raises, a duplicate id, an empty file, or deleting the file — then asks for a
reload through the control socket, exactly as `dshctl reload` does, and checks the invariant:

* a valid edit is applied, an invalid one is rejected or rolled back (the verdict matches the edit);
* the running tree is exactly the model's new tree, or exactly the previous one — never a mix;
* `status` tells the truth (its rows are the running tree; after a failure its drift says so).

Exits 1 at the first violation. Not part of the test suite (minutes, not seconds).
"""
from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dshctl.host import control  # noqa: E402
from dshctl.host.hostlog import HostLog  # noqa: E402
from dshctl.host.runner import Host, HostOptions  # noqa: E402

PLUGIN = """
name = 'soak'
schema = {'type': 'object', 'default': {}}

def apply(ctx, config):
    if config.get('fail'):
        raise RuntimeError('soak failure')
"""
ROWS = 10


def make_home(root: Path) -> Path:
    home = root / "home"
    pdir = home / "profiles" / "soak"
    bundle = pdir / "node_modules" / "@soak" / "rows"
    (bundle / "plugins").mkdir(parents=True)
    (pdir / "package.json").write_text(json.dumps({"dsh": {"profile": {"bundles": ["@soak/rows"]}}}))
    (bundle / "package.json").write_text(json.dumps({"name": "@soak/rows", "files": ["cordis.patch.yml"],
                                                     "dsh": {"bundle": {"patch": "cordis.patch.yml"}}}))
    (bundle / "plugins" / "soak.py").write_text(PLUGIN)
    lines = ["- insert:"]
    for i in range(ROWS):
        lines += [f"    - id: r{i}", "      name: ./plugins/soak.py", f"      config: {{n: {i}}}"]
    (bundle / "cordis.patch.yml").write_text("\n".join(lines) + "\n")
    return home


class Model:
    """The user layer as data: per-row overrides plus inserted rows."""

    def __init__(self, plugin: Path):
        self.plugin = plugin
        self.overrides: dict[str, dict] = {}
        self.inserted: list[str] = []

    def copy(self) -> "Model":
        other = Model(self.plugin)
        other.overrides = {k: dict(v) for k, v in self.overrides.items()}
        other.inserted = list(self.inserted)
        return other

    def text(self) -> str:
        out = []
        for rid, o in self.overrides.items():
            out.append(f"- id: {rid}")
            if "config" in o:
                out.append(f"  config: {json.dumps(o['config'])}")
            if "disabled" in o:
                out.append(f"  disabled: {str(o['disabled']).lower()}")
        if self.inserted:
            out.append("- insert:")
            out += [f"  - id: {rid}\n    name: {self.plugin}\n    config: {{n: 0}}" for rid in self.inserted]
        return "\n".join(out) + "\n" if out else "[]\n"

    def tree(self) -> dict:
        expected = {}
        for i in range(ROWS):
            o = self.overrides.get(f"r{i}", {})
            state = "DISABLED" if o.get("disabled") else "ACTIVE"
            expected[f"r{i}"] = (state, o.get("config", {"n": i}))
        for rid in self.inserted:
            expected[rid] = ("ACTIVE", {"n": 0})
        return expected


def running(doc: dict) -> dict:
    return {row["id"]: (row["state"], row["config"]) for row in doc["rows"]}


def edit(model: Model, rng: random.Random, step: int) -> tuple[Model | None, str]:
    """A new model (valid edit) or None with the text of an invalid file."""
    kind = rng.choice(["config", "config", "disable", "enable", "insert", "remove-insert",
                       "syntax", "fail", "duplicate", "empty", "delete"])
    new = model.copy()
    row = f"r{rng.randrange(ROWS)}"
    if kind == "config":
        new.overrides.setdefault(row, {})["config"] = {"n": step}
    elif kind == "disable":
        new.overrides.setdefault(row, {})["disabled"] = True
    elif kind == "enable":
        new.overrides.get(row, {}).pop("disabled", None)
    elif kind == "insert":
        new.inserted.append(f"x{step}")
    elif kind == "remove-insert" and new.inserted:
        new.inserted.pop(rng.randrange(len(new.inserted)))
    elif kind == "syntax":
        return None, model.text() + "- id: r1\n  config: {n: [1, 2\n"
    elif kind == "fail":
        bad = model.copy()
        bad.overrides.setdefault(row, {})["config"] = {"fail": True}
        bad.overrides[row].pop("disabled", None)
        return None, bad.text()
    elif kind == "duplicate":
        return None, model.text() + f"- insert:\n  - id: {row}\n    name: {model.plugin}\n"
    elif kind == "empty":
        return None, "# nothing\n"
    elif kind == "delete":
        return Model(model.plugin), ""          # no user layer: the bundle defaults
    return new, new.text()


async def soak(edits: int, seed: int) -> int:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        home = make_home(Path(tmp))
        user = home / "profiles" / "soak" / "cordis.patch.yml"
        log = HostLog("json", io.StringIO())
        log.attach_logging()  # plugin failures are expected here: keep them in the (discarded) log
        host = Host(HostOptions(home=home, profile="soak", watch=False, apply_timeout=5), log)
        await host.boot()
        await host.serve()
        model = Model(home / "profiles" / "soak" / "node_modules" / "@soak" / "rows" / "plugins" / "soak.py")
        counts: dict[str, int] = {}
        started = time.perf_counter()
        try:
            for step in range(edits):
                before = model.tree()
                new, text = edit(model, rng, step)
                if new is not None and text == "":
                    user.unlink(missing_ok=True)
                else:
                    tmp_file = user.with_name(user.name + ".tmp~")
                    tmp_file.write_text(text)
                    os.replace(tmp_file, user)
                answer = await asyncio.to_thread(control.request, host.socket_path, {"op": "reload"})
                verdict = answer["outcome"]["verdict"]
                counts[verdict] = counts.get(verdict, 0) + 1
                doc = (await asyncio.to_thread(control.request, host.socket_path, {"op": "status"}))["status"]
                tree = running(doc)
                if new is not None:
                    ok = verdict in ("applied", "unchanged") and tree == new.tree()
                    model = new
                else:
                    ok = verdict in ("rejected", "rolled-back") and tree == before and \
                        doc["host"]["drift"][:1] == [answer["outcome"]["summary"]]
                if not ok:
                    print(f"step {step}: invariant broken ({verdict})\n  file:\n{text}\n  running: {tree}\n"
                          f"  expected: {(new or model).tree()}\n  outcome: {answer['outcome']}")
                    return 1
        finally:
            await host.shutdown()
        seconds = time.perf_counter() - started
        print(f"{edits} edits in {seconds:.1f} s ({seconds / edits * 1000:.1f} ms each), invariant held; "
              f"verdicts: {json.dumps(counts, sort_keys=True)}")
    return 0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--edits", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    sys.exit(asyncio.run(soak(args.edits, args.seed)))


if __name__ == "__main__":
    main()
