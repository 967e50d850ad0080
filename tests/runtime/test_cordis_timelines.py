"""Timelines where dshctl's runtime must order things as dsh's Cordis (vendor/cordis 4.0.0-rc.7) does.

Each test states Cordis's order, read from its source:

* ``ctx.get(name)`` is ``reflect.get(name)``: the value of an implementation whose fiber is ACTIVE. The
  provider's ``check()`` is consulted only by ``_checkImpl`` (whether dependents may load), so while it
  returns false ``get`` still returns the value and a dependent stays PENDING.
* A fiber unloads by starting ``_unload()`` (queuing every disposer, newest first) *before*
  ``_updateState`` marks it UNLOADING, which is what notifies its dependents; their disposers are queued
  after. So a provider's own disposers run before a dependent's, whether the provider is disposed or
  restarted. (The loader's cases, an inject-list change and a config change, are in
  tests/loader/test_cordis_timelines.py.)
"""
from __future__ import annotations

from dshctl.runtime import Context, Service, State

from .helpers import run_async, ticks


GATE = {"open": False}


class Gate(Service):
    def __init__(self, ctx):
        super().__init__(ctx, "svc")

    def check(self) -> bool:
        return GATE["open"]


@run_async
async def test_get_returns_the_value_while_check_is_false_and_the_dependent_waits():
    GATE["open"] = False
    root = Context()
    provider = await root.plugin(Gate)
    gate = root.get("svc")
    assert isinstance(gate, Gate) and provider.state is State.ACTIVE  # Cordis: the value, not undefined
    dependent = root.inject(["svc"], lambda ctx: None)
    await ticks()
    assert dependent.state is State.PENDING  # the check still gates dependents
    GATE["open"] = True
    await provider.restart()  # the provider comes back ACTIVE and notifies; now the check passes
    await dependent
    assert dependent.state is State.ACTIVE
    await provider.dispose()
    assert root.get("svc") is None  # no ACTIVE provider: nothing


def _provider(log):
    def provider(ctx):
        ctx.effect(lambda: (lambda: log.append("P own")))  # P's own effect, before the provide
        ctx.provide("svc", "value")
    return provider


def _dependent(log):
    def dependent(ctx):
        ctx.effect(lambda: (lambda: log.append("B")))
    return dependent


@run_async
async def test_disposing_a_provider_runs_its_own_disposer_before_the_dependents():
    root = Context()
    log: list[str] = []
    provider = await root.plugin(_provider(log))
    dependent = await root.inject(["svc"], _dependent(log))
    await provider.dispose()
    await ticks()
    assert log == ["P own", "B"]  # Cordis: P's _unload() is queued before B is notified
    assert dependent.state is State.PENDING


@run_async
async def test_restarting_a_provider_runs_its_own_disposer_before_the_dependents():
    root = Context()
    log: list[str] = []
    provider = await root.plugin(_provider(log))
    dependent = await root.inject(["svc"], _dependent(log))
    await provider.restart()
    await dependent
    assert log == ["P own", "B"]
    assert dependent.state is State.ACTIVE
