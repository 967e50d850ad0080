"""Context-window plugins: ``@dshctl/compaction-basic`` (the ``compaction`` service, auto-compaction
at a share of the model window), ``@dshctl/command-compact`` (``/compact``) and
``@dshctl/tool-result-pruner`` (oversized tool results trimmed in the log's surface).

All three write dsh's events (``compaction/start|summary|end``, ``compaction/prune``) and change what
the model sees only through surface ``replace`` operations, so the history stays derivable from the
log alone. May import ``dshctl.agents.llm`` and ``dshctl.agents.session``; never the host.
"""
