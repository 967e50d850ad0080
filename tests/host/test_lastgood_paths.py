"""Booting from last-good resolves relative config paths as the original layers did (issue 28,
finding 7): ``reload --trial``, kill -9, ``host run`` boots the confirmed tree from the record, and
the llm row's ``script: script.yml`` (relative to the bundle's patch file) is still found."""
from __future__ import annotations

import json
import subprocess

from dshctl.host import lastgood
from tests.agents.loop_rows import agent_home
from tests.host.helpers import DSHCTL, WAIT_S, HostProcess, bundle_dir, row_map, user_file, write


def _llm_state(host) -> str:
    return row_map(host.status()["rows"])["llm"][1]


def test_a_boot_from_last_good_finds_relative_script_paths(tmp_path):
    home = agent_home(tmp_path, script="script.yml")
    write(bundle_dir(home) / "script.yml", json.dumps([{"text": "from the script"}] * 3) + "\n")
    with HostProcess(home, "p", "--no-watch") as host:
        assert _llm_state(host) == "ACTIVE", host.status()
        write(user_file(home), "- id: ask-user\n  disabled: true\n")
        result = host.cli("reload", "--trial", "120")
        assert result.returncode == 0, result.stderr
        host.proc.kill()
        host.proc.wait()
    record = lastgood.load(home / "profiles/p/.dshctl/last-good.json")
    assert record is not None
    with HostProcess(home, "p", "--no-watch") as host:
        host.wait_for("host/trial-abandoned")
        assert host.status()["host"]["source"] == "last-good"
        assert _llm_state(host) == "ACTIVE", row_map(host.status()["rows"])["llm"]
        run = subprocess.run([DSHCTL, "--home", str(home), "agent", "run", "--profile", "p",
                              "--format", "json", "hi"], capture_output=True, text=True,
                             timeout=WAIT_S)
        assert run.returncode == 0, run.stderr
        assert "from the script" in run.stdout


def test_rows_from_the_record_carry_their_original_files(tmp_path):
    home = agent_home(tmp_path, script="script.yml")
    write(bundle_dir(home) / "script.yml", json.dumps([{"text": "x"}]) + "\n")
    with HostProcess(home, "p", "--no-watch") as host:
        assert _llm_state(host) == "ACTIVE"
    record = lastgood.load(home / "profiles/p/.dshctl/last-good.json")
    [llm] = [r for r in record.rows if r.get("id") == "llm"]
    assert llm.loc.file == str(bundle_dir(home) / "cordis.patch.yml")
