"""The preset tree: checklist item 58 (cordis-runtime.md §7, dsh-config.md §7)."""
from __future__ import annotations

import json

import pytest

from dshctl.loader import LoaderError, mount_preset

from .helpers import Log, Recorder, live_fibers, make_loader, run

HOST_PLUGIN = '''
name = "host-tool"
def apply(ctx, config):
    ctx.provide("tool", {"from": "host base"})
'''
LOCAL_PLUGIN = '''
name = "beside"
inject = ["tool"]
def apply(ctx, config):
    ctx.provide("skill", ctx.tool)
'''


def make_host(tmp_path):
    pkg = tmp_path / "host" / "node_modules" / "@acme" / "tools"
    pkg.mkdir(parents=True)
    (pkg / "package.json").write_text(json.dumps({"name": "@acme/tools", "dsh": {"python": "py/tool.py"}}))
    (pkg / "py").mkdir()
    (pkg / "py" / "tool.py").write_text(HOST_PLUGIN)
    return tmp_path / "host"


def make_preset(tmp_path, text):
    preset = tmp_path / "presets" / "coder"
    preset.mkdir(parents=True, exist_ok=True)
    (preset / "agent.cordis.yml").write_text(text)
    (preset / "beside.py").write_text(LOCAL_PLUGIN)
    return preset


GOOD = """
- {id: tool, name: "@acme/tools", isolate: {tool: true}}
- {id: skill, name: ./beside.py, isolate: {tool: true, skill: true}}
"""


def test_item_58_preset_tree_mounts_never_writes_and_stays_out_of_entries(tmp_path):
    host = make_host(tmp_path)
    preset = make_preset(tmp_path, GOOD)
    # the two rows share one realm only when isolated under a label; use one to make `skill` see `tool`
    (preset / "agent.cordis.yml").write_text(GOOD.replace("tool: true", "tool: session"))
    before = (preset / "agent.cordis.yml").read_bytes()

    async def main():
        loader = make_loader(Log(), Recorder("p", Log()))
        await loader.start([{"id": "p", "name": "p"}], base_dir=host)
        scope = loader.root_ctx.isolate("skill")
        mount = await mount_preset(loader, scope, preset, host_base=host)
        ids = [e.full_id for e in mount.include.tree.order()]
        assert ids == ["coder:tool", "coder:skill"]
        assert all(e.fiber.state.name == "ACTIVE" for e in mount.include.tree.order())
        assert [e.full_id for e in loader.entries()] == ["p"]
        skill = mount.include.tree.store["skill"].fiber
        assert skill.ctx.get("skill") == {"from": "host base"}
        await skill.update({"changed": True})                  # would write back in an include
        await mount.include.flush()
        assert (preset / "agent.cordis.yml").read_bytes() == before
        await mount.dispose()
        assert live_fibers(loader) == 1
        await loader.stop()
    run(main())


@pytest.mark.parametrize("text, detail", [
    ("- {id: skill, name: ./beside.py, isolate: {skill: true}}\n",
     '1 row(s) did not activate:\ncoder:skill (./beside.py): waiting for tool'),
    ("- {id: tool, name: \"@acme/tools\"}\n",
     "row(s) published process-global service(s) [tool]; a preset service must sit behind an "
     "`isolate` realm or move to the host composition"),
])
def test_item_58_preset_mount_refused_and_disposed(tmp_path, text, detail):
    host = make_host(tmp_path)
    preset = make_preset(tmp_path, text)

    async def main():
        loader = make_loader(Log())
        await loader.start([], base_dir=host)
        with pytest.raises(LoaderError, match='refusing to mount preset "coder" into an unscoped'):
            await mount_preset(loader, loader.root_ctx, preset, host_base=host)
        with pytest.raises(LoaderError) as info:
            await mount_preset(loader, loader.root_ctx.isolate("session"), preset, host_base=host)
        assert info.value.message == (f'agent-presets: preset "coder" failed to mount: {detail} '
                                      f'({preset / "agent.cordis.yml"})')
        assert live_fibers(loader) == 0
        assert loader.root_ctx.get("tool") is None
        await loader.stop()
    run(main())
