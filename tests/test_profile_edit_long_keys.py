"""Edits read a layer with the parser lint uses (issue 28, finding 8): a flow-map key over 1,024
characters (YAML's limit for implicit keys, which js-yaml and so dsh do not apply) made
``profile disable`` exit 3 with ruamel's ParserError while ``lint`` and ``dump`` accepted the file."""
from __future__ import annotations

import pytest

from dshctl.cli.app import main
from dshctl.core.yaml import jsyaml
from dshctl.core.yaml.dialect import load_yaml
from dshctl.core.yaml.roundtrip import EditableYaml
from demo_home import copy_demo_home


def cli(capsys, *args):
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return exc.value.code, out, err


LONG = "k" * 1100


@pytest.mark.parametrize("patch", [
    f"- id: tools\n  config: {{{LONG}: 1}}\n",
    f"- id: tools\n  config:\n    {LONG}: 1\n",
    f"- id: tools\n  config: {{a: [{{{LONG}: x}}], b: 2}}\n",
])
def test_disable_edits_a_layer_with_a_long_key_as_lint_reads_it(capsys, tmp_path, patch):
    home = tmp_path / "home"
    copy_demo_home(home)
    path = home / "profiles/web/cordis.patch.yml"
    path.write_text(patch)
    assert cli(capsys, "lint", str(path))[0] == 0
    code, out, err = cli(capsys, "profile", "disable", "tools", "--home", str(home))
    assert code == 0, err
    value = load_yaml(path.read_text(), path).value
    assert value[0]["disabled"] is True
    assert jsyaml.load(path.read_text()) == [{**jsyaml.load(patch)[0], "disabled": True}]


def test_a_text_the_span_parser_cannot_read_is_a_clear_refusal(tmp_path, monkeypatch):
    """Defence in depth: should the span parser ever refuse what the loader took, the edit says
    so in one line instead of exit 3."""
    from dshctl.core.yaml import roundtrip
    from dshctl.errors import DshctlError

    doc = EditableYaml.from_text("- id: a\n  config: {x: 1}\n", tmp_path / "p.yml")

    def refuse(text, **kw):
        from ruamel.yaml.parser import ParserError
        raise ParserError("while parsing", None, "boom", None)
    monkeypatch.setattr(roundtrip, "parse_spans", refuse)
    with pytest.raises(DshctlError) as err:
        doc.set_key((0,), "disabled", True)
    assert "cannot be edited in place" in err.value.message
