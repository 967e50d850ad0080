"""The pygls wiring of `dshctl lsp`: documents in, diagnostics, hover, completion, definition and code
actions out. The only module that imports pygls / lsprotocol; the answers come from the modules
beside it, as plain LSP JSON, which the protocol's converter turns into lsprotocol's types.

Positions are UTF-16 code units, the protocol's default: the server offers no other encoding, so a
client that prefers UTF-8 or UTF-32 still gets (and must send) UTF-16.
"""
from __future__ import annotations

import asyncio
import logging
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method
from pygls.uris import to_fs_path

from dshctl import __version__
from dshctl.core.gcpause import freeze_settled_heap
from dshctl.lsp import complete as completion
from dshctl.lsp import diagnostics, hover, navigate
from dshctl.lsp.positions import from_utf16_column, lines_of


class _Utf16Protocol(LanguageServerProtocol):
    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams):
        if params.capabilities.general is not None:
            params.capabilities.general.position_encodings = None  # keep the default, UTF-16
        return (yield from super().lsp_initialize(params))


class DshctlServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("dshctl", __version__, protocol_cls=_Utf16Protocol,
                         text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.published: dict[str, list[dict]] = {}  # uri -> the diagnostics last sent (LSP JSON)
        self.profile: str | None = None  # initializationOptions.profile: the home layer's profile
        self.linter = Linter()

    def structure(self, data, cls):
        return self.protocol._converter.structure(data, cls)

    def relint(self, uri: str) -> None:
        """Lint the document soon: now when no lint of it runs, else once that one is done, with
        whatever the buffer says by then (keystrokes that arrive during a lint share one)."""
        path = _path(uri)
        if path is None or not diagnostics.lints(path):
            return
        if self.linter.mark(uri):
            asyncio.ensure_future(self._lint_until_clean(uri, path))

    async def _lint_until_clean(self, uri: str, path: Path) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self.linter.take(uri):
                doc = self.workspace.text_documents.get(uri)
                if doc is None:
                    return  # closed meanwhile
                version = doc.version
                try:
                    found = await loop.run_in_executor(self.linter.pool, diagnostics.publishable, path, doc.source)
                except Exception:  # a dshctl bug: one line in the editor's log, the server lives on
                    logging.getLogger("dshctl").exception("linting %s failed", path)
                    continue
                if self.workspace.text_documents.get(uri) is not doc:
                    continue  # closed (or closed and opened again) meanwhile: not this text's findings
                self.published[uri] = found
                self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                    uri=uri, version=version, diagnostics=[self.structure(d, types.Diagnostic) for d in found]))
        finally:
            self.linter.done(uri)
        await loop.run_in_executor(self.linter.pool, self.linter.settle_heap)


WARM_UP = '- id: x\n  disabled: "yes"\n'  # a schema finding: jsonschema imported, its validator built


class Linter:
    """Which documents wait for a lint, and the one thread lints run on (the event loop stays free to
    read the next keystroke). After a lint that imported something (the first one, the first finding,
    a plugin's module for hover) the heap is collected once and frozen: the modules, schemas and
    compiled checks then never pass through the cyclic GC again, whose full collections were the
    latency tail (docs/performance.md)."""

    def __init__(self) -> None:
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dshctl-lint")
        self.waiting: set[str] = set()
        self.running: set[str] = set()
        self._modules_frozen = 0

    def mark(self, uri: str) -> bool:
        """Note the document changed; True when no lint of it runs (the caller starts one)."""
        self.waiting.add(uri)
        if uri in self.running:
            return False
        self.running.add(uri)
        return True

    def take(self, uri: str) -> bool:
        if uri in self.waiting:
            self.waiting.discard(uri)
            return True
        return False

    def done(self, uri: str) -> None:
        self.running.discard(uri)
        self.waiting.discard(uri)

    def settle_heap(self) -> None:
        if len(sys.modules) != self._modules_frozen:
            if not self._modules_frozen:  # once: what the first finding of each kind would import
                for name in ("cordis.yml", "cordis.patch.yml"):
                    diagnostics.findings(Path(name), WARM_UP)
            freeze_settled_heap()
            self._modules_frozen = len(sys.modules)


