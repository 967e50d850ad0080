"""Typing into a large document: keystrokes that arrive while a lint runs share the next one, the last
publish is the last text's findings (as `dshctl lint -` prints them), and a document closed meanwhile
gets no stale findings after its empty publish. Through the protocol on a real `dshctl lsp`."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from tests.editors.lsp_client import LspClient

DSHCTL = Path(sys.executable).parent / "dshctl"
ROWS = 400


def document() -> str:
    return "".join(f"- id: row-{n}\n  name: plugin-{n % 5}\n  disabled: true\n" for n in range(ROWS))


def lint_json(path: Path, text: str) -> list[tuple]:
    proc = subprocess.run([str(DSHCTL), "lint", "-f", "json", "-", "--stdin-filename", str(path)], input=text,
                          capture_output=True, text=True, timeout=60)
    return [(f["line"], f["column"], f["rule"], f["message"]) for f in json.loads(proc.stdout)["findings"]]


def shown(diags: list[dict]) -> list[tuple]:
    return [(d["data"]["line"], d["data"]["column"], d["code"], d["message"]) for d in diags]


def wait_version(client: LspClient, uri: str, version: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    with client._cond:
        while client.versions.get(uri) != version:
            assert time.monotonic() < deadline, f"no publish of version {version}"
            client._cond.wait(0.5)


def test_a_burst_of_keystrokes_ends_with_the_last_texts_findings(tmp_path):
    path = tmp_path / "cordis.yml"
    text = document()
    path.write_text(text)
    client = LspClient([str(DSHCTL), "lsp"], {}, tmp_path)
    try:
        client.open(path)
        lines = text.split("\n")
        uri = path.as_uri()
        before = len(client.history[uri])
        for n in range(12):  # row n's `disabled: true` becomes `disabled: "yes"`, one keystroke each
            line = 3 * n * 7 + 2
            client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": n + 2}, "contentChanges": [
                {"range": {"start": {"line": line, "character": 12}, "end": {"line": line, "character": 16}},
                 "text": '"yes"'}]})
            lines[line] = '  disabled: "yes"'
        wait_version(client, uri, 13)
        final = "\n".join(lines)
        expected = lint_json(path, final)
        assert len(expected) == 12 and shown(client.diagnostics[uri]) == expected
        versions = [v for v, _ in client.history[uri][before:]]
        assert versions == sorted(set(versions)) and len(versions) <= 12  # in order, none twice
    finally:
        client.close()


def test_a_document_closed_while_it_is_linted_gets_no_findings_afterwards(tmp_path):
    path = tmp_path / "cordis.yml"
    text = document().replace("disabled: true", 'disabled: "yes"', 1)
    path.write_text(text)
    client = LspClient([str(DSHCTL), "lsp"], {}, tmp_path)
    try:
        client.open(path)
        uri = path.as_uri()
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                                 "contentChanges": [{"text": text + "- id: 3\n"}]})
        client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}})
        time.sleep(1.0)  # room for a lint that was under way to (wrongly) publish
        assert client.history[uri][-1][1] == []
    finally:
        client.close()
