"""The Cordis plugin runtime in asyncio: contexts, fibers, effects, services and events.

See docs/runtime.md for the API the loader and host build on, and the deliberate differences from Cordis.
May import only ``dshctl.errors`` and ``core``; the loader, the host and agents build on it.
"""
from .context import Context
from .effects import EffectHandle
from .errors import (INACTIVE_EFFECT, AggregateError, ConfigIssue, CordisError, RuntimeTimeout,
                     ValidationError, logger)
from .fiber import Fiber, Settling
from .plugin import InlinePlugin, PluginSpec, Service, describe_plugin
from .registry import PluginRuntime, Registry, RuntimeOptions
from .schema import validate_config
from .services import ROOT_REALM, ServiceAccessError
from .states import INACTIVE, State

__all__ = [
    "AggregateError", "ConfigIssue", "Context", "CordisError", "EffectHandle", "Fiber", "INACTIVE",
    "INACTIVE_EFFECT", "InlinePlugin", "PluginRuntime", "PluginSpec", "ROOT_REALM", "Registry",
    "RuntimeOptions", "RuntimeTimeout", "Service", "ServiceAccessError", "Settling", "State", "ValidationError",
    "describe_plugin", "logger", "validate_config",
]
