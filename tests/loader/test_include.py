"""`cordis:include`: checklist items 51-57 (cordis-runtime.md §7, §8)."""
from __future__ import annotations

import json
import os
import stat

import pytest

from dshctl.loader import ConfigFileError, LoaderError

from .helpers import Log, Recorder, make_loader, run, states

PLUGIN = '''
name = "local"
def apply(ctx, config):
    LOG.append(("local", config))
LOG = []
'''


def include_row(path, **config):
    return {"id": "inc", "name": "cordis:include", "config": {"path": path, **config}}


def include_of(loader):
    return loader.resolve("inc").subtree.source


def test_item_51_relative_names_resolve_beside_the_included_file_and_extensions(tmp_path):
    sub = tmp_path / "deep" / "er"
    sub.mkdir(parents=True)
    (sub / "local.py").write_text(PLUGIN)
    (sub / "tree.yml").write_text("- {id: l, name: ./local.py, config: {n: 1}}\n")
    (tmp_path / "tree.txt").write_text("[]\n")

    async def main():
        loader = make_loader(Log())
        await loader.start([include_row("deep/er/tree.yml")], base_dir=tmp_path)
        assert states(loader) == {"inc": "ACTIVE", "inc:l": "ACTIVE"}
        assert loader.resolve("inc:l").fiber.plugin.LOG == [("local", {"n": 1})]
        await loader.stop()
        other = make_loader(Log())
        report = await other.start([include_row("tree.txt")], base_dir=tmp_path)
        [failed] = report.by_action("failed")
        assert failed.full_id == "inc" and 'extension ".txt" not supported' in failed.reason
        await other.stop()
    run(main())


def test_item_52_missing_file_uses_initial_and_writes_it_else_not_found(tmp_path):
    log = Log()
    p = Recorder("p", log)

    async def main():
        loader = make_loader(log, p)
        await loader.start([include_row("new.yml", initial=[{"id": "x", "name": "p", "config": 1}])],
                           base_dir=tmp_path)
        assert states(loader)["inc:x"] == "ACTIVE"
        assert (tmp_path / "new.yml").read_text() == "- id: x\n  name: p\n  config: 1\n"
        await loader.stop()
        other = make_loader(log, p)
        report = await other.start([include_row("absent.yml")], base_dir=tmp_path / "nowhere")
        [failed] = report.by_action("failed")
        assert "config file not found: " in failed.reason and failed.reason.endswith("absent.yml")
        await other.stop()
    run(main())


def test_item_53_refresh_with_identical_bytes_does_nothing(tmp_path):
    log = Log()
    p = Recorder("p", log)
    (tmp_path / "t.yml").write_text("- {id: x, name: p}\n")

    async def main():
        loader = make_loader(log, p)
        await loader.start([include_row("t.yml")], base_dir=tmp_path)
        include = include_of(loader)
        log.clear()
        (tmp_path / "t.yml").write_text("- {id: x, name: p}\n")   # rewritten, same bytes
        assert await include.refresh() is False and log == []
        (tmp_path / "t.yml").write_text("- {id: x, name: p, config: 2}\n")
        assert await include.refresh() is True and log == [("dispose", "p", None), ("apply", "p", 2)]
        await loader.stop()
    run(main())


