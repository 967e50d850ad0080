"""Conformance items 59-70 and 76 of cordis-runtime.md §11 (HMR), on a real host in this process:
real module files saved on disk, watchfiles, the real loader and runtime."""
from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import dshctl.host.runner as runner_module
from dshctl.host.hmr_graph import classify

from .helpers import InProcess, bundle_dir, make_home, row_map, run_async, until, user_file, write

ROWS = """\
    - id: a
      name: ./plugins/svc.py
      config: {service: alpha, tag: one}
    - id: c
      name: ./plugins/boom.py
"""

SVC_V2 = '''
name = "svc"
VERSION = 2
schema = {"type": "object", "default": {}}

class Thing:
    version = VERSION

def apply(ctx, config):
    thing = Thing()
    thing.config = config
    ctx.provide(config.get("service", "thing"), thing)
    ctx.on("pong", lambda log: log.append(("v2", config.get("tag"))))
'''


def svc_file(home: Path) -> Path:
    return bundle_dir(home) / "plugins" / "svc.py"


def svc_version(text: str, version: int) -> str:
    return SVC_V2.replace("VERSION = 2", f"VERSION = {version}")


def module_of(host, row_id: str):
    return sys.modules[host.loader.resolve(row_id).plugin.__name__]


@run_async()
async def test_item_59_saving_a_plugin_module_swaps_its_code(tmp_path):
    home = make_home(tmp_path, ROWS)
    async with InProcess(home) as host:
        other = host.loader.resolve("c").fiber
        log = []
        host.root.emit("ping", log)
        assert log == [("v1", "one")]
        write(svc_file(home), SVC_V2)
        await until(lambda: host.root.get("alpha") is not None and host.root.get("alpha").version == 2,
                    what="the new module")
        log.clear()
        host.root.emit("ping", log)        # the removed handler is gone
        host.root.emit("pong", log)        # the new one is there
        assert log == [("v2", "one")]
        assert host.loader.resolve("c").fiber is other   # the unrelated plugin was not touched


@run_async()
async def test_item_60_saving_an_imported_module_reloads_its_importers(tmp_path):
    home = make_home(tmp_path, ROWS + "    - id: g\n      name: ./plugins/pkgplug\n")
    async with InProcess(home) as host:
        assert host.root.get("greeting") == "one"
        untouched = host.loader.resolve("a").fiber
        write(bundle_dir(home) / "plugins" / "pkgplug" / "helper.py", 'GREETING = "two"\n')
        await until(lambda: host.root.get("greeting") == "two", what="the importer to reload")
        assert host.loader.resolve("a").fiber is untouched


def test_item_61_modules_left_undecided_by_an_import_cycle_are_declined():
    # changed -> x; x <-> y form a cycle that never reaches an accepted or a declined module
    imports = {"changed": {"x"}, "x": {"y"}, "y": {"x"}}
    accepted, declined = classify({"changed"}, imports, external=set())
    assert accepted == {"changed"}
    assert {"x", "y"} <= declined
    # whereas a module importing the changed one back is accepted
    accepted, _ = classify({"changed"}, {"changed": {"z"}, "z": {"changed"}}, external=set())
    assert accepted == {"changed", "z"}


@run_async()
async def test_item_62_saving_a_config_file_reconciles_instead_of_reloading_modules(tmp_path):
    home = make_home(tmp_path, ROWS)
    async with InProcess(home) as host:
        write(user_file(home), "- id: a\n  disabled: true\n")
        await until(lambda: host.root.get("alpha") is None, what="the row to unload")
        assert row_map(host.loader.tree_snapshot())["a"][1] == "DISABLED"
        assert host.modules.passes == 0 and host.reloader.passes >= 1


@run_async()
async def test_item_63_a_change_to_dshctl_itself_requests_a_restart(tmp_path):
    home = make_home(tmp_path, ROWS)
    async with InProcess(home) as host:
        fiber = host.loader.resolve("a").fiber
        framework_file = Path(runner_module.__file__).resolve()
        host.modules.on_change([framework_file])   # never edit the shared source tree in a test
        # (other people may be saving dshctl files right now: those are listed too)
        await until(lambda: str(framework_file) in host.modules.restart_required, what="the restart request")
        assert host.loader.resolve("a").fiber is fiber
        assert str(framework_file) in host.status()["host"]["modules"]["restart_required"]


@run_async()
async def test_item_64_a_syntax_error_restores_the_cache_and_keeps_the_old_fibers(tmp_path):
    home = make_home(tmp_path, ROWS)
    run = InProcess(home)
    async with run as host:
        old_module, old_thing = module_of(host, "a"), host.root.get("alpha")
        write(svc_file(home), "def apply(ctx, config):\n    return (\n")
        await until(lambda: run.events("hmr/import-failed"), what="the import failure")
        assert module_of(host, "a") is old_module
        assert sys.modules[old_module.__name__] is old_module
        assert host.root.get("alpha") is old_thing            # untouched, still working
        assert svc_file(home).resolve() in host.modules.stash  # kept for the next save
        write(svc_file(home), SVC_V2)
        await until(lambda: getattr(host.root.get("alpha"), "version", 0) == 2, what="the fix to recover")
        assert not host.modules.stash


