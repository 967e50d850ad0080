"""The session log in dsh's own on-disk format: a header line then append-only events, ``.jsonl.zstd``
(one checksummed frame for the header, one per durable batch) or raw ``.jsonl``; validation on append,
torn-tail repair, metadata-only listing, and the history the model sees derived from the log alone.

May import ``dshctl.agents.llm.api`` (message shapes), ``core`` and ``dshctl.errors``; never the loop or
the host.
"""
