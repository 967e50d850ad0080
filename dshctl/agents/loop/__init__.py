"""The agent loop (dsh's ReactLoopAgent) and the ``agents`` service, as plugins of the host.

``registry.py`` is ``@dshctl/agents`` (the registry of live agents with a replaceable factory);
``plugin.py`` is ``@dshctl/agent-loop`` (registers the loop as that factory); ``agent.py`` is one agent's
public face (inbox, whenIdle/followup/steer/inject/abort) and ``turn.py`` its turn and step flow.

May import ``dshctl.agents.{llm,session,tools}``, the runtime and ``core``; never the host (its
services arrive through the context).
"""
