"""The ``llm`` service: one request/stream contract (``api.py``) and adapters that know nothing of each
other (``openai.py``: OpenAI-compatible streaming over HTTP; ``script.py``: a deterministic replay).

May import ``dshctl.agents.llm.api``, the runtime and ``core``; never the loop, the session log or the
host.
"""
