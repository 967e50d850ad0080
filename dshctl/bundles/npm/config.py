"""Registry settings from ``pnpm_config_*``/``npm_config_*`` variables and ``.npmrc`` files.

Sources, first wins per key, as pnpm 11 ranks them: ``pnpm_config_*`` (``pnpm_config_registry``,
…), then ``<profile>/.npmrc``, ``$DSH_HOME/.npmrc``, ``~/.npmrc``, then ``npm_config_*`` (which
pnpm 11 ignores; dshctl reads it last). Keys read: ``registry``,
``@scope:registry``, ``//host/path/:_authToken``, ``fetch-timeout`` (ms), ``fetch-retries``,
``prefer-offline`` and ``prefer-online`` (the packument cache's policy, cache.py).
Tokens are never printed: ``Config`` does not show them in its repr, and nothing writes them.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import urlsplit

from dshctl.records import field, record

DEFAULT_REGISTRY = "https://registry.npmjs.org/"
_ENV_REF = re.compile(r"\$\{([^}]+)\}")


@record
class Config:
    registry: str = DEFAULT_REGISTRY
    scopes: dict[str, str] = field(default_factory=dict)  # "@scope" -> registry URL
    tokens: dict[str, str] = field(default_factory=dict, repr=False)  # "//host/path/" -> token
    timeout: float = 30.0  # seconds, per request without progress
    deadline: float = 120.0  # seconds for a whole request, retries included (fetch-deadline)
    retries: int = 2
    cache_policy: str = "default"  # cache.POLICIES: from prefer-offline / prefer-online

    def registry_for(self, name: str) -> str:
        if name.startswith("@"):
            scope = name.split("/", 1)[0]
            if scope in self.scopes:
                return self.scopes[scope]
        return self.registry

    def token_for(self, url: str) -> str | None:
        """npm's rule: the longest ``//host/path/`` prefix of the URL that has a token."""
        parts = urlsplit(url)
        key = f"//{parts.netloc}{parts.path}"
        best = None
        for prefix, token in self.tokens.items():
            if key.startswith(prefix.rstrip("/") + "/") or key == prefix.rstrip("/"):
                if best is None or len(prefix) > len(best[0]):
                    best = (prefix, token)
        return best[1] if best else None


def _slash(url: str) -> str:
    return url if url.endswith("/") else url + "/"


def parse_npmrc(text: str) -> dict[str, str]:
    """``key=value`` lines; ``;``/``#`` comments; ``${VAR}`` expands from the environment."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in ";#" or "=" not in line:
            continue
        key, value = line.split("=", 1)
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        value = _ENV_REF.sub(lambda m: os.environ.get(m.group(1), ""), value)
        out.setdefault(key.strip(), value)
    return out


def _env_settings(prefix: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in os.environ.items():
        low = key.lower()
        if low.startswith(prefix) and value:
            out.setdefault(low[len(prefix):].replace("_", "-"), value)
    return out


def load(profile_dir: Path | None, home: Path | None) -> Config:
    # pnpm 11 (which runs dsh's plugin command) reads pnpm_config_* and the .npmrc files and
    # ignores npm_config_*; dshctl keeps reading npm_config_* for its existing users, last, so a
    # setting pnpm sees always wins over one it does not.
    layers = [_env_settings("pnpm_config_")]
    for base in (profile_dir, home, Path.home()):
        if base is None:
            continue
        try:
            layers.append(parse_npmrc((Path(base) / ".npmrc").read_text("utf-8")))
        except (OSError, UnicodeDecodeError):
            continue
    layers.append(_env_settings("npm_config_"))
    merged: dict[str, str] = {}
    for layer in layers:
        for key, value in layer.items():
            merged.setdefault(key, value)
    cfg = Config()
    if merged.get("registry"):
        cfg.registry = _slash(merged["registry"])
    for key, value in merged.items():
        if key.startswith("@") and key.endswith(":registry") and value:
            cfg.scopes[key[: -len(":registry")]] = _slash(value)
        elif key.startswith("//") and key.endswith(":_authToken") and value:
            cfg.tokens[key[: -len(":_authToken")]] = value
    try:
        cfg.timeout = max(0.05, float(merged.get("fetch-timeout", "30000")) / 1000)
    except ValueError:
        pass
    try:  # dshctl's own key: npm has no total deadline (a trickling registry never times out)
        cfg.deadline = max(0.05, float(merged.get("fetch-deadline", "120000")) / 1000)
    except ValueError:
        pass
    try:
        cfg.retries = max(0, int(merged.get("fetch-retries", "2")))
    except ValueError:
        pass
    # npm: prefer-offline wins when both are set
    if _true(merged.get("prefer-offline")):
        cfg.cache_policy = "prefer-offline"
    elif _true(merged.get("prefer-online")):
        cfg.cache_policy = "prefer-online"
    return cfg


def _true(value: str | None) -> bool:
    return (value or "").strip().lower() in ("true", "1", "yes")
