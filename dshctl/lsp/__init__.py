"""`dshctl lsp`: a language server that publishes exactly `dshctl lint`'s findings, and knows the layers.

Lives here: what the server computes for one document, without the protocol (positions in UTF-16
code units, diagnostics from the lint pipeline, the YAML context under the cursor, the profile a file
belongs to, hover, completion, definition and code actions), and the pygls wiring (server.py, the
only module that imports pygls/lsprotocol). May import ``dshctl.core`` and ``dshctl.lint``; imported
only by ``dshctl.cli.lsp_cmd``, lazily, so that pygls stays off every other command's start-up.
"""
