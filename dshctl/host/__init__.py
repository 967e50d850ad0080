"""The embedded host: built-in plugins, the runner, config and module hot reload, control socket, last-good.

See docs/host.md.
"""