def test_item_54_writes_are_coalesced_atomic_keep_js_and_readonly_raises(tmp_path):
    log = Log()
    p = Recorder("p", log)
    target = tmp_path / "t.yml"
    target.write_text("- {id: x, name: p, config: {a: !!js \"process.env.A ?? 'z'\"}}\n")
    (tmp_path / "t.json").write_text(json.dumps([{"id": "j", "name": "p", "config": {"k": 1}}]))

    async def main():
        loader = make_loader(log, p)
        await loader.start([include_row("t.yml"),
                            {"id": "js", "name": "cordis:include", "config": {"path": "t.json"}}],
                           base_dir=tmp_path)
        include = include_of(loader)
        writes = []
        original = include.write

        async def counting_write():
            writes.append(1)
            await original()
        include.write = counting_write
        for _ in range(3):
            include.schedule_write()
        await include.flush()
        assert writes == [1]                                  # three requests, one write
        assert target.read_text() == "- id: x\n  name: p\n  config:\n    a: !!js process.env.A ?? 'z'\n"
        assert not list(tmp_path.glob("*.tmp*"))              # the temp file was renamed over
        json_include = loader.resolve("js").subtree.source
        await json_include.write()
        assert json.loads((tmp_path / "t.json").read_text()) == [{"id": "j", "name": "p", "config": {"k": 1}}]
        os.chmod(target, stat.S_IRUSR)
        try:
            with pytest.raises(LoaderError, match="cannot overwrite readonly config"):
                await include.write()
        finally:
            os.chmod(target, stat.S_IRUSR | stat.S_IWUSR)
        await loader.stop()
    run(main())


def test_item_55_patches_on_plain_rows_and_nested_groups(tmp_path):
    log = Log()
    p = Recorder("p", log)
    (tmp_path / "t.yml").write_text("""
- {id: a, name: p, config: 1}
- id: g
  name: cordis:group
  group: true
  config:
    - id: inner
      name: cordis:group
      group: true
      config: [{id: deep, name: p, config: 1}]
""")
    patches = [
        {"id": "a", "config": 2},                                   # override
        {"id": "deep", "config": 3},                                # nested group target
        {"insert": [{"id": "top", "name": "p", "config": 4}]},      # root insert
        {"id": "inner", "insert": [{"id": "ins", "name": "p", "config": 5}]},  # group insert
        {"id": "a", "name": "other", "config": 99},                 # name mismatch: skipped
        {"id": "missing", "config": 99},                            # missing id: skipped
        {"id": "a", "insert": [{"id": "no", "name": "p"}]},          # not a group: skipped
    ]

    async def main():
        loader = make_loader(log, p)
        await loader.start([include_row("t.yml", patches=patches)], base_dir=tmp_path)
        configs = {e.full_id: e.options.get("config") for e in loader.resolve("inc").subtree.order()
                   if e.name == "p"}
        assert configs == {"inc:a": 2, "inc:deep": 3, "inc:ins": 5, "inc:top": 4}
        await loader.stop()
    run(main())


def test_item_56_patches_never_mutate_data_reapplied_on_refresh_and_config_update(tmp_path):
    log = Log()
    p = Recorder("p", log)
    (tmp_path / "t.yml").write_text("- {id: a, name: p, config: base}\n")
    layered = [{"insert": [{"id": "new", "name": "p", "config": "inserted"}]},
               {"id": "new", "config": "patched-after-insert"}, {"id": "a", "config": "over"}]

    def configs(loader):
        return {e.id: e.options.get("config") for e in loader.resolve("inc").subtree.order()}

    async def main():
        loader = make_loader(log, p)
        await loader.start([include_row("t.yml", patches=layered)], base_dir=tmp_path)
        include = include_of(loader)
        assert configs(loader) == {"a": "over", "new": "patched-after-insert"}
        assert include.data == [{"id": "a", "name": "p", "config": "base"}]   # parsed data untouched
        (tmp_path / "t.yml").write_text("- {id: a, name: p, config: base2}\n- {id: b, name: p}\n")
        await include.refresh()
        assert configs(loader) == {"a": "over", "b": None, "new": "patched-after-insert"}
        inc_fiber = loader.resolve("inc").fiber
        await loader.update([include_row("t.yml")])          # patches omitted: overlay removed
        assert configs(loader) == {"a": "base2", "b": None}
        assert loader.resolve("inc").fiber is inc_fiber       # same path: no restart
        await loader.stop()
    run(main())


