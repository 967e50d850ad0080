"""`status` never lies (issue 14): the watcher race between a failing save, `reload` and `status`.

Watcher on; an edit whose row fails in `apply` is saved, then `reload` and `status` run at random
offsets (as separate control requests, as two `dshctl` invocations would). After every reload the
verdict, the status document and the configs the fibers actually hold must agree.
"""
from __future__ import annotations

import asyncio
import random

from dshctl.host.control_handler import handle

from .helpers import InProcess, make_home, run_async, until, user_file, write

ROWS = """\
    - id: c
      name: ./plugins/boom.py
      config: {tag: old}
"""


def fiber_config(host, row_id: str):
    entry = next(e for e in host.all_entries() if e.id == row_id)
    return None if entry.fiber is None else dict(entry.fiber.config)


def status_config(doc: dict, row_id: str):
    return next(r for r in doc["rows"] if r["id"] == row_id)["config"]


@run_async(timeout=240)
async def test_verdict_status_and_fibers_agree_through_the_watcher_race(tmp_path):
    home = make_home(tmp_path, ROWS.replace("{tag: old}", "{tag: old, sleep: 0.01}"))
    rng = random.Random(14)
    async with InProcess(home) as host:
        good = {"tag": "old", "sleep": 0.01}
        for n in range(30):
            failing = rng.random() < 0.7
            config = {"tag": f"t{n}", "sleep": 0.01, **({"fail": "yes"} if failing else {})}
            text = "- id: c\n  config: {" + ", ".join(f"{k}: {v}" for k, v in config.items()) + "}\n"
            write(user_file(home), text)
            await asyncio.sleep(rng.uniform(0, 0.05))   # the watcher may or may not have started
            reload = asyncio.ensure_future(handle(host, {"op": "reload"}))
            await asyncio.sleep(rng.uniform(0, 0.03))
            during = (await handle(host, {"op": "status"}))["status"]
            held_during = fiber_config(host, "c")      # no await since the answer: the same moment
            answer = await reload
            verdict = answer["outcome"]["verdict"]
            after = (await handle(host, {"op": "status"}))["status"]
            held_after = fiber_config(host, "c")
            if not failing:
                good_before, good = good, config
            assert verdict in (("rolled-back", "unchanged") if failing else ("applied", "unchanged")), answer
            for doc, held in ((during, held_during), (after, held_after)):
                shown = status_config(doc, "c")
                assert shown == held, (n, verdict, shown, held)          # status = what fibers hold
                assert "fail" not in shown, (n, verdict, doc["host"])    # a rolled-back config never shows
                assert doc["host"]["running_digest"] is not None
                last = doc["last_reload"]
                if last is not None and last["verdict"] == "applied":
                    assert doc["host"]["running_digest"] == last["digest"]
            assert status_config(after, "c") in (good, good_before if not failing else good)
            if failing:
                assert status_config(after, "c") == good
                assert any("old tree still running" in line for line in after["host"]["drift"]), after["host"]
            await until(lambda: not host.reloader.lock.locked() and not host.reloader.dirty, what="quiet")
            settled = (await handle(host, {"op": "status"}))["status"]
            assert status_config(settled, "c") == fiber_config(host, "c") == good