@run_async()
async def test_item_65_a_swap_failure_rebuilds_rows_from_the_old_module(tmp_path):
    home = make_home(tmp_path, ROWS)
    run = InProcess(home)
    async with run as host:
        old_module = module_of(host, "a")
        write(svc_file(home), SVC_V2 + "\ninject = 42\n")   # imports fine, cannot be plugged
        await until(lambda: run.events("hmr/swap-failed"), what="the swap failure")
        assert sys.modules[old_module.__name__] is old_module
        entry = host.loader.resolve("a")
        assert entry.plugin is old_module and entry.fiber is not None
        await until(lambda: host.root.get("alpha") is not None, what="the rebuilt row")
        assert host.root.get("alpha").version == 1 and host.root.get("alpha").config["tag"] == "one"


@run_async()
async def test_item_66_an_exception_in_the_new_apply_leaves_the_swap_standing(tmp_path):
    home = make_home(tmp_path, ROWS)
    async with InProcess(home) as host:
        write(svc_file(home), SVC_V2.replace("    thing = Thing()", "    raise ValueError('new code broke')"))
        await until(lambda: row_map(host.loader.tree_snapshot())["a"][1] == "FAILED", what="FAILED")
        assert "new code broke" in str(host.loader.resolve("a").fiber.error)
        write(svc_file(home), svc_version(SVC_V2, 3))
        await until(lambda: host.root.get("alpha") is not None and host.root.get("alpha").version == 3,
                    what="a later fix to recover")


@run_async()
async def test_item_67_the_row_keeps_its_id_and_points_to_the_new_fiber(tmp_path):
    home = make_home(tmp_path, ROWS)
    async with InProcess(home) as host:
        old_fiber = host.loader.resolve("a").fiber
        write(svc_file(home), SVC_V2)
        await until(lambda: host.loader.resolve("a").fiber not in (None, old_fiber), what="the swap")
        new_fiber = host.loader.resolve("a").fiber
        await new_fiber
        assert old_fiber.uid is None and new_fiber.uid is not None
        assert host.root.get("alpha").version == 2        # the service is the new instance
        assert [r["id"] for r in host.loader.tree_snapshot()] == ["a", "c"]


@run_async()
async def test_item_68_hmr_reload_is_emitted_once_and_the_stash_cleared(tmp_path):
    home = make_home(tmp_path, ROWS)
    async with InProcess(home) as host:
        events = []
        host.root.on("hmr/reload", events.append)
        write(svc_file(home), SVC_V2)
        await until(lambda: events, what="hmr/reload")
        await asyncio.sleep(0.3)
        assert len(events) == 1
        plugin = events[0]["plugin"]
        assert plugin["filename"] == str(svc_file(home).resolve())
        assert plugin["runtime"] is host.root.registry.get(host.loader.resolve("a").plugin)
        assert not host.modules.stash


@run_async()
async def test_item_69_saves_within_the_debounce_window_are_batched(tmp_path):
    home = make_home(tmp_path, ROWS)
    async with InProcess(home) as host:
        for version in (2, 3, 4):
            write(svc_file(home), svc_version(SVC_V2, version))
            time.sleep(0.01)   # 10 ms apart on disk; blocking, so a slow loop cannot stretch the gaps
        await until(lambda: host.root.get("alpha") is not None and host.root.get("alpha").version == 4,
                    what="the final content")
        await asyncio.sleep(0.3)
        assert 1 <= host.modules.passes <= 2


@run_async()
async def test_item_70_config_refreshes_are_serialized_coalesced_and_awaited_on_dispose(tmp_path):
    home = make_home(tmp_path, ROWS)
    run = InProcess(home)
    async with run as host:
        start = host.reloader.passes
        write(user_file(home), "- id: c\n  config: {sleep: 0.2, tag: 0}\n")
        await until(lambda: host.reloader.lock.locked(), what="the first refresh")
        for i in range(1, 5):   # these land while that refresh runs (its apply takes 0.2 s)
            write(user_file(home), f"- id: c\n  config: {{sleep: 0.2, tag: {i}}}\n")
        await until(lambda: host.loader.resolve("c").options["config"]["tag"] == 4, what="the last edit")
        await asyncio.sleep(0.3)
        assert host.reloader.passes - start <= 3         # coalesced: never one pass per save
        write(user_file(home), "- id: c\n  config: [broken\n")
        await until(lambda: run.events("reload/failed"), what="the logged failure")
        write(user_file(home), "- id: c\n  config: {sleep: 0.3, tag: last}\n")
        await until(lambda: host.reloader.lock.locked(), what="a running refresh")
    # leaving the block disposed the host: it waited for the running refresh to finish
    assert host.last_reload.verdict == "applied"
    assert host.last_reload.digest is not None


@run_async()
async def test_item_76_a_module_saved_during_a_reload_is_reloaded_by_the_next_pass(tmp_path):
    rows = ROWS.replace("      name: ./plugins/boom.py\n",
                        "      name: ./plugins/boom.py\n      config: {slow_dispose: 0.4}\n")
    home = make_home(tmp_path, rows)
    async with InProcess(home) as host:
        boom = bundle_dir(home) / "plugins" / "boom.py"
        write(boom, boom.read_text() + "\nEDITED = True\n")
        await until(lambda: host.modules.lock.locked(), what="the first pass")
        write(svc_file(home), SVC_V2)                   # saved while that pass disposes slowly
        await until(lambda: host.root.get("alpha") is not None and host.root.get("alpha").version == 2,
                    timeout=8, what="the second module to reload")
        assert getattr(module_of(host, "c"), "EDITED", False)
