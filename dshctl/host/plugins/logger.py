"""``@dshctl/logger``: the ``logger`` service plugins write through.

Messages go to the Python logger ``dshctl.host.plugins`` (the runner renders them rich or as JSON
lines), tagged with the calling plugin's name, and below ``level`` they are dropped.
"""
from __future__ import annotations

import logging

name = "@dshctl/logger"
schema = {
    "type": "object",
    "default": {},
    "properties": {"level": {"enum": ["debug", "info", "warn", "error"], "default": "info"}},
}

LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING, "error": logging.ERROR}
SINK = logging.getLogger("dshctl.host.plugins")


class PluginLogger:
    """What ``ctx.logger`` returns: ``debug/info/warn/error(message)``; ``tag`` names the source."""

    def __init__(self, level: str, tag: str = "logger"):
        self.level = LEVELS[level]
        self.tag = tag
        self.lines: list[tuple[str, str]] = []  # the last messages, for the status page and tests

    def tagged(self, tag: str) -> "PluginLogger":
        child = PluginLogger.__new__(PluginLogger)
        child.level, child.tag, child.lines = self.level, tag, self.lines
        return child

    def _log(self, level: int, message: str) -> None:
        if level < self.level:
            return
        self.lines.append((logging.getLevelName(level).lower(), str(message)))
        del self.lines[:-100]
        SINK.log(level, "%s", message, extra={"source": self.tag})

    def debug(self, message: str) -> None:
        self._log(logging.DEBUG, message)

    def info(self, message: str) -> None:
        self._log(logging.INFO, message)

    def warn(self, message: str) -> None:
        self._log(logging.WARNING, message)

    warning = warn

    def error(self, message: str) -> None:
        self._log(logging.ERROR, message)


def apply(ctx, config):
    ctx.provide("logger", PluginLogger(config["level"]))


def log_for(ctx, tag: str):
    """The logger service tagged for ``tag``, or None where no logger row runs."""
    service = ctx.get("logger")
    return service.tagged(tag) if isinstance(service, PluginLogger) else service
