"""jsonschema walking only the rows the compiled check rejects (core/schemas.py, ``by_item``) reports
exactly what walking the whole list reports: on generated lists (schema-guided, mutated: valid and
broken rows mixed) and on every corpus file, for each schema where the shortcut applies."""
from __future__ import annotations

import random

import pytest
from hypothesis import given, settings, strategies as st

from dshctl.core import schemas
from test_schemacheck import CORPUS_VALUES, Instances

BY_ITEM = sorted(schemas._item_refs())


def test_the_shortcut_applies_to_the_row_lists_only():
    assert BY_ITEM == ["cordis.patch", "entry-list"]
    assert set(schemas._item_checks()) == set(schemas._item_refs().values())  # both compiled


def both(value, name):
    return (schemas.jsonschema_diagnostics(value, name, "f.yml"),
            schemas.jsonschema_diagnostics(value, name, "f.yml", by_item=False))


@settings(max_examples=300, deadline=None)
@given(st.randoms(use_true_random=False), st.sampled_from(BY_ITEM), st.sampled_from([0.03, 0.1, 0.3]))
def test_generated_lists_get_the_same_diagnostics(rnd, name, mutate):
    value = Instances(rnd, mutate).of({"$ref": schemas.SCHEMAS[name]}, schemas.SCHEMAS[name])
    narrowed, full = both(value, name)
    assert narrowed == full


@pytest.mark.parametrize("name", BY_ITEM)
def test_every_corpus_file_gets_the_same_diagnostics(name):
    broken = 0
    for path, value in CORPUS_VALUES:
        narrowed, full = both(value, name)
        assert narrowed == full, path
        broken += bool(full)
    assert 0 < broken < len(CORPUS_VALUES)


def test_a_long_list_with_broken_rows_among_valid_ones():
    rnd = random.Random(7)
    rows = [{"id": f"r{n}", "name": "x"} for n in range(200)]
    broken = sorted(rnd.sample(range(200), 5))
    for n in broken:
        rows[n] = {"id": n, "disabled": "yes", "extra": [1]}
    narrowed, full = both(rows, "entry-list")
    assert narrowed == full
    assert sorted({int(d.json_path[2:].split("]")[0]) for d in full}) == broken
