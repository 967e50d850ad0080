"""``/healthz`` and ``/readyz`` on a real ``dshctl host run`` (the probes an orchestrator asks): alive
while it serves; ready until a reload rolls back, ready again once a reload applies."""
from __future__ import annotations

import json

from .helpers import http_get, user_file, write
from .test_reliability import boot_with


def test_ready_until_a_reload_rolls_back_and_again_after_a_good_one(tmp_path):
    host = boot_with(tmp_path, "--no-watch")      # reloads happen when the test says so
    try:
        assert http_get(host.url + "healthz") == (200, b"ok\n")
        code, body = http_get(host.url + "readyz")
        assert code == 200 and json.loads(body)["ready"] is True
        write(user_file(host.home), "- id: c\n  config: {fail: on purpose}\n")
        assert host.reload()[1]["verdict"] == "rolled-back"
        code, body = http_get(host.url + "readyz")
        doc = json.loads(body)
        assert code == 503 and doc["ready"] is False and doc["reason"].startswith("the files on disk are not what runs")
        assert any("boom: on purpose" in json.dumps(e) for e in doc["errors"])
        assert http_get(host.url + "healthz")[0] == 200        # alive: the last good tree still serves
        write(user_file(host.home), "- id: c\n  config: {tag: new}\n")
        assert host.reload()[1]["verdict"] == "applied"
        code, body = http_get(host.url + "readyz")
        assert code == 200 and json.loads(body) == {"ready": True, "last_reload": "applied"}
    finally:
        host.stop()
