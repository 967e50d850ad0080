"""Write-back of included files: checklist items 44-46 (cordis-runtime.md §8)."""
from __future__ import annotations

import pytest

from dshctl.core.yaml.dialect import load_yaml
from dshctl.loader.include import sort_row

from .helpers import Log, Recorder, make_loader, run, states


def setup(tmp_path, text):
    (tmp_path / "t.yml").write_text(text)
    return [{"id": "inc", "name": "cordis:include", "config": {"path": "t.yml"}}]


def on_disk(tmp_path):
    return load_yaml((tmp_path / "t.yml").read_text(), "t.yml").value


def test_item_44_self_update_writes_config_back_unless_no_save_or_failed(tmp_path):
    log = Log()
    p = Recorder("p", log)
    rows = setup(tmp_path, "- {id: x, name: p, config: {v: 1}}\n")

    async def main():
        loader = make_loader(log, p)
        await loader.start(rows, base_dir=tmp_path)
        include = loader.resolve("inc").subtree.source
        fiber = loader.resolve("inc:x").fiber
        await fiber.update({"v": 2}, no_save=True)
        await include.flush()
        assert on_disk(tmp_path)[0]["config"] == {"v": 1}
        await fiber.update({"v": 3})
        await include.flush()
        assert on_disk(tmp_path)[0]["config"] == {"v": 3} and fiber.state.name == "ACTIVE"
        with pytest.raises(RuntimeError):
            await fiber.update({"fail": True})
        await include.flush()
        assert on_disk(tmp_path)[0]["config"] == {"v": 3}
        await loader.stop()
    run(main())


def test_item_45_self_dispose_disables_the_row_but_loader_disposal_does_not(tmp_path):
    log = Log()
    p, q = Recorder("p", log), Recorder("q", log)
    rows = setup(tmp_path, "- {config: {v: 1}, name: p, id: x}\n- {id: y, name: q}\n")

    async def main():
        loader = make_loader(log, p, q)
        await loader.start(rows, base_dir=tmp_path)
        include = loader.resolve("inc").subtree.source
        await loader.resolve("inc:x").fiber.dispose()       # the plugin disposes itself
        await include.flush()
        assert (tmp_path / "t.yml").read_text().startswith(
            "- id: x\n  name: p\n  disabled: true\n  config:\n    v: 1\n")
        assert states(loader)["inc:x"] == "DISABLED"
        before = (tmp_path / "t.yml").read_text()
        await loader.stop()                                   # teardown: no write-back
        assert (tmp_path / "t.yml").read_text() == before
    run(main())


def test_item_46_key_order_and_null_deletes():
    row = {"config": {"z": 1}, "zeta": 1, "name": "p", "isolate": {}, "disabled": None, "id": "x",
           "group": False, "inject": ["a"]}
    assert list(sort_row(row)) == ["id", "name", "group", "inject", "isolate", "zeta", "config"]
    assert "disabled" not in sort_row(row)


def test_item_33_a_generated_id_is_persisted_on_the_next_write(tmp_path):
    log = Log()
    rows = setup(tmp_path, "- {name: p, config: {v: 1}}\n- {id: y, name: p, config: {v: 1}}\n")

    async def main():
        loader = make_loader(log, Recorder("p", log))
        await loader.start(rows, base_dir=tmp_path)
        [generated, _] = [e.id for e in loader.resolve("inc").subtree.order()]
        assert "id:" not in (tmp_path / "t.yml").read_text().splitlines()[0]   # not written yet
        await loader.resolve("inc:y").fiber.update({"v": 2})                  # the next write
        await loader.resolve("inc").subtree.source.flush()
        assert [row["id"] for row in on_disk(tmp_path)] == [generated, "y"]
        assert len(generated) == 8 and int(generated, 16) >= 0
        await loader.stop()
    run(main())
