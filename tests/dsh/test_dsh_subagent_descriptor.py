"""dshctl's reading of ``subagent/descriptor`` against dsh's ``foldSubagentDescriptor`` on generated
payloads (well-formed ones, and ones with wrong types, unknown fields, other versions): the same
descriptor, or the same error message."""
from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dshctl.agents.subagents import descriptor

DRIVER = Path(__file__).with_name("descriptor_driver.mts")
ODD = st.one_of(st.none(), st.booleans(), st.integers(-2, 3), st.text(max_size=4), st.lists(st.text(max_size=3), max_size=2))
NAMES = st.lists(st.sampled_from(["read", "bash", "grep"]), max_size=2)
FILTER = st.one_of(st.fixed_dictionaries({}, optional={"allow": NAMES, "deny": NAMES}),
                   st.fixed_dictionaries({"allow": ODD}), st.fixed_dictionaries({"extra": NAMES}), ODD)
FIELD = {"version": st.one_of(st.just(2), st.just(1), ODD), "mode": st.sampled_from(["one-shot", "continuable", "x"]),
         "provider": st.one_of(st.sampled_from(["spawn", "fork"]), ODD), "label": st.one_of(st.text(max_size=5), ODD),
         "agentModel": st.one_of(st.text(max_size=5), ODD), "persona": st.text(max_size=5), "toolFilter": FILTER,
         "surprise": st.text(max_size=2)}
PAYLOADS = st.one_of(st.fixed_dictionaries({"version": st.just(2), "mode": st.just("continuable"),
                                            "provider": st.just("spawn"), "label": st.text(max_size=5)},
                                           optional={k: v for k, v in FIELD.items() if k not in ("version", "mode", "provider", "label")}),
                     st.fixed_dictionaries({}, optional=FIELD), ODD)


def ours(payload):
    try:
        return {"ok": descriptor.fold([{"type": descriptor.EVENT, "seq": 0, "time": 0, "data": payload}])}
    except descriptor.BadDescriptor as exc:
        return {"error": str(exc)}


def test_descriptor_fold_matches_dsh(real_dsh, tmp_path):
    batch: list = []

    @settings(max_examples=300, database=None, suppress_health_check=list(HealthCheck))
    @given(PAYLOADS)
    def collect(payload):
        batch.append(payload)
    collect()
    batch += [descriptor.snapshot("one-shot", "fork", "l"), descriptor.snapshot(
        "continuable", "spawn", "job", agentModel="m", persona="p", toolFilter={"deny": ["bash"]})]
    source = tmp_path / "payloads.json"
    source.write_text(json.dumps(batch))
    done = real_dsh.node_script(DRIVER, str(source))
    assert done.returncode == 0, done.stderr[-3000:]
    theirs = json.loads(done.stdout)
    assert len(batch) > 250 and sum(1 for t in theirs if t.get("ok")) >= 20    # not all errors
    for payload, expected in zip(batch, theirs):
        assert ours(payload) == expected, payload
