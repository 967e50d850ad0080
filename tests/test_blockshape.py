"""The position-free fast reader (``core/yaml/blockshape.py``) and the scan health built on it.

``preset list`` reads each composition with ``blockshape`` and checks its shape; only a finding or
a text outside the fast subset goes the full way (``load_yaml``). Two contracts, both checked on
generated documents and on the shared corpus: ``scan_values`` takes exactly the texts
``blockscan.scan`` takes and builds the same values (types, key order, ``!!js``); and
``composition_health_of`` equals ``parse_composition``'s health (reason, line:col, detail) for
every input, so the roster, its findings and ``preset list``'s output are the full path's.
"""
from __future__ import annotations

import math
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_files import yaml_files
from dshctl.core.presets import Root, discover
from dshctl.core.presets.cache import ScanCache
from dshctl.core.presets.health import composition_health_of, parse_composition
from dshctl.core.yaml import blockscan
from dshctl.core.yaml.blockshape import scan_values
from dshctl.core.yaml.nodes import JsExpr
from test_blockscan import block_documents, documents, flow_documents


def same_values(a, b) -> bool:
    """Equal as JavaScript sees them: mappings (in key order) and sequences of any class alike."""
    if isinstance(a, dict) or isinstance(b, dict):
        return (isinstance(a, dict) and isinstance(b, dict) and list(a) == list(b)
                and all(same_values(a[k], b[k]) for k in a))
    if isinstance(a, list) or isinstance(b, list):
        return (isinstance(a, list) and isinstance(b, list) and len(a) == len(b)
                and all(same_values(x, y) for x, y in zip(a, b)))
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return type(a) is type(b) and (a.expr == b.expr if isinstance(a, JsExpr) else a == b)


def check_alike(text: str, js: bool = True) -> bool:
    """Assert the reader contract for one text; True when both took it."""
    fast = blockscan.scan(text, "f.yml", js)
    shape = scan_values(text, "f.yml", js)
    assert (fast is None) == (shape is None), f"one reader took the text, the other did not:\n{text}"
    assert fast is None or same_values(shape, fast), f"values differ:\n{text}"
    return fast is not None


@settings(max_examples=400, deadline=None)
@given(documents(), st.booleans())
def test_generated_documents_read_alike(text, js):
    check_alike(text, js)


@settings(max_examples=300, deadline=None)
@given(block_documents(), st.booleans())
def test_generated_block_scalars_read_alike(text, js):
    check_alike(text, js)


@settings(max_examples=300, deadline=None)
@given(flow_documents(), st.booleans())
def test_generated_flow_collections_read_alike(text, js):
    check_alike(text, js)


def test_corpus_files_read_alike():
    taken = 0
    for path in yaml_files():
        text = path.read_text(encoding="utf-8").removeprefix("\ufeff")
        taken += check_alike(text, path.name != "preset.yml")
    assert taken >= 60


# -- the scan's health against the full path's -------------------------------------------------------

def health_fields(health):
    return health.broken, health.loc, health.detail


def check_health(data: bytes) -> None:
    path = Path("/p/x/agent.cordis.yml")
    scanned = composition_health_of(data, str(path))
    assert health_fields(scanned) == health_fields(parse_composition(data, path)[1]), data.decode("utf-8", "replace")


_name = st.sampled_from(["name: '@dshctl/a'", "name: b", "name: ''", "name:", "name: 3", "name: !!js x",
                         "name: [a]", "name: {a: 1}", "name: |\n      long", "name: >-\n      x\n      y",
                         "name: null", "nom: c", "name: 'a'\n    name: b"])
_group = st.sampled_from(["", "", "", "group: true", "group: false", "group: 'true'", "group: !!js true"])
_config = st.sampled_from(["", "config: {a: 1}", "config: []", "config:", "config:\n      port: 1",
                           "config:\n      text: |-\n        body\n\n        more", "config: x",
                           "config:\n      - name: c\n        config: {}", "config:\n      - {name: d}",
                           "config:\n      - nom: e", "config:\n      - 7", "config:\n      - group: true\n"
                           "        name: g\n        config: 1"])
_row = st.one_of(
    st.tuples(_name, _group, _config).map(
        lambda parts: "- " + "\n  ".join(p.replace("\n    ", "\n  ") for p in parts if p)
        if any(parts) else "- x"),
    st.sampled_from(["- plain", "- [a, b]", "- ", "-", "- {name: f}", "- !!js y", "  - z: 1"]))


@st.composite
def compositions(draw) -> bytes:
    head = draw(st.sampled_from(["", "", "# a preset\n", "\ufeff", "a: 1\n", "[]\n", "---\n", "\x00"]))
    rows = draw(st.lists(_row, max_size=5))
    text = head + "\n".join(rows) + draw(st.sampled_from(["\n", "", "\n\n", "\n  tail: 1\n"]))
    if draw(st.integers(0, 4)) == 0:  # near the subset: a stray character
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(list(":-#'\" \n[]{}&*!|>\t"))) + text[at:]
    return text.encode("utf-8")


@settings(max_examples=600, deadline=None)
@given(compositions())
def test_generated_compositions_have_the_full_paths_health(data):
    check_health(data)


def test_the_row_shapes_reach_both_a_healthy_position_free_read_and_findings():
    import random

    rng = random.Random(30)
    healthy = broken = 0
    for _ in range(300):
        data = _sample(rng)
        health = composition_health_of(data, "/p/agent.cordis.yml")
        healthy += health.ok and scan_values(data.decode(), "f.yml") is not None
        broken += not health.ok
    assert healthy >= 20 and broken >= 100, (healthy, broken)


def _sample(rng) -> bytes:
    rows = []
    for _ in range(rng.randint(1, 4)):
        parts = [rng.choice(_name.elements), rng.choice(_group.elements), rng.choice(_config.elements)]
        rows.append("- " + "\n  ".join(p.replace("\n    ", "\n  ") for p in parts if p))
    return ("\n".join(rows) + "\n").encode("utf-8")


def test_corpus_compositions_have_the_full_paths_health():
    for path in yaml_files():
        if path.name == "agent.cordis.yml":
            check_health(path.read_bytes())


def test_a_scan_has_the_full_paths_health_for_every_preset(tmp_path):
    samples = [_sample(__import__("random").Random(seed)) for seed in range(60)]
    for index, data in enumerate(samples):
        (tmp_path / f"p-{index}").mkdir()
        (tmp_path / f"p-{index}" / "agent.cordis.yml").write_bytes(data)
    roster = discover([Root(tmp_path, "user", "test")], cache=ScanCache())
    assert len(roster.presets) == 60
    assert any(p.health.ok for p in roster.presets) and any(not p.health.ok for p in roster.presets)
    for preset in roster.presets:
        file = Path(preset.dir_str) / "agent.cordis.yml"
        assert health_fields(preset.health) == health_fields(parse_composition(file.read_bytes(), file)[1])
