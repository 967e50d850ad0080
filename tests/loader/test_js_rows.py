"""`!!js` in loader rows: checklist items 49, 50, 74 and the example in docs/runtime.md."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from dshctl.core.yaml.nodes import JsExpr
from dshctl.loader import LoaderError, LoaderUpdateError

from .helpers import Log, Recorder, make_loader, rows_of, run, states

DOC = Path(__file__).resolve().parents[2] / "docs" / "runtime.md"


def test_doc_example_runs():
    [block] = re.findall(r"<!-- test: loader-js-example -->\n```python\n(.*?)```",
                         DOC.read_text(encoding="utf-8"), re.S)
    exec(compile(block, str(DOC), "exec"), {"__name__": "loader_doc_example"})


def test_item_49_config_js_evaluated_in_fiber_after_injects_and_again_after_provider_swap(tmp_path):
    log = Log()
    web1 = Recorder("web1", log, provides="web")
    web2 = Recorder("web2", log, provides="web")
    client = Recorder("client", log)
    text = """
- {id: w, name: WEB, config: {port: 1}}
- {id: c, name: client, inject: [web], config: {port: !!js "ctx.web.config.port ?? 3080", by: !!js ctx.web.by}}
"""

    def fresh(web="web1"):
        return rows_of(text.replace("WEB", web))

    async def main():
        loader = make_loader(log, web1, web2, client)
        await loader.start(fresh()[1:], base_dir=tmp_path)   # no provider: never evaluated, PENDING
        assert states(loader) == {"c": "PENDING"} and log.of("apply") == []
        await loader.update(fresh())
        assert log.of("apply")[-1] == ("client", {"port": 1, "by": "web1"})
        await loader.update(fresh("web2"))                 # another provider fiber
        assert log.of("apply")[-1] == ("client", {"port": 1, "by": "web2"})
        raw = loader.resolve("c").options["config"]["port"]
        assert isinstance(raw, JsExpr) and raw.expr == "ctx.web.config.port ?? 3080"
        assert loader.tree_snapshot()[1]["config"]["port"] == {"__jsExpr": "ctx.web.config.port ?? 3080"}
        await loader.stop()
    run(main())


def test_item_50_disabled_js_decides_mount_keeps_raw_node_reevaluated_each_update(monkeypatch):
    log = Log()
    p = Recorder("p", log)
    rows = rows_of("- {id: a, name: p, disabled: !!js \"process.env.DSHCTL_T50 === 'off'\"}\n")

    async def main():
        loader = make_loader(log, p)
        monkeypatch.setenv("DSHCTL_T50", "off")
        await loader.start(rows, base_dir=".")
        assert states(loader) == {"a": "DISABLED"}
        monkeypatch.setenv("DSHCTL_T50", "on")
        await loader.update(rows)
        assert states(loader) == {"a": "ACTIVE"}
        monkeypatch.setenv("DSHCTL_T50", "off")
        await loader.update(rows)
        assert states(loader) == {"a": "DISABLED"}
        assert isinstance(loader.resolve("a").options["disabled"], JsExpr)
        await loader.stop()
    run(main())


def test_item_74_unsupported_config_js_is_never_run_and_fails_the_row():
    log = Log()
    p = Recorder("p", log)
    rows = rows_of("- {id: a, name: p, config: {x: [1, !!js \"require('fs').rmSync('/')\"]}}\n"
                   "- {id: b, name: p, config: ok}\n", "cordis.yml")

    async def main():
        loader = make_loader(log, p)
        report = await loader.start(rows, base_dir=".")   # boot: the row is FAILED and reported
        assert states(loader) == {"a": "FAILED", "b": "ACTIVE"} and log.of("apply") == [("p", "ok")]
        [failed] = report.by_action("failed")
        assert failed.full_id == "a"
        assert failed.reason.startswith('cordis.yml:1:36: unsupported !!js expression in row "a" (p) '
                                        "at config.x.1: require('fs')")
        await loader.stop()
    run(main())


def test_item_74_js_errors_in_disabled_fail_the_update_and_change_nothing():
    log = Log()
    p = Recorder("p", log)

    async def main():
        loader = make_loader(log, p)
        await loader.start([{"id": "a", "name": "p", "config": 1}], base_dir=".")
        bad = rows_of("- {id: a, name: p, config: 2}\n- {id: b, name: p, disabled: !!js ctx.svc.off}\n", "f.yml")
        with pytest.raises(LoaderError) as info:
            await loader.update(bad)
        assert info.value.message.startswith('!!js evaluation failed in row "b" (p) at disabled: ')
        assert str(info.value.loc) == "f.yml:2:30"
        assert states(loader) == {"a": "ACTIVE"} and log.of("apply") == [("p", 1)]
        await loader.stop()
    run(main())


def test_config_js_error_on_update_rolls_back():
    log = Log()
    p = Recorder("p", log)

    async def main():
        loader = make_loader(log, p)
        await loader.start([{"id": "a", "name": "p", "config": {"v": 1}}], base_dir=".")
        bad = rows_of("- {id: a, name: p, config: {v: !!js \"ctx.get('nope').x\"}}\n", "f.yml")
        with pytest.raises(LoaderUpdateError, match='evaluation failed in row "a" \\(p\\) at config.v'):
            await loader.update(bad)
        assert states(loader) == {"a": "ACTIVE"} and loader.resolve("a").fiber.config == {"v": 1}
        await loader.stop()
    run(main())
