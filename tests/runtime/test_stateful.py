"""Hypothesis state machine over random plugin / provide / withdraw / update / restart / dispose sequences.

Fibers live in two "worlds": the root realm and a realm shared under one isolate label. Operations run
either fully settled or interleaved (only 0-2 ticks between them, so they hit running transitions);
whenever the loop is quiescent the runtime is compared with a model:
  * no disposer runs twice;
  * each apply's effects are undone in exact LIFO order, and completely, once that apply is gone;
  * no fiber is ACTIVE with an unmet inject;
  * the set of live effects (and each fiber's state) is exactly what the model predicts.
"""
from __future__ import annotations

import asyncio

from hypothesis import settings, strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, consumes, invariant, precondition, rule

from dshctl.runtime import Context, State

NAMES = ("a", "b", "c", "d")
WORLDS = ("root", "shared")


class Journal:
    def __init__(self) -> None:
        self.sessions = 0
        self.created: dict[int, list[tuple[int, int]]] = {}   # session -> effect ids in creation order
        self.undone: list[tuple[int, int]] = []
        self.session_of: dict[str, int] = {}                  # fiber key -> its latest session


def make_plugin(journal: Journal, key: str):
    def apply(ctx, config):
        journal.sessions += 1
        session = journal.sessions
        journal.session_of[key] = session
        journal.created[session] = []
        if config["provides"]:
            ctx.provide(config["provides"], key)
        for index in range(config["effects"]):
            effect_id = (session, index)
            journal.created[session].append(effect_id)
            ctx.effect(lambda effect_id=effect_id: lambda: journal.undone.append(effect_id))
        if config["fail"]:
            raise RuntimeError(f"{key} fails on purpose")
    apply.__name__ = key
    return apply


