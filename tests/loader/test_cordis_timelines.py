"""The dispose order of a provider row and its dependents through the loader, as in Cordis.

Cordis's loader replaces a row whose ``inject`` list changes (``Entry.update``: dispose the fiber, start
a new one) and restarts a row whose ``config`` changes (``fiber.update`` -> ``restart``). Either way the
provider fiber P unloads by queuing its own disposers before it is marked UNLOADING, which is when its
dependent B is told; so P's own disposer runs before B's (see tests/runtime/test_cordis_timelines.py).
"""
from __future__ import annotations

from .helpers import Log, make_loader, run


class Provider:
    """Registers its own effect first, then provides ``svc``."""

    name = "provider"

    def __init__(self, log: Log):
        self.log = log

    def apply(self, ctx, config):
        ctx.effect(lambda: (lambda: self.log.append(("dispose", "P own", config))))
        ctx.provide("svc", {"config": config})
        self.log.append(("apply", "P", config))


class Dependent:
    name = "dependent"
    inject = ["svc"]

    def __init__(self, log: Log):
        self.log = log

    def apply(self, ctx, config):
        ctx.effect(lambda: (lambda: self.log.append(("dispose", "B", None))))
        self.log.append(("apply", "B", None))


class Other:
    name = "other"

    def apply(self, ctx, config):
        ctx.provide("other", 1)


def _loader(log: Log):
    return make_loader(log, Provider(log), Dependent(log), Other())


ROWS = [{"id": "o", "name": "other"}, {"id": "p", "name": "provider", "config": {"v": 1}},
        {"id": "b", "name": "dependent"}]


def _update_provider_row(change: dict) -> Log:
    """Start the three rows, update the provider row with ``change``; the log of that update."""
    log = Log()

    async def main():
        loader = _loader(log)
        await loader.start([dict(r) for r in ROWS], base_dir=".")
        log.clear()
        rows = [dict(r) for r in ROWS]
        rows[1].update(change)
        await loader.update(rows)
        await loader.stop()
    run(main())
    return log


def test_an_inject_change_on_the_provider_row_disposes_the_provider_before_its_dependent():
    log = _update_provider_row({"inject": ["other"]})  # Entry.update replaces the row
    assert log.of("dispose")[:2] == [("P own", {"v": 1}), ("B", None)]  # Cordis's order
    assert log.of("apply") == [("P", {"v": 1}), ("B", None)]


def test_a_config_change_on_the_provider_row_restarts_it_before_its_dependent_tears_down():
    log = _update_provider_row({"config": {"v": 2}})  # fiber.update -> restart
    assert log.of("dispose")[:2] == [("P own", {"v": 1}), ("B", None)]
    assert log.of("apply") == [("P", {"v": 2}), ("B", None)]
