"""`dshctl host run`, `dshctl reload`, `dshctl status` end to end, and the last-good record / --resume."""
from __future__ import annotations

import json
import subprocess

import pytest

from dshctl.cli.app import main
from dshctl.errors import DshctlError
from dshctl.host import lastgood

from .helpers import DSHCTL, HostProcess, bundle_dir, drift, make_home, row_map, user_file, write

ROWS = """\
    - id: a
      name: ./plugins/svc.py
      config: {service: alpha}
    - id: c
      name: ./plugins/boom.py
"""


def dshctl(home, *args, timeout=30) -> subprocess.CompletedProcess:
    return subprocess.run([DSHCTL, "--home", str(home), *args], capture_output=True, text=True,
                          timeout=timeout)


def run_for(home, *extra, seconds="0.5") -> subprocess.CompletedProcess:
    return dshctl(home, "host", "run", "--profile", "p", "--log-format", "json", "--for", seconds, *extra)


def events(result) -> list[dict]:
    return [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]


def test_run_for_boots_logs_and_shuts_down_gracefully(tmp_path):
    home = make_home(tmp_path, ROWS)
    result = run_for(home)
    assert result.returncode == 0, result.stderr
    kinds = [e["event"] for e in events(result)]
    assert kinds[0] == "host/booting" and kinds[-1] == "host/stopped"
    assert kinds.index("host/ready") < kinds.index("host/stopping")
    assert {"row/started"} <= set(kinds)
    record = lastgood.load(home / "profiles" / "p" / ".dshctl" / "last-good.json")
    assert [r["id"] for r in record.rows] == ["a", "c"]


def test_rich_log_is_plain_text_when_piped(tmp_path):
    home = make_home(tmp_path, ROWS)
    result = dshctl(home, "host", "run", "--profile", "p", "--for", "0.3")
    assert result.returncode == 0
    assert "\x1b[" not in result.stdout and "host/ready" in result.stdout
    assert "row/started" in result.stdout and "a (./plugins/svc.py)" in result.stdout


NODE_ROWS = ROWS + """\
    - id: llm
      name: "@deepseek-ai/dsh-llm"
    - id: tui
      name: "@deepseek-ai/dsh-tui"
"""


def test_a_row_without_a_python_plugin_fails_the_boot_naming_each_row(tmp_path):
    home = make_home(tmp_path, NODE_ROWS)
    result = run_for(home)
    assert result.returncode == 1
    [line, hint] = [x for x in result.stderr.splitlines() if x.strip()][-2:]
    patch = bundle_dir(home) / "cordis.patch.yml"
    assert line.startswith(f"dshctl: error: {patch}:8:13: the profile failed to start")
    assert 'plugin "@deepseek-ai/dsh-llm" (row llm' in line
    assert f'{patch}:10:13: no Python implementation for plugin "@deepseek-ai/dsh-tui" (row tui' in line
    assert "--skip-unavailable" in hint and "Traceback" not in result.stderr
    assert not (home / "profiles" / "p" / ".dshctl" / "last-good.json").exists()  # nothing ran


def test_skip_unavailable_runs_the_rest_and_reports_the_skipped_rows(tmp_path):
    home = make_home(tmp_path, NODE_ROWS)
    result = run_for(home, "--skip-unavailable")
    assert result.returncode == 0, result.stderr
    skipped = [e["message"] for e in events(result) if e["event"] == "row/skipped"]
    assert [m.split(" ")[0] for m in skipped] == ["llm", "tui"]
    assert all("no Python implementation" in m for m in skipped)
    started = [e["message"].split(" ")[0] for e in events(result) if e["event"] == "row/started"]
    assert started == ["a", "c"]


def test_a_row_failing_at_boot_names_where_its_config_was_set(tmp_path):
    home = make_home(tmp_path, ROWS, user="- id: c\n  config: {fail: at boot}\n")
    result = run_for(home)
    # dsh's boot audit: the rest runs; a --for run (a check) then exits 1 naming the row (issue 14)
    assert result.returncode == 1 and "1 row(s) failed to start: c" in result.stderr, result.stderr
    assert [e["message"].split(" ")[0] for e in events(result) if e["event"] == "row/started"]
    [failed] = [e["message"] for e in events(result) if e["event"] == "row/failed"]
    assert failed.startswith(f"c (./plugins/boom.py) at {bundle_dir(home) / 'cordis.patch.yml'}:5:")
    assert f"(config set at {user_file(home)}:2:11)" in failed and "boom: at boot" in failed