def test_item_57_broken_file_raises_and_keeps_last_good_tree(tmp_path):
    log = Log()
    p = Recorder("p", log)
    target = tmp_path / "t.yml"
    target.write_text("- {id: a, name: p, config: 1}\n")

    async def main():
        loader = make_loader(log, p)
        await loader.start([include_row("t.yml")], base_dir=tmp_path)
        include = include_of(loader)
        for text, what in [("- {id: a, name: p, config: [\n", "failed to parse config file"),
                           ("id: a\n", "failed to validate config file"),
                           ("", "failed to validate config file")]:
            target.write_text(text)
            with pytest.raises(ConfigFileError, match=what):
                await include.refresh()
            assert states(loader) == {"inc": "ACTIVE", "inc:a": "ACTIVE"}
        target.write_text("- {id: a, name: p, config: 2}\n")
        assert await include.refresh() is True
        assert loader.resolve("inc:a").fiber.config == 2
        await loader.stop()
    run(main())


def test_write_retries_busy_renames_and_keeps_the_file_on_failure(tmp_path, monkeypatch):
    """Fault injection: the rename fails (EBUSY twice, then for good with EIO)."""
    import errno as errno_mod
    import time

    from dshctl.core import fsutil

    log = Log()
    p = Recorder("p", log)
    target = tmp_path / "t.yml"
    target.write_text("- {id: x, name: p, config: 1}\n")
    real_replace = fsutil.os.replace
    failures = []

    def flaky_replace(src, dst):
        if failures:
            code = failures.pop(0)
            raise OSError(code, errno_mod.errorcode[code])
        return real_replace(src, dst)
    monkeypatch.setattr(fsutil.os, "replace", flaky_replace)

    async def main():
        loader = make_loader(log, p)
        await loader.start([include_row("t.yml")], base_dir=tmp_path)
        include = include_of(loader)
        failures.extend([errno_mod.EBUSY, errno_mod.EBUSY])
        started = time.perf_counter()
        await loader.resolve("inc:x").fiber.update(2)              # persisted by write-back
        await include.flush()
        assert time.perf_counter() - started >= 0.15                # backed off 50 + 100 ms
        assert "config: 2" in target.read_text() and failures == []
        failures.extend([errno_mod.EIO])
        await loader.resolve("inc:x").fiber.update(3)
        with pytest.raises(LoaderError, match="failed to write config file .*t.yml"):
            await include.flush()
        assert "config: 2" in target.read_text()                   # the previous content stays
        assert sorted(f.name for f in tmp_path.iterdir()) == ["t.yml"]   # no temp file left
        await loader.stop()
    run(main())


def test_include_config_update_to_another_path_restarts_it(tmp_path):
    log = Log()
    p = Recorder("p", log)
    (tmp_path / "one.yml").write_text("- {id: x, name: p, config: one}\n")
    (tmp_path / "two.yml").write_text("- {id: y, name: p, config: two}\n")

    async def main():
        loader = make_loader(log, p)
        await loader.start([include_row("one.yml")], base_dir=tmp_path)
        report = await loader.update([include_row("two.yml")])
        assert report.action_of("inc") == "restarted"
        assert states(loader) == {"inc": "ACTIVE", "inc:y": "ACTIVE"}
        assert log.of("dispose") == [("p", "one")] and loader.resolve("inc:x") is None
        await loader.stop()
    run(main())


def test_a_broken_file_is_reported_with_js_yamls_text_as_dsh_does(tmp_path):
    # dsh's include: ConfigFileError("failed to parse config file <path>") caused by the YAMLException,
    # whose String() starts "YAMLException: <reason> (<line>:<col>)" (checked in Node).
    log = Log()
    p = Recorder("p", log)
    target = tmp_path / "t.yml"
    target.write_text("- {id: a, name: p, config: 1}\n")

    async def main():
        loader = make_loader(log, p)
        await loader.start([include_row("t.yml")], base_dir=tmp_path)
        target.write_text("- {id: a, name: p, config: [\n")
        with pytest.raises(ConfigFileError) as exc:
            await include_of(loader).refresh()
        assert exc.value.message == (f"failed to parse config file {target}: YAMLException: "
                                     "unexpected end of the stream within a flow collection (2:1)")
        assert (exc.value.loc.line, exc.value.loc.column) == (2, 1) and exc.value.hint
        await loader.stop()
    run(main())
