"""The host composes a reload by resuming the boot-time pass of the bundle layers (composer.py,
core/compose/resume.py). Every reload must equal a fresh one-pass composition of the same files (rows
with positions, warnings, the launcher layer, the digest), whatever the running tree wrote into the
rows it was handed. tests/test_compose_resume.py checks the algorithm on generated layers."""
from __future__ import annotations

from dshctl.core.compose import layers as L
from dshctl.core.compose.composition import compose_layers, launcher_layer
from dshctl.host.composer import HostComposer
from dshctl.host.lastgood import rows_digest

from compose_shape import shape, warnings_of  # tests/compose_shape.py

from .helpers import InProcess, bundle_dir, make_home, run_async, until, user_file, write

BUNDLE_ROWS = """\
    - id: a
      name: ./plugins/svc.py
      config: {service: alpha, tag: one}
    - id: agent-presets
      name: ./plugins/svc.py
      config: {service: presets, roots: [{path: /x, trust: user}]}
    - id: g
      name: cordis:group
      group: true
      config:
        - {id: c1, name: ./plugins/svc.py, config: {service: c1}}
        - {id: c2, name: ./plugins/svc.py, disabled: !!js "false", config: {service: c2}}
    - id: b
      name: ./plugins/svc.py
      config: {service: beta}
"""

EDITS = [
    "- id: a\n  config: {service: alpha, tag: two}\n",
    "- id: c1\n  config: {service: c1, tag: x}\n- id: g\n  insert: [{id: c3, name: ./plugins/svc.py}]\n",
    "- id: b\n  name: ./plugins/other.py\n  disabled: true\n- id: nope\n  config: {}\n- config: {}\n",
    "- id: agent-presets\n  config: {service: presets, extra: 1}\n",
    "- insert:\n    - {id: d, name: ./plugins/svc.py, config: &s {service: delta}}\n"
    "- id: b\n  config: *s\n",                                   # a YAML alias: the one pass
    "- id: a\n  insert: [{id: e, name: x}]\n- id: c2\n  group: true\n",
    "[]\n",
    "- id: a\n  config: {service: alpha, tag: three}\n- insert: [{id: f, name: ./plugins/svc.py}]\n",
]


def one_pass(home, boot_rows_launcher):
    layers = L.bundle_layers(home, "p") + L.user_layers(home, "p", reload=True)
    if boot_rows_launcher.patches:
        layers.append(boot_rows_launcher)
    result = compose_layers(layers, track=False)
    return result.rows, result.warnings


def test_every_reload_equals_a_fresh_one_pass_composition(tmp_path):
    home = make_home(tmp_path, BUNDLE_ROWS, user="- id: b\n  config: {service: beta, tag: boot}\n",
                     home_layer="- id: c2\n  config: {service: c2, tag: home}\n")
    composer = HostComposer(home, "p")
    booted = composer.boot()
    boot_layers = L.bundle_layers(home, "p") + L.user_layers(home, "p")
    reference = compose_layers(boot_layers, track=False).rows
    launcher = launcher_layer(reference)
    assert launcher.patches  # the agent-presets row gets the shipped root, as dsh's launcher does
    expected = compose_layers(boot_layers + [launcher], track=False)
    assert shape(booted.rows) == shape(expected.rows)
    assert booted.digest == rows_digest(booted.rows)
    for number, text in enumerate(EDITS):
        write(user_file(home), text)
        got = composer.compose()
        rows, warnings = one_pass(home, launcher)
        assert shape(got.rows) == shape(rows), text
        assert warnings_of(got.warnings) == warnings_of(warnings), text
        assert got.digest == rows_digest(rows)
        for row in got.rows:  # what a running tree may do to the rows it was handed
            if isinstance(row.get("config"), dict):
                row["config"]["written"] = number


PLUGIN = '''
name = "scribbler"

def apply(ctx, config):
    config["seen"] = config.get("seen", 0) + 1   # writes into the row it was handed
    ctx.provide(config["service"], dict(config))
'''


@run_async()
async def test_a_plugin_writing_into_its_config_never_reaches_the_next_reload(tmp_path):
    """The composition a reload hands out is as fresh as a one-pass composition: a row whose config
    its plugin wrote into is handed a clean config again (and so restarted, as before)."""
    rows = ("    - id: s\n      name: ./plugins/scribbler.py\n      config: {service: scribbled}\n"
            "    - id: a\n      name: ./plugins/svc.py\n      config: {service: alpha}\n")
    home = make_home(tmp_path, rows)
    write(bundle_dir(home) / "plugins" / "scribbler.py", PLUGIN.lstrip())
    run = InProcess(home)
    async with run as host:
        first = host.root.get("scribbled")
        assert first["seen"] == 1
        write(user_file(home), "- id: a\n  config: {service: alpha, tag: 2}\n")
        # the history, not last_reload: a second watch event may follow the save with "unchanged";
        # and the edit's own reload, with s applied again: the plugin file written just before the
        # boot may bring a module reload of s first, between whose dispose and apply s provides nothing
        def edited() -> bool:
            a = next((r for r in host.rows if r["id"] == "a"), None)
            return any(o.verdict == "applied" for o in host.reload_history) and a is not None \
                and dict(a["config"]).get("tag") == 2 and host.root.get("scribbled") is not None
        await until(edited, what="the reload")
        row = next(r for r in host.rows if r["id"] == "s")
        assert dict(row["config"]) == {"service": "scribbled", "seen": 1}  # this tree's own write
        again = host.root.get("scribbled")
        assert again is not first and again["seen"] == 1   # re-applied from a clean config