def _path(uri: str) -> Path | None:
    fs = to_fs_path(uri) if uri.startswith("file:") else None
    return Path(fs) if fs else None


def build() -> DshctlServer:
    server = DshctlServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: DshctlServer, params: types.InitializeParams) -> None:
        options = params.initialization_options
        if isinstance(options, dict) and isinstance(options.get("profile"), str):
            ls.profile = options["profile"]

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: DshctlServer, params: types.DidChangeConfigurationParams) -> None:
        settings = params.settings
        section = settings.get("dshctl") if isinstance(settings, dict) else None
        if isinstance(section, dict) and isinstance(section.get("profile"), str):
            ls.profile = section["profile"]

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: DshctlServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.relint(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: DshctlServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.relint(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: DshctlServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.relint(params.text_document.uri)  # a lint config beside it may have changed too

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: DshctlServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.linter.waiting.discard(uri)
        if ls.published.pop(uri, None) is not None:
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def at(ls: DshctlServer, params):
        """(path, text, lines, line, character index) of a text-document position request."""
        uri = params.text_document.uri
        path = _path(uri)
        if path is None:
            return None
        text = ls.workspace.get_text_document(uri).source
        lines = lines_of(text)
        line = params.position.line
        column = from_utf16_column(lines[line] if line < len(lines) else "", params.position.character)
        return path, text, lines, line, column

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def on_hover(ls: DshctlServer, params: types.HoverParams):
        where = at(ls, params)
        if where is None:
            return None
        path, text, lines, line, column = where
        found = ls.published.get(params.text_document.uri, [])
        markdown = hover.hover(path, text, lines, line, column, found, ls.profile)
        if markdown is None:
            return None
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=markdown))

    @server.feature(types.TEXT_DOCUMENT_COMPLETION,
                    types.CompletionOptions(trigger_characters=[":", " ", "-"]))
    def on_completion(ls: DshctlServer, params: types.CompletionParams):
        where = at(ls, params)
        if where is None:
            return None
        items = completion.complete(*where, ls.profile)
        return types.CompletionList(is_incomplete=False,
                                    items=[ls.structure(i, types.CompletionItem) for i in items])

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    def on_definition(ls: DshctlServer, params: types.DefinitionParams):
        where = at(ls, params)
        if where is None:
            return None
        found = navigate.definition(*where, ls.profile)
        return None if found is None else ls.structure(found, types.Location)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))
    def on_code_action(ls: DshctlServer, params: types.CodeActionParams):
        uri = params.text_document.uri
        path = _path(uri)
        if path is None:
            return None
        lines = lines_of(ls.workspace.get_text_document(uri).source)
        sent = [ls.protocol._converter.unstructure(d) for d in params.context.diagnostics]
        actions = navigate.code_actions(uri, lines, sent, yaml=not path.name.endswith(".json"))
        return [ls.structure(a, types.CodeAction) for a in actions]

    return server


class _OneLine(logging.Formatter):
    """pygls logs a traceback for a message it cannot handle (bad JSON, a handler that raised); the
    editor's log gets one line instead, the traceback only with --debug."""

    def format(self, record: logging.LogRecord) -> str:
        text = f"dshctl lsp: {record.levelname.lower()}: {record.getMessage()}"
        if record.exc_info and record.exc_info[1] is not None:
            text += f": {record.exc_info[1]}"
        return text


def _log_to_stderr(debug: bool) -> None:
    handler = logging.StreamHandler(sys.stderr)
    if not debug:
        handler.setFormatter(_OneLine())
    for name in ("pygls", "dshctl"):
        log = logging.getLogger(name)
        log.handlers[:] = [handler]
        log.propagate = False
        log.setLevel(logging.DEBUG if debug else logging.WARNING)


def serve(debug: bool = False) -> None:
    """Speak LSP on stdin/stdout until the client says exit (or closes the pipe)."""
    _log_to_stderr(debug)
    build().start_io()
