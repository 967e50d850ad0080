"""Who may talk to the host's web server: the pure rules, one refusal (status, reason) each.

- ``Host`` must name the bound loopback address or a loopback name (``localhost``, ``*.localhost``,
  ``127.0.0.0/8``, ``::1``), with the bound port if it has one: a DNS-rebinding page reaches us under
  its own name and is refused (421) before any route runs.
- A state-changing request (anything but GET/HEAD/OPTIONS) from a browser must come from this origin:
  an ``Origin`` other than ``http://<Host>`` (``null`` included), or ``Sec-Fetch-Site: cross-site``, is
  refused (403). No ``Origin`` at all is a non-browser client (curl, scripts) and is let through.
- A state-changing request must say ``Content-Type: application/json`` (415). A cross-site form or a
  ``text/plain`` fetch cannot set it without a CORS preflight, which this server never grants.
- A state-changing request must carry the host's token in ``X-Dshctl-Token`` (403; token.py): another
  local user reaches loopback as well as we do.
"""
from __future__ import annotations

import ipaddress

from .token import HEADER, matches

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
LOOPBACK_NAMES = frozenset({"localhost"})


def split_host(value: str) -> tuple[str, int | None] | None:
    """``name[:port]`` or ``[v6][:port]`` -> (name, port); None when it is not a well-formed Host."""
    value = value.strip().lower()
    if not value:
        return None
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        name, rest = value[1:end], value[end + 1:]
    else:
        name, _, port_text = value.partition(":")
        rest = ":" + port_text if _ else ""
    if rest and (not rest.startswith(":") or not rest[1:].isdigit() or len(rest) > 6):
        return None
    return name, (int(rest[1:]) if rest else None)


def is_loopback_name(name: str) -> bool:
    name = name.rstrip(".")
    if name in LOOPBACK_NAMES or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def host_refusal(host_header: str | None, bound_port: int) -> str | None:
    if not host_header:
        return "a Host header is required"
    parsed = split_host(host_header)
    if parsed is None:
        return f"malformed Host header {host_header[:80]!r}"
    name, port = parsed
    if not is_loopback_name(name):
        return f"this server answers only to loopback names, not {name[:80]!r} (DNS rebinding?)"
    if port is not None and port != bound_port:
        return f"this server listens on port {bound_port}, not {port}"
    return None


def origin_refusal(method: str, host_header: str, origin: str | None, fetch_site: str | None) -> str | None:
    if method in SAFE_METHODS:
        return None
    if fetch_site is not None and fetch_site.strip().lower() == "cross-site":
        return "cross-site requests may not change anything"
    if origin is None:
        return None            # not a browser: curl, scripts, dshctl itself
    if origin.strip().lower() != "http://" + host_header.strip().lower():
        return f"requests from {origin[:80]!r} may not change anything here (same origin only)"
    return None


def content_type_refusal(method: str, content_type: str | None) -> str | None:
    if method in SAFE_METHODS:
        return None
    media = (content_type or "").split(";", 1)[0].strip().lower()
    if media != "application/json":
        return "state-changing requests must send Content-Type: application/json"
    return None


def refusal(method: str, headers: dict, bound_port: int, token: str | None = None,
            token_hint: str = "") -> tuple[int, str] | None:
    """The first rule ``headers`` (lower-case names) break, as (status, reason); None when allowed.
    ``token`` None: no token is required (a server without one)."""
    method = method.upper()
    host = headers.get("host")
    why = host_refusal(host, bound_port)
    if why:
        return 421, why
    why = origin_refusal(method, host, headers.get("origin"), headers.get("sec-fetch-site"))
    if why:
        return 403, why
    why = content_type_refusal(method, headers.get("content-type"))
    if why:
        return 415, why
    if token is not None and method not in SAFE_METHODS and not matches(token, headers.get(HEADER)):
        return 403, f"missing or wrong X-Dshctl-Token header{token_hint}"
    return None