def test_a_profile_that_does_not_exist_is_one_error_line(tmp_path):
    home = make_home(tmp_path, ROWS)
    result = dshctl(home, "host", "run", "--profile", "nope", "--for", "1", "--log-format", "json")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert 'profile "nope" does not exist' in result.stderr
    assert events(result)[-1]["message"] == "nothing was running"


def test_strict_is_gone(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--home", str(tmp_path), "host", "run", "--strict"])
    assert exit_info.value.code == 2


def test_bad_log_format_is_a_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--home", str(tmp_path), "host", "run", "--log-format", "xml"])
    assert exit_info.value.code == 2
    assert "unknown format 'xml'" in capsys.readouterr().err


def test_reload_and_status_without_a_host_exit_6(tmp_path):
    home = make_home(tmp_path, ROWS)
    result = dshctl(home, "reload", "--profile", "p")
    assert result.returncode == 6 and "no host is running" in result.stderr
    result = dshctl(home, "status", "--profile", "p", "--format", "json")
    assert result.returncode == 6
    assert json.loads(result.stdout)["host"] is None


def test_status_text_and_json_tell_the_same_story(tmp_path):
    home = make_home(tmp_path, ROWS)
    with HostProcess(home, "p", "--no-watch") as host:    # nothing changes unless asked
        doc = host.status()
        assert set(doc) == {"host", "rows", "last_reload"}
        assert [(r["id"], r["state"]) for r in doc["rows"]] == [("a", "ACTIVE"), ("c", "ACTIVE")]
        assert {"id", "name", "state", "config", "children"} <= set(doc["rows"][0])
        assert drift(doc) == [] and doc["host"]["pid"] == host.proc.pid
        text = host.cli("status")
        assert text.returncode == 0
        assert "a (./plugins/svc.py) ACTIVE" in text.stdout
        assert "running tree = files on disk = last-good record" in text.stdout
        write(user_file(home), "- id: c\n  config: {fail: nope}\n")
        code, outcome = host.reload()
        assert code == 5
        text = host.cli("status").stdout
        assert "reload failed at" in text and "old tree still running" in text
        assert host.status()["last_reload"]["summary"] == outcome["summary"]


def test_reload_reports_each_changed_row(tmp_path):
    home = make_home(tmp_path, ROWS)
    with HostProcess(home, "p", "--no-watch") as host:       # only `dshctl reload` applies edits
        new_row = bundle_dir(home) / "plugins" / "svc.py"
        write(user_file(home), f"- id: a\n  config: {{service: alpha, tag: 2}}\n- id: c\n  disabled: true\n"
                               f"- insert:\n  - id: n\n    name: {new_row}\n")
        assert drift(host.status()) == [
            "the files on disk differ from the running tree (a reload is pending)"]
        result = host.cli("reload")
        assert result.returncode == 0, result.stdout + result.stderr
        lines = result.stdout.splitlines()
        assert any(line.split()[:2] == ["restarted", "a"] or line.split()[:2] == ["updated", "a"] for line in lines)
        assert any(line.split()[:2] == ["stopped", "c"] for line in lines)
        assert any(line.split()[:2] == ["started", "n"] for line in lines)
        assert lines[-1].startswith("reload applied at") and "3 row(s) changed" in lines[-1]
        states = {k: v[1] for k, v in row_map(host.status()["rows"]).items()}
        assert states == {"a": "ACTIVE", "c": "DISABLED", "n": "ACTIVE"}
        again = host.cli("reload", "--format", "json")
        assert again.returncode == 0 and json.loads(again.stdout)["verdict"] == "unchanged"


def test_resume_boots_the_last_good_tree_when_layers_do_not_compose(tmp_path):
    home = make_home(tmp_path, ROWS)
    assert run_for(home).returncode == 0                    # records last-good
    (bundle_dir(home) / "cordis.patch.yml").write_text("- insert: [oops\n")
    broken = run_for(home)
    assert broken.returncode == 1
    assert broken.stderr.startswith("dshctl: error: ") and "base/cordis.patch.yml" in broken.stderr
    assert "Traceback" not in broken.stderr
    resumed = run_for(home, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    notes = [e for e in events(resumed) if e["event"] == "host/resume"]
    assert "do not compose" in notes[0]["message"] and "booting from the last-good record" in notes[0]["message"]
    started = [e["message"] for e in events(resumed) if e["event"] == "row/started"]
    plugins = bundle_dir(home) / "plugins"      # relative names were anchored when recorded
    assert started == [f"a ({plugins / 'svc.py'})", f"c ({plugins / 'boom.py'})"]


def test_resume_falls_back_when_the_current_layers_fail_to_start(tmp_path):
    home = make_home(tmp_path, ROWS)
    assert run_for(home).returncode == 0
    write(user_file(home), "- id: c\n  config: {fail: at boot}\n")
    plain = run_for(home)
    assert any(e["event"] == "row/failed" for e in events(plain))
    resumed = run_for(home, "--resume")
    kinds = [e["event"] for e in events(resumed)]
    assert "host/resume" in kinds
    booted = kinds[kinds.index("host/resume"):kinds.index("host/ready")]
    assert "row/failed" not in booted and booted.count("row/started") == 2
    # the watcher's first look at the (still broken) layers is rolled back: last-good keeps running
    assert "reload/rolled-back" in kinds[kinds.index("host/ready"):]


def test_a_damaged_last_good_record_is_a_clear_error(tmp_path):
    path = tmp_path / "last-good.json"
    path.write_text('{"version": 1, "rows": [')
    with pytest.raises(DshctlError, match="not valid JSON") as info:
        lastgood.load(path)
    assert str(info.value.loc).startswith(str(path) + ":")
    assert lastgood.load(tmp_path / "missing.json") is None


def test_last_good_keeps_js_expressions_unevaluated(tmp_path):
    from dshctl.core.yaml.dialect import load_yaml
    rows = load_yaml("- id: x\n  name: y\n  config: {port: !!js process.env.PORT ?? 1}\n", "f.yml").value
    path = tmp_path / "lg.json"
    digest = lastgood.record(path, "p", rows)
    back = lastgood.load(path)
    assert back.digest == digest == lastgood.rows_digest(back.rows)
    assert back.rows == rows and path.stat().st_mode & 0o777 == 0o600


def test_a_failed_last_good_write_keeps_the_previous_record_whole(tmp_path):
    from dshctl.core.yaml.dialect import load_yaml
    path = tmp_path / "state" / "last-good.json"
    rows = load_yaml("- id: x\n  name: y\n", "f.yml").value
    lastgood.record(path, "p", rows)
    before = path.read_bytes()
    broken = load_yaml("- id: x\n  name: y\n", "f.yml").value
    broken[0]["config"] = {"not": {1, 2}}          # a value JSON cannot hold: the dump fails
    with pytest.raises(TypeError):
        lastgood.record(path, "p", broken)
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == [".gitignore", "last-good.json"]


def test_status_on_a_terminal_is_a_rich_tree(tmp_path):
    home = make_home(tmp_path, ROWS.replace("      name: ./plugins/boom.py\n", "      name: cordis:group\n"
                                            "      group: true\n      config:\n        - id: inner\n"
                                            "          name: ./plugins/boom.py\n"))
    with HostProcess(home, "p", "--no-watch"):
        # `script` gives the command a pseudo-terminal, as a person's shell would
        command = f"{DSHCTL} --home {home} status --profile p"
        result = subprocess.run(["script", "-qc", command, "/dev/null"], capture_output=True, text=True,
                                timeout=30)
        assert "├── " in result.stdout and "└── " in result.stdout
        assert "\x1b[32m" in result.stdout                 # ACTIVE in green
        lines = result.stdout.splitlines()
        inner = next(line for line in lines if "inner (./plugins/boom.py) ACTIVE" in line)
        assert inner.startswith("    └── ")                 # nested under its group


def test_an_explicit_reload_after_the_watcher_says_who_applied_the_edit(tmp_path):
    home = make_home(tmp_path, ROWS)
    with HostProcess(home, "p") as host:
        write(user_file(home), "- id: c\n  disabled: true\n")
        host.wait_for("reload/applied")                          # the watcher got to the save first
        result = host.cli("reload")
        assert result.returncode == 0
        summary = result.stdout.splitlines()[-1]
        assert summary.startswith("reload at") and "nothing changed" in summary
        assert "the file watcher applied these files at" in summary
