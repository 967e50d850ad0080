"""Config hot reload in process: real files, real watchfiles, the real loader and runtime."""
from __future__ import annotations

import pytest

from dshctl.errors import DshctlError
from dshctl.host import lastgood
from dshctl.host.composer import HostComposer

from .helpers import InProcess, make_home, row_map, run_async, until, user_file, write

ROWS = """\
    - id: a
      name: ./plugins/svc.py
      config: {service: alpha, tag: one}
    - id: b
      name: ./plugins/svc.py
      config: {service: beta}
"""


def _state(host):
    return row_map(host.loader.tree_snapshot())


@run_async()
async def test_valid_edit_applies_and_records_last_good(tmp_path):
    home = make_home(tmp_path, ROWS)
    run = InProcess(home)
    async with run as host:
        before = host.root.get("beta")
        write(user_file(home), "- id: a\n  config: {service: alpha, tag: two}\n")
        await until(lambda: host.root.get("alpha") is not None and host.root.get("alpha").config["tag"] == "two",
                    what="the edit to apply")
        assert host.root.get("beta") is before          # the untouched row did not restart
        await until(lambda: not host.reloader.lock.locked() and not host.reloader.dirty, what="quiet")
        assert host.last_reload.verdict in ("applied", "unchanged")   # a second event may follow
        record = lastgood.load(host.last_good_path)
        assert record.digest == host.digest
        assert [r["id"] for r in record.rows] == ["a", "b"]


@run_async()
async def test_parse_error_keeps_old_tree_and_names_file_line_col(tmp_path):
    home = make_home(tmp_path, ROWS, user="- id: a\n  config: {service: alpha, tag: one}\n")
    run = InProcess(home)
    async with run as host:
        old = _state(host)
        digest = host.digest
        write(user_file(home), "- id: a\n  config: {service: alpha\n")
        await until(lambda: host.last_reload is not None and host.last_reload.verdict == "rejected",
                    what="the rejection")
        assert _state(host) == old and host.digest == digest
        err = host.last_reload.errors[0]
        assert err["loc"].startswith(str(user_file(home)) + ":") and err["loc"].count(":") == 2
        assert run.events("reload/failed")[-1]["message"] == f"config reload at {user_file(home)} failed"
        # the next valid edit applies normally
        write(user_file(home), "- id: a\n  config: {service: alpha, tag: fixed}\n")
        # a second watch event for the same save may follow with "unchanged" at once: so wait for the
        # tree, then read the verdicts that count (the history leaves out the watcher's no-op passes)
        await until(lambda: host.root.get("alpha") is not None and host.root.get("alpha").config["tag"] == "fixed",
                    what="recovery")
        assert [o.verdict for o in host.reload_history][-2:] == ["rejected", "applied"]


@run_async()
async def test_deleting_and_recreating_the_user_layer(tmp_path):
    home = make_home(tmp_path, ROWS, user="- id: b\n  disabled: true\n")
    run = InProcess(home)
    async with run as host:
        assert host.root.get("beta") is None
        user_file(home).unlink()
        await until(lambda: host.root.get("beta") is not None, what="bundle defaults to return")
        write(user_file(home), "- id: b\n  disabled: true\n")
        await until(lambda: host.root.get("beta") is None, what="the re-created layer to apply")


@run_async()
async def test_home_layer_whose_directory_appears_later(tmp_path):
    home = make_home(tmp_path, ROWS)
    run = InProcess(home)
    async with run as host:
        # the profile layer's directory exists; the home layer's file does not: create it now
        write(home / "cordis.patch.yml", "- id: a\n  disabled: true\n")
        await until(lambda: host.root.get("alpha") is None, what="the new home layer")


@run_async()
async def test_empty_file_is_a_failure_and_brackets_remove_the_layer(tmp_path):
    home = make_home(tmp_path, ROWS, user="- id: b\n  disabled: true\n")
    run = InProcess(home)
    async with run as host:
        write(user_file(home), "# nothing here\n")
        await until(lambda: host.last_reload is not None and host.last_reload.verdict == "rejected",
                    what="the empty file to be rejected")
        assert host.root.get("beta") is None
        assert "top-level YAML array" in host.last_reload.errors[0]["message"]
        write(user_file(home), "[]\n")
        await until(lambda: host.root.get("beta") is not None, what="[] to remove the layer")


