"""The host's web server and browser app: aiohttp on the host's own event loop, loopback only.

``messages`` (what a route handler gets and returns), ``guard`` (the pure request rules: Host, Origin,
content type, sizes), ``server`` (aiohttp glue: limits, connection cap, Server-Sent Events; the only
module importing aiohttp) and ``app`` (the browser app's routes; ``static/`` holds its page). May import
``dshctl.host`` siblings, the runtime and ``core``; plugins reach it through ``@dshctl/http``.
"""
