"""`dshctl reload --trial SECONDS` / `--confirm` (issue 14) with real host processes and real file edits."""
from __future__ import annotations

import json
import time

from dshctl.host import lastgood

from .helpers import HostProcess, eventually, make_home, row_map, user_file, write

ROWS = """\
    - id: a
      name: ./plugins/svc.py
      config: {service: alpha, tag: one}
"""
NEW = "- id: a\n  config: {service: alpha, tag: two}\n"


def config_of(host, row="a"):
    return row_map(host.status()["rows"])[row][2]


def cli_json(host, *args):
    result = host.cli(*args, "--format", "json")
    return result.returncode, json.loads(result.stdout), result.stderr


def record_digest(home):
    return lastgood.load(home / "profiles" / "p" / ".dshctl" / "last-good.json").digest


def test_a_confirmed_trial_stays_and_becomes_last_good(tmp_path):
    home = make_home(tmp_path, ROWS)
    with HostProcess(home, "p", "--no-watch") as host:
        confirmed = record_digest(home)
        write(user_file(home), NEW)
        code, outcome, _ = cli_json(host, "reload", "--trial", "60")
        assert code == 0 and outcome["verdict"] == "applied", outcome
        assert outcome["trial"]["remaining_s"] > 50 and "reverts at" in outcome["summary"]
        doc = host.status()
        assert doc["host"]["trial"]["deadline"] == outcome["trial"]["deadline"]
        assert any("trial reload is pending until" in line for line in doc["host"]["drift"])
        assert config_of(host) == {"service": "alpha", "tag": "two"}
        assert record_digest(home) == confirmed            # not last-good while on trial
        text = host.cli("status")
        assert "a trial reload is pending until" in text.stdout
        code, outcome, _ = cli_json(host, "reload", "--confirm")
        assert code == 0 and outcome["verdict"] == "confirmed", outcome
        assert host.status()["host"]["trial"] is None
        assert record_digest(home) == host.status()["host"]["running_digest"] != confirmed
        code, outcome, _ = cli_json(host, "reload", "--confirm")
        assert code == 4 and outcome["verdict"] == "no-trial"


def test_an_unconfirmed_trial_reverts_by_itself(tmp_path):
    home = make_home(tmp_path, ROWS)
    with HostProcess(home, "p", "--no-watch") as host:
        before = host.status()["host"]["running_digest"]
        write(user_file(home), NEW)
        code, outcome, _ = cli_json(host, "reload", "--trial", "1")
        assert code == 0 and outcome["verdict"] == "applied"
        host.wait_for("reload/reverted")
        doc = host.status()
        assert doc["last_reload"]["verdict"] == "reverted" and doc["last_reload"]["exit_code"] == 0
        assert doc["host"]["running_digest"] == before and doc["host"]["trial"] is None
        assert config_of(host) == {"service": "alpha", "tag": "one"}
        assert any("differ from the running tree" in line for line in doc["host"]["drift"])
        code, outcome, _ = cli_json(host, "reload", "--confirm")
        assert code == 4 and "reverted at" in outcome["errors"][0]["message"]


def test_a_host_restarted_during_a_trial_boots_the_confirmed_tree(tmp_path):
    home = make_home(tmp_path, ROWS)
    with HostProcess(home, "p", "--no-watch") as host:
        write(user_file(home), NEW)
        code, outcome, _ = cli_json(host, "reload", "--trial", "120")
        assert code == 0 and config_of(host)["tag"] == "two"
        host.proc.kill()   # dies mid-trial
        host.proc.wait()
    with HostProcess(home, "p") as host:   # watching: the untried files must still not apply
        event = host.wait_for("host/trial-abandoned")
        assert "booting the confirmed tree" in event["message"]
        doc = host.status()
        assert doc["host"]["source"] == "last-good" and config_of(host)["tag"] == "one"
        time.sleep(1.0)
        assert config_of(host)["tag"] == "one"
        write(user_file(home), NEW.replace("two", "three"))   # a save applies as usual
        eventually(lambda: config_of(host).get("tag"), "three", what="the save to apply")


def test_trial_refusals_and_usage(tmp_path):
    home = make_home(tmp_path, ROWS)
    with HostProcess(home, "p", "--no-watch") as host:
        write(user_file(home), "- id: a\n  config: {service: alpha\n")      # does not parse
        code, outcome, _ = cli_json(host, "reload", "--trial", "30")
        assert code == 4 and outcome["verdict"] == "rejected" and host.status()["host"]["trial"] is None
        write(user_file(home), NEW)
        assert cli_json(host, "reload", "--trial", "30")[0] == 0
        code, outcome, _ = cli_json(host, "reload", "--trial", "30")
        assert code == 4 and "a trial is already pending" in outcome["errors"][0]["message"]
        code, outcome, _ = cli_json(host, "reload")          # nothing new on disk: unchanged, trial kept
        assert code == 0 and host.status()["host"]["trial"] is not None
        for bad in (["--trial", "0"], ["--trial", "nan"], ["--trial", "5", "--confirm"]):
            result = host.cli("reload", *bad)
            assert result.returncode == 2 and result.stderr.startswith("dshctl: error: "), result.stderr
        assert cli_json(host, "reload", "--confirm")[0] == 0
