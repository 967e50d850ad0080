"""Code Mode: ``run_code`` runs model-written Python in a fresh, killable worker process per run.

``protocol`` (the fd-3 wire vocabulary and hostile-frame rebuild, shared with the worker), ``child`` (the
worker's own runtime, run as a script), ``worker`` (spawn, kill the group, sweep), ``ledger`` (log
budget), ``runtime`` (one run, host side), ``sdk`` (the Python SDK from tool schemas), ``bridge``
(sub-calls through the tool pipeline), ``tool`` (the ``run_code`` definition), ``plugin``
(``@dshctl/code-mode``). docs/codemode.md has the design and the threat model.

May import ``dshctl.agents.tools`` (the pipeline, tool definitions), the runtime and ``core``; never the
host (the tools registry is reached as the ``tools`` service). ``child.py`` and ``protocol.py`` import
only the standard library: the worker runs them with ``-I -S``.
"""
