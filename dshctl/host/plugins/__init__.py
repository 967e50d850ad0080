"""Built-in plugins of dshctl's host, resolved from the shipped names ``@dshctl/<name>``.

Each module is an ordinary plugin on the runtime API (``apply(ctx, config)`` plus ``name``/``inject``/
``schema``); everything it does to the outside world is an effect, so unloading a row undoes it.
May import the runtime, the loader and ``core``; the host's runner finds them by name, never by
import from below.
"""

# shipped plugin name -> module under dshctl.host.plugins
SHIPPED = {
    "@dshctl/logger": "logger",
    "@dshctl/timer": "timer",
    "@dshctl/http": "http",
    "@dshctl/status-page": "status_page",
    "@dshctl/tools": "tools",
    "@dshctl/agent-presets": "agent_presets",
}
