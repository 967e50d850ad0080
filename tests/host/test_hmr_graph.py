"""Properties of the module classification (cordis-runtime.md §10.2) over random import graphs."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dshctl.host.hmr_graph import classify, stale_plugins

MODULES = [f"m{i}" for i in range(7)]
graphs = st.dictionaries(st.sampled_from(MODULES), st.sets(st.sampled_from(MODULES), max_size=3))


@settings(max_examples=300, deadline=None)
@given(graphs, st.sets(st.sampled_from(MODULES), min_size=1, max_size=2),
       st.sets(st.sampled_from(MODULES), max_size=2))
def test_classification_invariants(imports, changed, external):
    changed = changed - external
    accepted, declined = classify(changed, imports, external)
    assert changed <= accepted
    assert external <= declined
    assert not (accepted & declined)
    for module in accepted - changed:
        # a dependency reloads only because it (transitively) imports a changed module
        assert reaches(imports, module, changed)


@settings(max_examples=300, deadline=None)
@given(graphs, st.sets(st.sampled_from(MODULES), min_size=1, max_size=2),
       st.sets(st.sampled_from(MODULES), min_size=1, max_size=3))
def test_stale_plugins_reach_a_changed_module_through_non_plugin_modules(imports, changed, plugins):
    accepted, declined = classify(changed, imports, set())
    stale, grown = stale_plugins(plugins, imports, accepted, declined)
    assert accepted <= grown and set(stale) <= plugins
    for unit in plugins - declined:
        stop = declined | (plugins - {unit})     # other plugin modules are atomic units: not entered
        hits = unit in changed or reaches(imports, unit, changed - stop, stop)
        if hits:
            assert unit in stale
    for unit in stale:
        assert unit in accepted or reaches(imports, unit, grown - stop_of(unit, plugins, declined),
                                           stop_of(unit, plugins, declined))


def stop_of(unit, plugins, declined):
    return declined | (set(plugins) - {unit})


def reaches(imports, start, targets, stop=frozenset()) -> bool:
    """Whether ``start`` imports a target, transitively, never passing through ``stop``."""
    seen, todo = {start}, [start]
    while todo:
        for dep in imports.get(todo.pop(), ()):
            if dep in stop or dep in seen:
                continue
            if dep in targets:
                return True
            seen.add(dep)
            todo.append(dep)
    return False
