"""The agent layer: the llm service and its adapters, the session log, the agent loop, tools, Code Mode.

Everything here is an ordinary plugin (or a library a plugin uses) on dshctl's runtime, with dsh's event
names and payloads: ``llm/`` (the ``llm`` service and the twin adapters), ``session/`` (the session log
in dsh's on-disk format), ``loop/`` (the ``agents`` service and the turn flow), ``tools/`` (built-in
tools and scheduling), ``codemode/`` (``run_code`` in a worker process). May import the runtime, the
loader, ``core`` and ``dshctl.errors``; imported by the host's plugin table (by name) and the CLI;
never by ``core``, the runtime or the loader.
"""
