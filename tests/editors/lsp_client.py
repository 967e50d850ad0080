"""A minimal LSP client over stdio (JSON-RPC with Content-Length framing), enough to open documents
and collect the diagnostics a language server publishes. Every wait is bounded."""
from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Any


class LspClient:
    def __init__(self, argv: list[str], settings: dict, root: Path, *, init_options: dict | None = None,
                 env: dict | None = None, capabilities: dict | None = None):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env)
        self.settings = settings
        self.inbox: queue.Queue = queue.Queue()
        self.diagnostics: dict[str, list[dict]] = {}
        self.published: dict[str, int] = {}  # uri -> how many publishes arrived
        self._next_id = 0
        self._responses: dict[int, Any] = {}
        self._cond = threading.Condition()
        self.versions: dict[str, int] = {}  # uri -> version of the last publish
        self.history: dict[str, list[tuple[int | None, list[dict]]]] = {}  # uri -> every publish
        threading.Thread(target=self._reader, daemon=True).start()
        self.server_info = self.request("initialize", {
            "processId": None, "rootUri": root.as_uri(), "initializationOptions": init_options,
            "workspaceFolders": [{"uri": root.as_uri(), "name": "w"}],
            "capabilities": capabilities or {"workspace": {"configuration": True},
                                             "textDocument": {"publishDiagnostics": {}}}})
        self.notify("initialized", {})
        self.notify("workspace/didChangeConfiguration", {"settings": settings})

    # -- wire ---------------------------------------------------------------------------------

    def _send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def _reader(self) -> None:
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                line = line.strip()
                if not line:
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            message = json.loads(out.read(length))
            self._handle(message)

    def _handle(self, message: dict) -> None:
        if "id" in message and "method" in message:  # a request from the server
            self._send({"id": message["id"], "result": self._answer(message)})
        elif "id" in message:
            with self._cond:
                self._responses[message["id"]] = message
                self._cond.notify_all()
        elif message.get("method") == "textDocument/publishDiagnostics":
            with self._cond:
                uri = message["params"]["uri"]
                self.diagnostics[uri] = message["params"]["diagnostics"]
                self.published[uri] = self.published.get(uri, 0) + 1
                self.versions[uri] = message["params"].get("version")
                self.history.setdefault(uri, []).append((self.versions[uri], self.diagnostics[uri]))
                self._cond.notify_all()

    def _answer(self, request: dict) -> Any:
        if request["method"] == "workspace/configuration":
            return [self.settings.get(item.get("section", ""), None) for item in request["params"]["items"]]
        return None

    def request(self, method: str, params: dict, timeout: float = 60) -> Any:
        self._next_id += 1
        rid = self._next_id
        self._send({"id": rid, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        with self._cond:
            while rid not in self._responses:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no answer to {method} in {timeout}s")
                self._cond.wait(left)
        return self._responses.pop(rid).get("result")

    def notify(self, method: str, params: dict) -> None:
        self._send({"method": method, "params": params})

    # -- documents ----------------------------------------------------------------------------

    def diagnose(self, path: Path, language: str = "yaml", timeout: float = 60, settle: float = 1.5) -> list[dict]:
        """Open ``path`` and return the diagnostics once the server has stopped publishing."""
        uri = path.as_uri()
        seen = self.published.get(uri, 0)
        self.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": language, "version": 1, "text": path.read_text(encoding="utf-8")}})
        deadline = time.monotonic() + timeout
        with self._cond:
            while self.published.get(uri, 0) <= seen:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no diagnostics for {path} in {timeout}s")
                self._cond.wait(left)
        # the server may publish again once the schema is resolved: wait until it is quiet
        while True:
            count = self.published[uri]
            time.sleep(settle)
            if self.published[uri] == count:
                return self.diagnostics[uri]

    # -- editing, as an editor does it ----------------------------------------------------------

    def wait_published(self, uri: str, seen: int, timeout: float = 30) -> list[dict]:
        """The diagnostics of the first publish for ``uri`` after ``seen`` publishes."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self.published.get(uri, 0) <= seen:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no diagnostics for {uri} in {timeout}s")
                self._cond.wait(left)
            return self.diagnostics[uri]

    def open(self, path: Path, text: str | None = None, language: str = "yaml") -> list[dict]:
        uri = path.as_uri()
        seen = self.published.get(uri, 0)
        self.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": language, "version": 1,
            "text": path.read_text(encoding="utf-8") if text is None else text}})
        return self.wait_published(uri, seen)

    def change(self, path: Path, version: int, changes: list[dict]) -> list[dict]:
        """Send ``changes`` (full text ``{"text": …}`` or ranged) and wait for the new diagnostics."""
        uri = path.as_uri()
        seen = self.published.get(uri, 0)
        self.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                               "contentChanges": changes})
        return self.wait_published(uri, seen)

    def save(self, path: Path) -> list[dict]:
        uri = path.as_uri()
        seen = self.published.get(uri, 0)
        self.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
        return self.wait_published(uri, seen)

    def at(self, method: str, path: Path, line: int, character: int, **extra) -> Any:
        return self.request(method, {"textDocument": {"uri": path.as_uri()},
                                     "position": {"line": line, "character": character}, **extra})

    def close(self) -> None:
        try:
            self.request("shutdown", {}, timeout=10)
            self.notify("exit", {})
            self.proc.wait(timeout=10)
        except (TimeoutError, OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait(timeout=10)
