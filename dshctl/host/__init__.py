"""The embedded host: built-in plugins, the runner, config and module hot reload, control socket, last-good.

See docs/host.md. May import the loader, the runtime, ``core`` and ``dshctl.errors``/``terminal``;
imported only by ``dshctl.cli`` and ``dshctl.fleet``.
"""
