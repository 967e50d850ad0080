"""Lifecycle logging of the host: rich lines on a terminal, plain lines when piped, or JSON lines.

Every record is ``(event, message, fields)``; ``event`` is a stable kind such as ``host/started``,
``reload/applied`` or ``plugin/log``. Plugin and runtime log records (Python ``logging``) are routed here
too, so one stream tells the whole story.
"""
from __future__ import annotations

import logging
import sys
import time
from typing import Any, TextIO
from dshctl.core.yaml.jsvalue import json_dumps

STYLES = {"error": "bold red", "warn": "yellow", "info": "green", "debug": "dim"}


class HostLog:
    def __init__(self, fmt: str = "rich", stream: TextIO | None = None):
        self.fmt = fmt
        self.stream = stream or sys.stdout
        self._console = None
        # Called with each event's kind, logged or not (the web app's Status feed recomputes on them).
        self.listeners: list = []
        if fmt == "rich":
            from dshctl.terminal import color_enabled
            from rich.console import Console
            rich_ok = color_enabled(self.stream)
            self._console = Console(file=self.stream, force_terminal=rich_ok, no_color=not rich_ok,
                                    highlight=False, soft_wrap=True)

    def event(self, event: str, message: str, *, level: str = "info", **fields: Any) -> None:
        for listener in list(self.listeners):
            try:
                listener(event)
            except Exception:  # noqa: BLE001 - a listener's bug must not stop the host's log
                pass
        if self.broken:
            return
        try:
            self._write(event, message, level, fields)
        except (BrokenPipeError, ValueError, OSError):
            self.broken = True  # stdout went away (a closed pipe): keep running, stop logging

    broken = False

    def _write(self, event: str, message: str, level: str, fields: dict) -> None:
        if self.fmt == "json":
            record = {"ts": round(time.time(), 3), "level": level, "event": event, "message": message}
            record.update(fields)
            self.stream.write(json_dumps(record, default=str) + "\n")
            self.stream.flush()
            return
        if level == "debug":
            return  # fiber-level detail is for the JSON log
        from rich.markup import escape
        stamp = time.strftime("%H:%M:%S")
        style = STYLES.get(level, "")
        self._console.print(f"[dim]{stamp}[/dim] [{style}]{escape(event):<22}[/{style}] {escape(message)}")
        self.stream.flush()

    def attach_logging(self) -> "logging.Handler":
        """Route the plugin and runtime loggers into this log; returns the handler (to remove it)."""
        handler = _Bridge(self)
        for name in ("dshctl.host.plugins", "dshctl.runtime", "dshctl.loader"):
            logger = logging.getLogger(name)
            logger.addHandler(handler)
            logger.setLevel(logging.DEBUG)
            logger.propagate = False
        return handler

    @staticmethod
    def detach_logging(handler: "logging.Handler") -> None:
        for name in ("dshctl.host.plugins", "dshctl.runtime", "dshctl.loader"):
            logging.getLogger(name).removeHandler(handler)


LEVEL_NAMES = {logging.DEBUG: "debug", logging.INFO: "info", logging.WARNING: "warn", logging.ERROR: "error"}


class _Bridge(logging.Handler):
    def __init__(self, log: HostLog):
        super().__init__(logging.DEBUG)
        self.log = log

    def emit(self, record: logging.LogRecord) -> None:
        try:
            source = getattr(record, "source", None)
            message = record.getMessage()
            if record.exc_info and record.exc_info[1] is not None:
                exc = record.exc_info[1]
                message += f": {type(exc).__name__}: {exc}"
            level = LEVEL_NAMES.get(record.levelno, "error" if record.levelno > 40 else "info")
            if source is not None:
                self.log.event(f"plugin/{source}", message, level=level, source=source)
            else:
                self.log.event(record.name.replace("dshctl.", "") + "/log", message, level=level)
        except Exception:  # noqa: BLE001 - logging must never break the host
            self.handleError(record)