@run_async()
async def test_bundle_membership_change_asks_for_a_restart(tmp_path):
    home = make_home(tmp_path, ROWS)
    run = InProcess(home)
    async with run as host:
        manifest = home / "profiles" / "p" / "package.json"
        write(manifest, manifest.read_text().replace('["@t/base"]', '["@t/base", "@t/other"]'))
        write(user_file(home), "- id: a\n  disabled: true\n")
        await until(lambda: host.last_reload is not None and host.last_reload.verdict == "rejected",
                    what="the restart request")
        assert "bundle membership changed (+@t/other)" in host.last_reload.errors[0]["message"]
        assert host.root.get("alpha") is not None  # nothing half-applied
        assert any("restart" in line for line in host.status()["host"]["drift"])


@run_async()
async def test_duplicate_id_is_rejected_before_any_change(tmp_path):
    home = make_home(tmp_path, ROWS)
    run = InProcess(home)
    async with run as host:
        old = _state(host)
        write(user_file(home), "- id: a\n  config: {service: alpha, tag: x}\n"
                               "- insert:\n  - id: b\n    name: ./plugins/svc.py\n")
        await until(lambda: host.last_reload is not None and not host.last_reload.ok, what="rejection")
        assert host.last_reload.verdict == "rejected"
        assert "duplicate loader entry id: b" in host.last_reload.errors[0]["message"]
        assert _state(host) == old
        assert host.root.get("alpha").config["tag"] == "one"


@run_async()
async def test_failure_event_is_broadcast_and_listener_errors_only_logged(tmp_path):
    home = make_home(tmp_path, ROWS)
    run = InProcess(home)
    async with run as host:
        heard = []
        host.root.on("hmr/config-update-failed", lambda f, e: heard.append((f, str(e))))

        def broken(f, e):
            raise RuntimeError("listener broke")
        host.root.on("hmr/config-update-failed", broken)
        write(user_file(home), "- id: a\n  config: [not, a, map\n")
        await until(lambda: heard, what="the broadcast")
        assert heard[0][0] == str(user_file(home))
        await until(lambda: run.events("reload/listener-failed"), what="the listener failure log")
        # the watcher survived: a valid edit still applies
        write(user_file(home), "- id: a\n  config: {service: alpha, tag: after}\n")
        await until(lambda: any(o.verdict == "applied" for o in host.reload_history), what="the next edit")
        assert host.root.get("alpha").config["tag"] == "after"


def test_profile_layer_is_overlay_at_boot_and_patches_on_a_live_reload(tmp_path):
    """dsh-config.md §6 `<label>`: the same bad profile layer is reported as `overlay` when the host
    boots and as `patches` when a live reload re-reads it; the home layer is `patches` both times."""
    home = make_home(tmp_path, ROWS, user="a: 1\n")
    profile_layer = user_file(home)
    with pytest.raises(DshctlError) as info:
        HostComposer(home, "p").boot()           # what `host run` does first
    assert info.value.message == (f"overlay {profile_layer} must be a top-level YAML array of loader "
                                  "patch entries")

    @run_async()
    async def live():
        write(profile_layer, "[]\n")
        run = InProcess(home)
        async with run as host:
            write(profile_layer, "a: 1\n")
            await until(lambda: host.last_reload is not None and host.last_reload.verdict == "rejected",
                        what="the rejected reload")
            assert host.last_reload.errors[0]["message"] == (
                f"patches {profile_layer} must be a top-level YAML array of loader patch entries")
            write(profile_layer, "- id: a\n  config: [broken\n")
            await until(lambda: "failed to parse" in host.last_reload.errors[0]["message"],
                        what="the parse error")
            assert host.last_reload.errors[0]["message"].startswith(f"failed to parse patches {profile_layer}: ")
            assert [e["message"] for e in run.events("reload/error")][0].endswith(
                f"patches {profile_layer} must be a top-level YAML array of loader patch entries")
    live()
