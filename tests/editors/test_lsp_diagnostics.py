"""`dshctl lsp` publishes exactly what `dshctl lint -f json` prints, driven as an editor drives it: a
real `dshctl lsp` process, JSON-RPC over its stdin/stdout (tests/editors/lsp_client.py), documents
opened, edited (incremental changes) and saved.

Positions: lint's line:col is 1-based in characters; LSP's is 0-based in UTF-16 code units. The test
converts on its own (``str.encode("utf-16-le")``) rather than with the server's helpers.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from corpus_files import CORPUS
from dshctl.lint.plan import discover
from tests.editors.lsp_client import LspClient

DSHCTL = Path(sys.executable).parent / "dshctl"
SEVERITY = {"error": 1, "warning": 2, "info": 3}


def start(root: Path, **kwargs) -> LspClient:
    return LspClient([str(DSHCTL), "lsp"], {}, root, **kwargs)


def utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def expected(finding: dict, text: str) -> tuple:
    """lint's finding in LSP terms: (line, character, severity, code, message, hint)."""
    lines = text.replace("\r\n", "\n").split("\n")
    line = max(finding["line"] - 1, 0)
    column = max(finding["column"] - 1, 0) if finding["line"] else 0
    return (line, utf16(lines[line][:column]) if line < len(lines) else 0, SEVERITY[finding["severity"]],
            finding["rule"], finding["message"], finding["hint"])


def got(diag: dict) -> tuple:
    start_ = diag["range"]["start"]
    return (start_["line"], start_["character"], diag["severity"], diag["code"], diag["message"],
            diag["data"]["hint"])


def lint_json(*args: str, cwd: Path | None = None) -> list[dict]:
    proc = subprocess.run([str(DSHCTL), "--no-cache", "lint", "-f", "json", *args], capture_output=True,
                          text=True, timeout=120, cwd=cwd)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)["findings"]


@pytest.fixture(scope="module")
def corpus_client():
    c = start(CORPUS)
    yield c
    c.close()


def test_every_corpus_file_gets_exactly_lints_findings(corpus_client):
    findings = lint_json(str(CORPUS))
    by_file: dict[str, list[dict]] = {}
    for f in findings:
        by_file.setdefault(os.path.abspath(f["file"]), []).append(f)
    files = [p for p, _ in discover([CORPUS])]
    assert len(files) > 100
    compared = 0
    for path in files:
        raw = path.read_bytes().decode("utf-8")  # a BOM stays in the buffer, as an editor keeps it
        published = corpus_client.open(path, raw, "json" if path.suffix == ".json" else "yaml")
        want = sorted(expected(f, raw) for f in by_file.get(str(path.absolute()), []))
        assert sorted(got(d) for d in published) == want, path
        compared += bool(want)
    assert compared >= 5  # the corpus has findings in several files: the comparison is not vacuous
    assert sum(len(v) for v in by_file.values()) == len(findings)


PATCH = "- id: web\n  disabled: \"yes\"\n- id: api\n  config: {port: 1}\n"


def test_change_and_save_republish_with_config_and_disable_comments(tmp_path):
    path = tmp_path / "profiles" / "web" / "cordis.patch.yml"
    path.parent.mkdir(parents=True)
    path.write_text(PATCH)
    c = start(tmp_path)
    try:
        first = c.open(path)
        assert [(d["code"], d["severity"], d["range"]["start"]) for d in first] == \
            [("schema", 1, {"line": 1, "character": 12})]
        assert c.versions[path.as_uri()] == 1
        # an incremental edit, as editors send them: "yes" -> true
        fixed = c.change(path, 2, [{"range": {"start": {"line": 1, "character": 12},
                                              "end": {"line": 1, "character": 17}}, "text": "true"}])
        assert fixed == [] and c.versions[path.as_uri()] == 2
        # a disable comment the buffer gains is honoured, and one that disables nothing is reported
        text = "- id: web  # dshctl: disable-line=id-colon\n  disabled: \"yes\"  # dshctl: disable-line=schema\n"
        after = c.change(path, 3, [{"text": text}])
        assert [(d["code"], d["severity"], d["range"]["start"]["line"]) for d in after] == \
            [("unused-disable", 2, 0)]
        assert after[0]["message"] == next(f["message"] for f in _lint_text(tmp_path, path, text)
                                           if f["rule"] == "unused-disable")
        # the user's lint config: schema findings as warnings; picked up on the next save
        c.change(path, 4, [{"text": PATCH}])
        (tmp_path / ".dshctl-lint.yaml").write_text("rules:\n  schema: warning\n")
        saved = c.save(path)
        assert [(d["code"], d["severity"]) for d in saved] == [("schema", 2)]
        assert [(f["rule"], f["severity"]) for f in _lint_text(tmp_path, path, PATCH)] == [("schema", "warning")]
    finally:
        c.close()


def _lint_text(cwd: Path, path: Path, text: str) -> list[dict]:
    proc = subprocess.run([str(DSHCTL), "--no-cache", "lint", "-f", "json", "-", "--stdin-filename", str(path)],
                          input=text, capture_output=True, text=True, timeout=60, cwd=cwd)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)["findings"]


def test_positions_are_utf16_code_units(tmp_path):
    path = tmp_path / "cordis.yml"
    text = '- {id: "😀😀", name: x, group: "yes"}\n'
    path.write_text(text)
    c = start(tmp_path)
    try:
        (diag,) = c.open(path)
    finally:
        c.close()
    (finding,) = lint_json(str(path))
    assert finding["column"] == text.index('"yes"') + 1  # lint counts characters
    assert diag["range"]["start"] == {"line": 0, "character": text.index('"yes"') + 2}  # two surrogate pairs
    assert diag["range"]["end"]["character"] - diag["range"]["start"]["character"] == len('"yes"')


def test_a_file_lint_does_not_know_gets_nothing_and_ordinary_package_json_stays_quiet(tmp_path):
    other = tmp_path / "notes.yml"
    other.write_text("- id: a:b\n")
    npm = tmp_path / "package.json"
    npm.write_text('{"name": "x", "version": "1.0.0"}\n')
    c = start(tmp_path)
    try:
        c.notify("textDocument/didOpen", {"textDocument": {"uri": other.as_uri(), "languageId": "yaml",
                                                           "version": 1, "text": other.read_text()}})
        assert c.open(npm, language="json") == []
        assert other.as_uri() not in c.published  # the later document was answered; this one never
    finally:
        c.close()
    assert c.proc.returncode == 0


def test_a_message_that_is_not_json_is_one_line_on_stderr_and_the_server_goes_on(tmp_path):
    path = tmp_path / "cordis.patch.yml"
    path.write_text(PATCH)
    c = start(tmp_path)
    try:
        c.proc.stdin.write(b"Content-Length: 5\r\n\r\n{bad}")
        c.proc.stdin.flush()
        assert [d["code"] for d in c.open(path)] == ["schema"]  # still serving
    finally:
        c.close()
    err = c.proc.stderr.read().decode()
    assert "Traceback" not in err
    assert [ln for ln in err.splitlines() if ln] == [
        "dshctl lsp: error: Unable to handle message: Expecting property name enclosed in double quotes: "
        "line 1 column 2 (char 1)"]