class RuntimeMachine(RuleBasedStateMachine):
    fibers = Bundle("fibers")

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.root = self.loop.run_until_complete(self._make_root())
        shared = self.root
        for name in NAMES:
            shared = shared.isolate(name, "shared")
        self.world_ctx = {"root": self.root, "shared": shared}
        self.journal = Journal()
        self.model: dict[str, dict] = {}          # key -> {world, inject, config, disposed}
        self.fiber_of: dict[str, object] = {}
        self.root_provided: dict[tuple[str, str], object] = {}  # (world, name) -> provide handle
        self.held: set[tuple[str, str]] = set()   # names of disposed providers that may not be withdrawn yet
        self.pace: int | None = None              # None: settle after each step; else ticks between steps
        self.settled = True
        self.count = 0

    @staticmethod
    async def _make_root() -> Context:
        return Context()

    def teardown(self) -> None:
        self.loop.run_until_complete(self._quiesce())
        self.loop.close()

    async def _quiesce(self) -> None:
        # Transitions run as loop callbacks and tasks: settled = no task and no busy fiber, twice in a row.
        calm = 0
        for _ in range(2000):
            await asyncio.sleep(0)
            busy = any(f._busy for f in self.fiber_of.values()) or self.root.fiber._busy
            calm = calm + 1 if len(asyncio.all_tasks()) == 1 and not busy else 0
            if calm == 2:
                self.held.clear()
                self.settled = True
                return
        raise AssertionError("the runtime did not settle")

    def step(self, operation) -> None:
        async def run():
            result = operation()
            if self.pace is None:
                if result is not None and hasattr(result, "__await__"):
                    try:
                        await result
                    except Exception:  # noqa: BLE001 - a failing plugin is part of the scenario
                        pass
                await self._quiesce()
            else:
                self.settled = False
                for _ in range(self.pace):
                    await asyncio.sleep(0)
        self.loop.run_until_complete(run())

    # ---- model -----------------------------------------------------------------------------------
    def assigned(self, world: str) -> set[str]:
        names = {name for (w, name) in self.root_provided if w == world}
        names |= {m["config"]["provides"] for m in self.model.values()
                  if m["world"] == world and not m["disposed"]}
        names |= {name for (w, name) in self.held if w == world}
        return names - {None}

    def predicted_active(self) -> set[str]:
        """Least fixpoint per world: a fiber is active when every inject has an active provider."""
        active: set[str] = set()
        changed = True
        while changed:
            changed = False
            provided = set(self.root_provided) | {(self.model[k]["world"], self.model[k]["config"]["provides"])
                                                  for k in active}
            for key, m in self.model.items():
                if key in active or m["disposed"] or m["config"]["fail"]:
                    continue
                if all((m["world"], name) in provided for name in m["inject"]):
                    active.add(key)
                    changed = True
        return active

    # ---- rules -----------------------------------------------------------------------------------
    @rule(pace=st.sampled_from([None, None, 0, 1, 2]))
    def set_pace(self, pace):
        self.pace = pace

    @rule()
    def settle_now(self):
        self.loop.run_until_complete(self._quiesce())

    @precondition(lambda self: sum(not m["disposed"] for m in self.model.values()) < 6)
    @rule(target=fibers, world=st.sampled_from(WORLDS), inject=st.sets(st.sampled_from(NAMES), max_size=2),
          provides=st.sampled_from((None,) + NAMES), effects=st.integers(0, 3), fail=st.booleans())
    def plug(self, world, inject, provides, effects, fail):
        if provides in self.assigned(world) or provides in inject:
            provides = None
        self.count += 1
        key = f"p{self.count}"
        config = {"provides": provides, "effects": effects, "fail": fail}
        self.model[key] = {"world": world, "inject": sorted(inject), "config": config, "disposed": False}
        plugin = make_plugin(self.journal, key)
        plugin.inject = sorted(inject)
        ctx = self.world_ctx[world]
        self.step(lambda: self.fiber_of.setdefault(key, ctx.plugin(plugin, config)) and None)
        return key

    @rule(world=st.sampled_from(WORLDS), name=st.sampled_from(NAMES))
    def provide_at_root(self, world, name):
        if name in self.assigned(world):
            return
        ctx = self.world_ctx[world]
        self.step(lambda: self.root_provided.setdefault((world, name), ctx.provide(name, "root")) and None)

    @rule(world=st.sampled_from(WORLDS), name=st.sampled_from(NAMES))
    def withdraw_at_root(self, world, name):
        handle = self.root_provided.pop((world, name), None)
        if handle is not None:
            self.step(handle)

    @rule(key=fibers, effects=st.integers(0, 3), fail=st.booleans())
    def update(self, key, effects, fail):
        m = self.model[key]
        if m["disposed"]:
            return
        config = dict(m["config"], effects=effects, fail=fail)
        m["config"] = config
        self.step(lambda: self.fiber_of[key].update(config))

    @rule(key=fibers)
    def restart(self, key):
        if not self.model[key]["disposed"]:
            self.step(self.fiber_of[key].restart)

    @rule(key=consumes(fibers))
    def dispose(self, key):
        m = self.model[key]
        m["disposed"] = True
        if m["config"]["provides"]:
            self.held.add((m["world"], m["config"]["provides"]))  # withdrawn only when its unload runs
        self.step(self.fiber_of[key].dispose)

    # ---- invariants (checked whenever the loop is quiescent) ------------------------------------
    @invariant()
    def no_disposer_runs_twice(self):
        assert len(self.journal.undone) == len(set(self.journal.undone))

    @invariant()
    def finished_sessions_are_undone_lifo(self):
        if not self.settled:
            return
        live_sessions = {self.journal.session_of[k] for k in self.predicted_active()
                         if k in self.journal.session_of}
        for session, created in self.journal.created.items():
            undone = [e for e in self.journal.undone if e[0] == session]
            if session in live_sessions:
                assert undone == []
            else:
                assert undone == list(reversed(created))

    @invariant()
    def no_active_fiber_with_unmet_inject(self):
        services = self.root.registry.services
        for fiber in self.fiber_of.values():
            if fiber.state is State.ACTIVE and not fiber._busy:
                for name in fiber.inject:
                    binding = services.lookup(name, fiber.ctx._realm(name))
                    assert binding is not None and binding.fiber.state is State.ACTIVE

    @invariant()
    def live_effects_and_states_match_the_model(self):
        if not self.settled:
            return
        active = self.predicted_active()
        expected = {(self.journal.session_of[k], i) for k in active
                    for i in range(self.model[k]["config"]["effects"])}
        undone = set(self.journal.undone)
        live = {e for created in self.journal.created.values() for e in created if e not in undone}
        assert live == expected
        provided = set(self.root_provided) | {(self.model[k]["world"], self.model[k]["config"]["provides"])
                                              for k in active}
        for key, fiber in self.fiber_of.items():
            m = self.model[key]
            if m["disposed"]:
                assert fiber.state is State.DISPOSED and fiber.uid is None
            elif key in active:
                assert fiber.state is State.ACTIVE, (key, fiber.state)
            else:
                assert fiber.get_effects() == []
                met = all((m["world"], name) in provided for name in m["inject"])
                if not m["config"]["fail"]:
                    assert fiber.state is State.PENDING, (key, fiber.state)   # an update cleared any error
                elif met:
                    assert fiber.state is State.FAILED, (key, fiber.state)
                else:   # FAILED if it was attempted before its provider left, else PENDING
                    assert fiber.state in (State.PENDING, State.FAILED), (key, fiber.state)


RuntimeMachine.TestCase.settings = settings(max_examples=300, stateful_step_count=40, deadline=None)
test_runtime_state_machine = RuntimeMachine.TestCase
